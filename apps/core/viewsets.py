"""Base viewsets: tenant scoping, role checks and audit, enforced in one place.

Every tenant-owned API object is served by a subclass of :class:`TenantScopedViewSet`. Its
queryset is always filtered by the tenant named in the URL, after checking the caller may see
that tenant; a subclass cannot override ``get_queryset`` (checked when the class is created),
so a forgotten filter cannot leak another tenant's rows. Another tenant's object is a 404.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, ClassVar, Generic, TypeVar

from django.db import models, transaction
from django.db.models import ProtectedError, QuerySet, RestrictedError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext
from rest_framework import exceptions, viewsets
from rest_framework.permissions import SAFE_METHODS
from rest_framework.request import Request
from rest_framework.serializers import BaseSerializer

from apps.accounts.models import User
from apps.audit import services as audit
from apps.audit.models import AuditAction
from apps.core.errors import Conflict
from apps.tenancy.models import ADMIN_ROLES, WRITE_ROLES, Role, Tenant
from apps.tenancy.selectors import role_in, visible_tenants

M = TypeVar("M", bound=models.Model)


def request_user(request: Request) -> User:
    """The authenticated user (views run behind IsAuthenticated)."""
    user = request.user
    if not isinstance(user, User):
        raise exceptions.NotAuthenticated()
    return user


class AuditedModelViewSet(viewsets.ModelViewSet[M], Generic[M]):
    """Writes go through one transaction that also appends an audit entry (before/after)."""

    def audit_tenant(self, instance: M) -> Tenant | None:
        return None

    def save_kwargs(self) -> dict[str, Any]:
        """Extra attributes set on create (e.g. the tenant from the URL)."""
        return {}

    def perform_create(self, serializer: BaseSerializer[M]) -> None:
        with transaction.atomic():
            instance = serializer.save(**self.save_kwargs())
            audit.record(
                actor=request_user(self.request),
                action=AuditAction.CREATE,
                instance=instance,
                tenant=self.audit_tenant(instance),
                before=None,
                after=audit.snapshot(instance),
            )

    def perform_update(self, serializer: BaseSerializer[M]) -> None:
        with transaction.atomic():
            assert serializer.instance is not None
            before = audit.snapshot(serializer.instance)
            instance = serializer.save()
            audit.record(
                actor=request_user(self.request),
                action=AuditAction.UPDATE,
                instance=instance,
                tenant=self.audit_tenant(instance),
                before=before,
                after=audit.snapshot(instance),
            )

    def perform_destroy(self, instance: M) -> None:
        with transaction.atomic():
            before = audit.snapshot(instance)
            tenant = self.audit_tenant(instance)
            if tenant == instance:
                tenant = None  # the entry cannot point at the row it deletes; the name stays
            pk = instance.pk
            try:
                instance.delete()
            except (ProtectedError, RestrictedError) as exc:
                raise Conflict(_still_used(instance, exc)) from exc
            instance.pk = pk  # keep the id for the audit row
            audit.record(
                actor=request_user(self.request),
                action=AuditAction.DELETE,
                instance=instance,
                tenant=tenant,
                before=before,
                after=None,
            )


# What a refusal names, in the reader's language: the objects a delete may be refused for,
# and those that can hold it back (PROTECT and RESTRICT foreign keys); others by model name.
_KINDS = {
    "clusters.cluster": gettext_lazy("Cluster"),
    "clusters.resourcepool": gettext_lazy("Resource pool"),
    "tenancy.project": gettext_lazy("Project"),
}


def _holders(label: str, count: int) -> str | None:
    if label == "jobs.job":
        return ngettext("{count} job", "{count} jobs", count).format(count=count)
    if label == "accounting.usagesegment":
        return ngettext("{count} usage record", "{count} usage records", count).format(count=count)
    return None


def _still_used(instance: models.Model, exc: ProtectedError | RestrictedError) -> str:
    """Why a delete was refused: what still refers to the object, counted by kind."""
    found = exc.protected_objects if isinstance(exc, ProtectedError) else exc.restricted_objects
    kinds = Counter(obj._meta for obj in found)
    # Translators: between the counted things of a list ("1 job, 3 usage records").
    what = _(", ").join(
        _holders(meta.label_lower, n)
        or f"{n} {meta.verbose_name if n == 1 else meta.verbose_name_plural}"
        for meta, n in sorted(kinds.items(), key=lambda kv: str(kv[0].verbose_name))
    )
    kind = str(instance._meta.verbose_name)
    return _(
        "{kind} '{name}' cannot be deleted: it is still in use by {what}. Remove or move them "
        "first."
    ).format(
        kind=_KINDS.get(instance._meta.label_lower, kind[:1].upper() + kind[1:]),
        name=instance,
        what=what,
    )


class PlatformModelViewSet(AuditedModelViewSet[M], Generic[M]):
    """Platform-level objects (clusters, pools, tenants): any user reads, platform admins write."""

    def check_permissions(self, request: Request) -> None:
        super().check_permissions(request)
        if request.method not in SAFE_METHODS and not request_user(request).is_platform_admin:
            raise exceptions.PermissionDenied(_("Only platform admins can change this."))


class TenantScopedViewSet(AuditedModelViewSet[M], Generic[M]):
    """Objects that belong to the tenant in the URL (``/api/v1/tenants/{tenant}/...``)."""

    tenant_field: ClassVar[str] = "tenant"
    read_roles: ClassVar[frozenset[Role]] = frozenset(Role)
    write_roles: ClassVar[frozenset[Role]] = WRITE_ROLES
    tenant: Tenant
    role: Role

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "get_queryset" in cls.__dict__:
            raise TypeError(
                f"{cls.__name__} must not override get_queryset: tenant scoping lives in "
                "TenantScopedViewSet; override scoped_queryset() to add joins or filters."
            )

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        user = request_user(request)
        tenant = visible_tenants(user).filter(slug=kwargs.get("tenant")).first()
        role = role_in(user, tenant) if tenant is not None else None
        if tenant is None or role is None:
            raise exceptions.NotFound(_("No such tenant."))
        if role not in self.read_roles:
            raise exceptions.PermissionDenied(_("Your role in this tenant cannot see this."))
        if request.method not in SAFE_METHODS and role not in self.write_roles:
            raise exceptions.PermissionDenied(_("Your role in this tenant cannot change this."))
        self.tenant, self.role = tenant, role

    def scoped_queryset(self, queryset: QuerySet[M]) -> QuerySet[M]:
        """Hook for joins and extra filters; the tenant filter is applied regardless."""
        return queryset

    def get_queryset(self) -> QuerySet[M]:
        base: QuerySet[M] = super().get_queryset()
        if getattr(self, "swagger_fake_view", False):  # schema generation has no tenant
            return base.none()
        return self.scoped_queryset(base).filter(**{self.tenant_field: self.tenant})

    def save_kwargs(self) -> dict[str, Any]:
        return {self.tenant_field: self.tenant}

    def audit_tenant(self, instance: M) -> Tenant | None:
        return self.tenant


__all__ = [
    "ADMIN_ROLES",
    "WRITE_ROLES",
    "AuditedModelViewSet",
    "PlatformModelViewSet",
    "TenantScopedViewSet",
    "request_user",
]
