from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import QuerySet

from apps.core.errors import Conflict
from apps.core.viewsets import (
    ADMIN_ROLES,
    PlatformModelViewSet,
    TenantScopedViewSet,
    request_user,
)
from apps.jobs.models import TERMINAL, Job
from apps.tenancy.api.serializers import MembershipSerializer, ProjectSerializer, TenantSerializer
from apps.tenancy.models import Membership, Project, Tenant
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
                    f"Tenant '{instance.slug}' still has {unfinished} unfinished "
                    f"job{'s' if unfinished != 1 else ''} (training, notebooks or services). "
                    "Cancel them, or wait for them to end, before deleting the tenant."
                )
            super().perform_destroy(instance)


class MembershipViewSet(TenantScopedViewSet[Membership]):
    """Members and their roles; tenant admins manage them."""

    serializer_class = MembershipSerializer
    queryset = Membership.objects.all()
    write_roles = ADMIN_ROLES

    def scoped_queryset(self, queryset: QuerySet[Membership]) -> QuerySet[Membership]:
        return queryset.select_related("user")


class ProjectViewSet(TenantScopedViewSet[Project]):
    serializer_class = ProjectSerializer
    queryset = Project.objects.all()

    def scoped_queryset(self, queryset: QuerySet[Project]) -> QuerySet[Project]:
        return queryset.select_related("created_by")

    def save_kwargs(self) -> dict[str, Any]:
        return {**super().save_kwargs(), "created_by": request_user(self.request)}
