from __future__ import annotations

from django.db.models import QuerySet
from django.utils.translation import gettext as _
from rest_framework import exceptions
from rest_framework.request import Request
from rest_framework.response import Response

from apps.core.viewsets import PlatformModelViewSet, TenantScopedViewSet, request_user
from apps.quotas.api.serializers import QuotaSerializer
from apps.quotas.models import Quota
from apps.quotas.selectors import quotas_with_usage
from apps.tenancy.models import Tenant


class QuotaAdminViewSet(PlatformModelViewSet[Quota]):
    """Every tenant's quotas, for platform admins (the quota console). Edits are validated so
    guarantees never exceed what a pool has."""

    serializer_class = QuotaSerializer
    queryset = Quota.objects.all()
    filterset_fields = ["pool", "accelerator_model"]
    pagination_class = None  # tenants x pools x models: a short list the console shows whole

    def get_queryset(self) -> QuerySet[Quota]:
        if getattr(self, "swagger_fake_view", False):
            return Quota.objects.none()
        if not request_user(self.request).is_platform_admin:
            raise exceptions.PermissionDenied(_("Only platform admins manage quotas."))
        return Quota.objects.select_related("tenant", "pool")

    def list(self, request: Request, *args: object, **kwargs: object) -> Response:
        quotas = quotas_with_usage(self.filter_queryset(self.get_queryset()))
        return Response(self.get_serializer(quotas, many=True).data)

    def audit_tenant(self, instance: Quota) -> Tenant | None:
        return instance.tenant


class TenantQuotaViewSet(TenantScopedViewSet[Quota]):
    """A tenant's own quotas and current use (read-only; platform admins edit)."""

    serializer_class = QuotaSerializer
    queryset = Quota.objects.all()
    write_roles = frozenset()
    http_method_names = ["get", "head", "options"]
    pagination_class = None

    def list(self, request: Request, *args: object, **kwargs: object) -> Response:
        quotas = quotas_with_usage(self.get_queryset())
        return Response(self.get_serializer(quotas, many=True).data)
