from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import QuerySet
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from apps.audit import services as audit
from apps.audit.models import AuditAction
from apps.core.viewsets import TenantScopedViewSet, request_user
from apps.inference import rollouts
from apps.inference.api.serializers import (
    InferenceServiceSerializer,
    RollbackSerializer,
    ScalingDecisionSerializer,
    ServiceRevisionSerializer,
    TrafficSampleSerializer,
)
from apps.inference.models import InferenceService
from apps.jobs.models import TERMINAL


class InferenceServiceViewSet(TenantScopedViewSet[InferenceService]):
    """Model services of a tenant: settings (POST creates the inference job too; PATCH changes
    scaling and rollout settings; a new runtime_image, model_uri, port or probe setting is a
    new revision, rolled out replica by replica), current replicas, revisions, traffic and the
    autoscaler's decisions. Delete by cancelling the job."""

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

    @extend_schema(responses=ServiceRevisionSerializer(many=True))
    @action(detail=True, methods=["get"])
    def revisions(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Revisions (runtime image, model, port and probes), newest first, in pages: rolling,
        complete (served on every replica), superseded, failed (with why), or pending (made
        while the service was not running)."""
        page = self.paginate_queryset(
            self.get_object().revisions.select_related("created_by")  # type: ignore[arg-type]  # another model's rows
        )
        return self.get_paginated_response(ServiceRevisionSerializer(page, many=True).data)

    @extend_schema(request=RollbackSerializer, responses=InferenceServiceSerializer)
    @action(detail=True, methods=["post"])
    def rollback(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Serve an earlier revision's runtime image, model, port and probes again, as a new
        revision rolled out like any other."""
        found = self.get_object()  # another tenant's service is a 404, whatever the body
        body = RollbackSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        number = body.validated_data["revision"]
        with transaction.atomic():
            service = (
                InferenceService.objects.select_for_update(of=("self",))
                .select_related("job__owner", "job__pool__cluster")
                .get(pk=found.pk)
            )
            before = audit.snapshot(service)
            _check_rollback(service, number)
            earlier = service.revisions.get(number=number)
            rollouts.new_revision(
                service,
                rollouts.revision_content(earlier, service),
                actor=request_user(request),
                rollback_of=number,
            )
            audit.record(
                actor=request_user(request),
                action=AuditAction.UPDATE,
                instance=service,
                tenant=self.tenant,
                before=before,
                after=audit.snapshot(service),
            )
        service.refresh_from_db()
        return Response(self.get_serializer(service).data)


def _check_rollback(service: InferenceService, number: int) -> None:
    if service.job.state in TERMINAL:
        raise serializers.ValidationError(
            {"revision": [_("The service has ended; create a new service to serve another one.")]}
        )
    if number >= service.revision:
        raise serializers.ValidationError(
            {
                "revision": [
                    _("Roll back to an earlier revision than the current one ({current}).").format(
                        current=service.revision
                    )
                ]
            }
        )
    earlier = service.revisions.filter(number=number).first()
    if earlier is None:
        raise serializers.ValidationError({"revision": [_("No such revision of this service.")]})
    if rollouts.revision_content(earlier, service) == rollouts.content_of(service):
        raise serializers.ValidationError(
            {
                "revision": [
                    _("The service already runs that revision's image, model, port and probes.")
                ]
            }
        )
