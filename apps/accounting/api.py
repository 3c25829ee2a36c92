"""Usage and cost reports (JSON or CSV): tenant admins for their tenant, platform admins for all."""

from __future__ import annotations

import csv
import io
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.http import HttpResponse
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import exceptions, serializers, viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from apps.accounting.csvsafe import safe_cell
from apps.accounting.models import UsageSegment
from apps.accounting.selectors import GROUPS, Row, usage_report
from apps.core.fields import WindowTimeField
from apps.core.viewsets import ADMIN_ROLES, TenantScopedViewSet, request_user


class UsageRowSerializer(serializers.Serializer[Any]):
    key = serializers.CharField(help_text='The group; "" for none (no project, owner gone).')
    device_hours = serializers.FloatField()
    cost = serializers.DecimalField(
        max_digits=16,
        decimal_places=2,
        help_text="Rounded so that the rows of any grouping add up to the same total: the "
        "exact total rounded to the cent (largest-remainder rounding).",
    )


class UsageQuerySerializer(serializers.Serializer[Any]):
    group_by = serializers.ChoiceField(GROUPS, default="project")
    start = WindowTimeField(required=False)
    end = WindowTimeField(required=False)
    export = serializers.ChoiceField(["json", "csv"], default="json")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        now = timezone.now()
        attrs.setdefault("end", now)
        attrs.setdefault("start", attrs["end"] - timedelta(days=30))
        if attrs["start"] >= attrs["end"]:
            raise serializers.ValidationError({"start": ["start must be before end."]})
        if attrs["end"] - attrs["start"] > timedelta(days=366):
            raise serializers.ValidationError({"end": ["A report covers at most 366 days."]})
        return attrs


PARAMS = [
    OpenApiParameter("group_by", str, enum=list(GROUPS)),
    OpenApiParameter("start", datetime),
    OpenApiParameter("end", datetime),
    OpenApiParameter("export", str, enum=["json", "csv"]),
]


# What the dashboard shows for an empty key (a job without a project, a deleted owner): the
# CSV writes the same, so the export and the page agree. JSON keeps "" (the page translates it).
NO_KEY = "(none)"


def _render(rows: list[Row], query: dict[str, Any], filename: str) -> Response | HttpResponse:
    if query["export"] == "csv":
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow([query["group_by"], "device_hours", "cost", "currency"])
        for row in rows:
            key = safe_cell(row.key) if row.key else NO_KEY
            writer.writerow([key, f"{row.device_hours:.6f}", f"{row.cost}", settings.CURRENCY])
        response = HttpResponse(out.getvalue(), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{filename}.csv"'
        return response
    return Response(UsageRowSerializer(rows, many=True).data)


class TenantUsageViewSet(TenantScopedViewSet[UsageSegment]):
    """Device-hours and cost of the tenant, grouped by project, owner, pool, model or job."""

    queryset = UsageSegment.objects.all()
    serializer_class = UsageRowSerializer
    read_roles = ADMIN_ROLES
    write_roles = frozenset()
    http_method_names = ["get", "head", "options"]
    pagination_class = None

    @extend_schema(parameters=PARAMS, responses=UsageRowSerializer(many=True))
    def list(  # type: ignore[override]  # CSV export answers a plain HttpResponse
        self, request: Request, *args: Any, **kwargs: Any
    ) -> Response | HttpResponse:
        query = UsageQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        rows = usage_report(
            group_by=query.validated_data["group_by"],
            start=query.validated_data["start"],
            end=query.validated_data["end"],
            now=timezone.now(),
            tenant_ids=[self.tenant.pk],
        )
        return _render(rows, query.validated_data, f"usage-{self.tenant.slug}")

    def retrieve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        raise exceptions.NotFound()


class PlatformUsageViewSet(viewsets.ViewSet):
    """Usage across every tenant (platform admins)."""

    @extend_schema(parameters=PARAMS, responses=UsageRowSerializer(many=True))
    def list(self, request: Request) -> Response | HttpResponse:
        if not request_user(request).is_platform_admin:
            raise exceptions.PermissionDenied("Only platform admins see every tenant's usage.")
        query = UsageQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        rows = usage_report(
            group_by=query.validated_data["group_by"],
            start=query.validated_data["start"],
            end=query.validated_data["end"],
            now=timezone.now(),
        )
        return _render(rows, query.validated_data, "usage")
