from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from apps.core.viewsets import TenantScopedViewSet, request_user
from apps.inference.api.serializers import (
    InferenceServiceSerializer,
    ScalingDecisionSerializer,
    TrafficSampleSerializer,
)
from apps.inference.models import InferenceService


class InferenceServiceViewSet(TenantScopedViewSet[InferenceService]):
    """Model services of a tenant: settings (POST creates the inference job too; PATCH changes
    scaling and rollout settings), current replicas, traffic and the autoscaler's decisions.
    Delete by cancelling the job."""

    serializer_class = InferenceServiceSerializer
    queryset = InferenceService.objects.all()
    http_method_names = ["get", "post", "patch", "head", "options"]

    def scoped_queryset(self, queryset: QuerySet[InferenceService]) -> QuerySet[InferenceService]:
        return queryset.select_related("job__owner", "job__pool__cluster")

    def save_kwargs(self) -> dict[str, Any]:
        return {**super().save_kwargs(), "owner": request_user(self.request)}

    @extend_schema(responses=TrafficSampleSerializer(many=True))
    @action(detail=True, methods=["get"])
    def metrics(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Traffic samples, newest first, in pages (10 s each; latency is the worst second in
        it)."""
        page = self.paginate_queryset(self.get_object().samples.all())  # type: ignore[arg-type]  # another model's rows
        return self.get_paginated_response(TrafficSampleSerializer(page, many=True).data)

    @extend_schema(responses=ScalingDecisionSerializer(many=True))
    @action(detail=True, methods=["get"])
    def decisions(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Scaling decisions, newest first, in pages, with the inputs the autoscaler saw."""
        page = self.paginate_queryset(self.get_object().decisions.all())  # type: ignore[arg-type]  # another model's rows
        return self.get_paginated_response(ScalingDecisionSerializer(page, many=True).data)
