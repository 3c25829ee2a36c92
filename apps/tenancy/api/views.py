from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.utils.translation import gettext, ngettext
from rest_framework import exceptions, serializers
from rest_framework.serializers import BaseSerializer

from apps.accounting.models import UsageSegment
from apps.core.errors import Conflict
from apps.core.viewsets import (
    ADMIN_ROLES,
    PlatformModelViewSet,
    TenantScopedViewSet,
    request_user,
)
from apps.jobs.models import TERMINAL, Job
from apps.runs.models import Run
from apps.tenancy.api.serializers import (
    PROJECT_NAME_TAKEN,
    MembershipSerializer,
    ProjectSerializer,
    TenantSerializer,
    already_member,
)
from apps.tenancy.models import Membership, Project, Role, Tenant
from apps.tenancy.selectors import visible_tenants


class TenantViewSet(PlatformModelViewSet[Tenant]):
    """Tenants the caller belongs to (platform admins: all). Platform admins create and edit."""

    serializer_class = TenantSerializer
    lookup_field = "slug"
    queryset = Tenant.objects.all()

    def get_queryset(self) -> QuerySet[Tenant]:
        if getattr(self, "swagger_fake_view", False):
            return Tenant.objects.none()
        return visible_tenants(request_user(self.request))

    def audit_tenant(self, instance: Tenant) -> Tenant | None:
        return instance

    def perform_destroy(self, instance: Tenant) -> None:
        """Deleting a tenant deletes its jobs, quotas, runs and usage records with it, so it
        is refused while any of its work is unfinished: the rows would go while the pods
        still held GPUs. Locking the row first makes a job submitted meanwhile either
        counted here or refused by its foreign key."""
        with transaction.atomic():
            Tenant.objects.select_for_update().filter(pk=instance.pk).first()
            unfinished = Job.objects.filter(tenant=instance).exclude(state__in=TERMINAL).count()
            if unfinished:
                raise Conflict(
                    ngettext(
                        "Tenant '{tenant}' still has {count} unfinished job (training, "
                        "notebooks or services). Cancel it, or wait for it to end, before "
                        "deleting the tenant.",
                        "Tenant '{tenant}' still has {count} unfinished jobs (training, "
                        "notebooks or services). Cancel them, or wait for them to end, before "
                        "deleting the tenant.",
                        unfinished,
                    ).format(tenant=instance.slug, count=unfinished)
                )
            super().perform_destroy(instance)


def _violates(exc: IntegrityError, constraint: str) -> bool:
    """Whether ``exc`` is the unique constraint ``constraint`` (named in the message on
    PostgreSQL and SQLite alike)."""
    return constraint in str(exc)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


class MembershipViewSet(TenantScopedViewSet[Membership]):
    """Members and their roles; tenant admins manage them. A tenant always keeps one tenant
    admin: removing or demoting the last one is refused (409)."""

    serializer_class = MembershipSerializer
    queryset = Membership.objects.all()
    write_roles = ADMIN_ROLES

    def scoped_queryset(self, queryset: QuerySet[Membership]) -> QuerySet[Membership]:
        return queryset.select_related("user")

    def perform_create(self, serializer: BaseSerializer[Membership]) -> None:
        # The serializer's check and the insert are not atomic: two clicks on Add both pass
        # the check, and the unique constraint refuses the second insert.
        try:
            super().perform_create(serializer)
        except IntegrityError as exc:
            if not _violates(exc, "uniq_membership"):
                raise
            user = serializer.validated_data["user"]
            raise serializers.ValidationError(
                {"username": [already_member(user, self.tenant)]}
            ) from exc

    def _keep_an_admin(self, membership: Membership, new_role: str | None) -> None:
        """Refuse (409) to leave the tenant without a tenant admin: ``new_role`` None means
        the membership goes. In a transaction: the tenant's admin memberships are locked, so
        two admins demoting each other at once cannot both succeed."""
        admins = list(
            Membership.objects.select_for_update()
            .filter(tenant=self.tenant, role=Role.TENANT_ADMIN)
            .values_list("pk", flat=True)
        )
        if membership.pk not in admins or new_role == Role.TENANT_ADMIN or len(admins) > 1:
            return
        if new_role is None:
            refusal = gettext(
                "{user} is the only tenant admin of {tenant} and cannot be removed: make "
                "another member tenant admin first."
            )
        else:
            refusal = gettext(
                "{user} is the only tenant admin of {tenant} and cannot be made {role}: make "
                "another member tenant admin first."
            )
        raise Conflict(
            refusal.format(user=membership.user.username, tenant=self.tenant.slug, role=new_role)
        )

    def perform_update(self, serializer: BaseSerializer[Membership]) -> None:
        assert isinstance(serializer.instance, Membership)
        with transaction.atomic():
            self._keep_an_admin(serializer.instance, serializer.validated_data.get("role"))
            super().perform_update(serializer)

    def perform_destroy(self, instance: Membership) -> None:
        with transaction.atomic():
            self._keep_an_admin(instance, None)
            super().perform_destroy(instance)


class ProjectViewSet(TenantScopedViewSet[Project]):
    """Projects label jobs for cost reporting. Members create them; tenant admins and the
    project's creator rename and delete them. A project with jobs, runs or usage cannot be
    deleted (409): its history stays attributed to it."""

    serializer_class = ProjectSerializer
    queryset = Project.objects.all()

    def scoped_queryset(self, queryset: QuerySet[Project]) -> QuerySet[Project]:
        return queryset.select_related("created_by")

    def save_kwargs(self) -> dict[str, Any]:
        return {**super().save_kwargs(), "created_by": request_user(self.request)}

    def check_object_permissions(self, request: Any, obj: Any) -> None:
        super().check_object_permissions(request, obj)
        if request.method in ("GET", "HEAD", "OPTIONS") or self.role == Role.TENANT_ADMIN:
            return
        if obj.created_by_id != request_user(request).pk:
            raise exceptions.PermissionDenied(
                gettext("Only a tenant admin or the project's creator can change or delete it.")
            )

    def _name_taken(self, exc: IntegrityError) -> serializers.ValidationError:
        if not _violates(exc, "uniq_project_name"):
            raise exc
        return serializers.ValidationError({"name": [PROJECT_NAME_TAKEN]})

    def perform_create(self, serializer: BaseSerializer[Project]) -> None:
        # validate_name checks, then the insert: a double click passes the check twice.
        try:
            super().perform_create(serializer)
        except IntegrityError as exc:
            raise self._name_taken(exc) from exc

    def perform_update(self, serializer: BaseSerializer[Project]) -> None:
        try:
            super().perform_update(serializer)
        except IntegrityError as exc:
            raise self._name_taken(exc) from exc

    def perform_destroy(self, instance: Project) -> None:
        """Jobs, runs and usage segments would lose their project (set null) and their cost
        would move to "(none)". The row lock makes a job submitted meanwhile either counted
        here or refused by its foreign key."""
        with transaction.atomic():
            Project.objects.select_for_update().filter(pk=instance.pk).first()
            uses = [
                (Job.objects.filter(project=instance).count(), "job"),
                (Run.objects.filter(project=instance).count(), "run"),
                (UsageSegment.objects.filter(project=instance).count(), "usage segment"),
            ]
            if any(n for n, _ in uses):
                what = ", ".join(_plural(n, word) for n, word in uses if n)
                raise Conflict(
                    f"Project '{instance.name}' has {what}: deleting it would move their cost "
                    "history to no project. Rename it instead."
                )
            super().perform_destroy(instance)
