from __future__ import annotations

from typing import Any

from django.db.models import Prefetch, QuerySet
from django.utils.translation import gettext as _
from django_filters import rest_framework as filters
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import exceptions, serializers, status
from rest_framework.decorators import action
from rest_framework.generics import get_object_or_404  # (a malformed id is a 404, not a 500)
from rest_framework.permissions import SAFE_METHODS
from rest_framework.request import Request
from rest_framework.response import Response

from apps.core.viewsets import TenantScopedViewSet, request_user
from apps.runs import selectors, services
from apps.runs.api.serializers import (
    CheckpointSerializer,
    IngestResultSerializer,
    MetricBatchSerializer,
    PendingRequestSerializer,
    RunSerializer,
    SeriesQuerySerializer,
    SeriesResponseSerializer,
    parse_points,
)
from apps.runs.authentication import JobCredential
from apps.runs.models import CheckpointState, MetricKey, Run
from apps.tenancy.models import ADMIN_ROLES


class RunFilter(filters.FilterSet):  # type: ignore[misc]  # django-filter is untyped
    name = filters.CharFilter(
        lookup_expr="icontains", help_text="Runs whose name contains this (any case)."
    )

    class Meta:
        model = Run
        fields = ["state", "job", "project", "name"]


class RunViewSet(TenantScopedViewSet[Run]):
    """Training runs of a tenant: hyperparameters, tags, metric series and checkpoints.

    The SDK inside a job authenticates with its job token, which sees only its own job's run.
    Metric batches and checkpoint registrations are data written by jobs, not configuration
    changes, so they are not audited (runs' creation and edits are)."""

    serializer_class = RunSerializer
    queryset = Run.objects.all()
    http_method_names = ["get", "post", "patch", "head", "options"]
    filterset_class = RunFilter

    def scoped_queryset(self, queryset: QuerySet[Run]) -> QuerySet[Run]:
        queryset = queryset.select_related("owner", "job").prefetch_related(
            Prefetch("keys", queryset=MetricKey.objects.order_by("name"))
        )
        credential = self.request.auth
        if isinstance(credential, JobCredential):
            queryset = queryset.filter(job_id=credential.job_id)
        return queryset

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        if isinstance(request.auth, JobCredential) and self.action == "create":
            raise exceptions.PermissionDenied(_("A job token cannot create runs."))

    def check_object_permissions(self, request: Request, obj: Any) -> None:
        """A run is changed (renamed, its config or state edited, metrics or checkpoints
        added) by its owner, its job's owner, that job's token, or a tenant admin; other
        members only read it, as they may cancel only their own jobs. A member registering a
        checkpoint on another's run would choose where that job resumes from."""
        super().check_object_permissions(request, obj)
        if request.method in SAFE_METHODS or isinstance(request.auth, JobCredential):
            return
        user_id = request_user(request).pk
        owners = {obj.owner_id, obj.job.owner_id if obj.job_id else None}
        if user_id not in owners and self.role not in ADMIN_ROLES:
            raise exceptions.PermissionDenied(
                _("Only the run's owner or a tenant admin can change it.")
            )

    def _run(self) -> Run:
        """The run in the URL; the list filters (``state``...) must not apply to it."""
        run = get_object_or_404(self.get_queryset(), pk=self.kwargs["pk"])
        self.check_object_permissions(self.request, run)
        return run

    def save_kwargs(self) -> dict[str, Any]:
        return {**super().save_kwargs(), "owner": request_user(self.request)}

    @extend_schema(
        methods=["POST"],
        request=MetricBatchSerializer,
        responses={200: IngestResultSerializer},
        description="Ingest a batch of points (at most 10,000 values). Idempotent per "
        "(key, step): re-sent points are ignored, the first value wins.",
    )
    @extend_schema(
        methods=["GET"],
        parameters=[SeriesQuerySerializer],
        responses=SeriesResponseSerializer,
        description="Series of the run, each at most max_points long (min/max downsampled).",
    )
    @action(detail=True, methods=["get", "post"])
    def metrics(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        run = self._run()
        if request.method == "POST":
            points, errors = parse_points(request.data)
            if errors:
                raise serializers.ValidationError(errors)
            if run.simulated:
                services.take_over_from_simulator(run)
            try:
                result = services.ingest_metrics(run=run, points=points)
            except services.IngestError as exc:
                raise serializers.ValidationError(exc.errors) from exc
            return Response(
                {
                    "received": result.received,
                    "stored": result.stored,
                    "duplicates": result.duplicates,
                    **_pending_request(run),
                }
            )
        query = SeriesQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        q = query.validated_data
        series = selectors.metric_series(
            run,
            q["keys"],
            max_points=q["max_points"],
            step_min=q.get("step_min"),
            step_max=q.get("step_max"),
        )
        return Response(
            {
                "run": run.pk,
                "max_points": q["max_points"],
                "series": {
                    name: {
                        "steps": s.steps,
                        "values": s.values,
                        "count": s.count,
                        "downsampled": s.downsampled,
                    }
                    for name, s in series.items()
                },
            }
        )

    @extend_schema(
        responses=PendingRequestSerializer,
        description="The pending request that the run save a checkpoint, as the answer to a "
        "metrics batch gives it: the SDK of a run that logs rarely asks here instead.",
    )
    @action(detail=True, methods=["get"], url_path="checkpoint-request")
    def checkpoint_request(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return Response(_pending_request(self._run()))

    @extend_schema(
        methods=["GET"],
        parameters=[OpenApiParameter("state", str, enum=["incomplete", "complete"])],
        responses=CheckpointSerializer(many=True),
    )
    @extend_schema(
        methods=["POST"],
        request=CheckpointSerializer,
        responses={201: CheckpointSerializer},
        description="Register one rank's durable shard of the checkpoint at a step; it is "
        "complete once all world_size ranks have registered. Idempotent per rank.",
    )
    # The list is capped, not paginated (the schema promised a page; found by schemathesis).
    @action(detail=True, methods=["get", "post"], pagination_class=None)
    def checkpoints(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        run = self._run()
        if request.method == "POST":
            body = CheckpointSerializer(data=request.data)
            body.is_valid(raise_exception=True)
            d = body.validated_data
            try:
                ckpt = services.register_checkpoint(
                    run=run,
                    step=d["step"],
                    path=d["path"],
                    rank=d["rank"],
                    world_size=d["world_size"],
                    size_bytes=d["shard_bytes"],
                    files=d.get("files") or (),
                )
            except services.CheckpointConflictError as exc:
                raise serializers.ValidationError({"step": [str(exc)]}) from exc
            return Response(CheckpointSerializer(ckpt).data, status=status.HTTP_201_CREATED)
        qs = run.checkpoints.all()
        state = request.query_params.get("state")
        if state:
            # An unknown state used to answer [] (no checkpoints), as if the run had none.
            if state not in CheckpointState.values:
                raise serializers.ValidationError(
                    {
                        "state": [
                            _("One of {states}, not {state}.").format(
                                states=", ".join(CheckpointState.values), state=repr(state)
                            )
                        ]
                    }
                )
            qs = qs.filter(state=state)
        return Response(CheckpointSerializer(qs[:500], many=True).data)


def _pending_request(run: Run) -> dict[str, Any]:
    asked = selectors.checkpoint_request(run)
    pending = asked if asked is not None and asked.pending else None
    return {
        "checkpoint_requested_at": pending.requested_at if pending else None,
        "checkpoint_request_reason": pending.reason if pending else "",
    }
