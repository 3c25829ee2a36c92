"""Reading the audit log: platform admins see all of it, tenant admins their tenant's part."""

from __future__ import annotations

from django.db.models import QuerySet
from django_filters import rest_framework as filters
from rest_framework import exceptions, mixins, viewsets

from apps.audit.api.serializers import AuditEntrySerializer
from apps.audit.models import AuditEntry
from apps.core.viewsets import ADMIN_ROLES, TenantScopedViewSet, request_user


class AuditFilter(filters.FilterSet):  # type: ignore[misc]  # django-filter is untyped
    class Meta:
        model = AuditEntry
        fields = ["action", "object_type", "object_id", "actor_name"]


class PlatformAuditViewSet(mixins.ListModelMixin, viewsets.GenericViewSet[AuditEntry]):
    serializer_class = AuditEntrySerializer
    filterset_class = AuditFilter

    def get_queryset(self) -> QuerySet[AuditEntry]:
        if getattr(self, "swagger_fake_view", False):
            return AuditEntry.objects.none()
        if not request_user(self.request).is_platform_admin:
            raise exceptions.PermissionDenied("Only platform admins can read the full audit log.")
        return AuditEntry.objects.select_related("tenant")


class TenantAuditViewSet(TenantScopedViewSet[AuditEntry]):
    serializer_class = AuditEntrySerializer
    queryset = AuditEntry.objects.all()
    filterset_class = AuditFilter
    read_roles = ADMIN_ROLES
    write_roles = frozenset()  # the audit log is append-only, through the API too
    http_method_names = ["get", "head", "options"]

    def scoped_queryset(self, queryset: QuerySet[AuditEntry]) -> QuerySet[AuditEntry]:
        return queryset.select_related("tenant")
