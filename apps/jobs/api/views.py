from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _
from django_filters import rest_framework as filters
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from apps.accounting.selectors import job_cost
from apps.audit import services as audit
from apps.audit.models import AuditAction
from apps.core.errors import Conflict
from apps.core.viewsets import TenantScopedViewSet, request_user
from apps.jobs import after, homes, logs, services
from apps.jobs.api.pipeline import (
    PipelineGraphSerializer,
    PipelineJobSerializer,
    PipelineJobsSerializer,
    PipelineSerializer,
    create_steps,
)
from apps.jobs.api.serializers import (
    JobCostSerializer,
    JobEventSerializer,
    JobLogsQuerySerializer,
    JobLogsSerializer,
    JobSerializer,
)
from apps.jobs.models import Job, JobKind, JobState, state_word
from apps.runs import services as runs
from apps.runs.api.serializers import (
    CheckpointRequestSerializer,
    CheckpointRequestStateSerializer,
)
from apps.runs.selectors import checkpoint_state
from apps.tenancy.models import Role


class JobFilter(filters.FilterSet):  # type: ignore[misc]  # django-filter is untyped
    name = filters.CharFilter(
        lookup_expr="icontains", help_text="Jobs whose name contains this (any case)."
    )
    owner = filters.CharFilter(
        field_name="owner__username", help_text="Jobs submitted by this user (username)."
    )
    sweep = filters.NumberFilter(
        field_name="trial__sweep", help_text="The trials' jobs of this sweep (its id)."
    )

    class Meta:
        model = Job
        fields = ["state", "kind", "pool", "priority", "project", "name", "owner", "sweep"]


class JobViewSet(TenantScopedViewSet[Job]):
    """Training jobs, notebooks and inference services of a tenant.

    POST submits (the job is queued; the scheduler admits it). Jobs are not edited in place:
    cancel, clone or submit anew."""

    serializer_class = JobSerializer
    queryset = Job.objects.all()
    filterset_class = JobFilter
    http_method_names = ["get", "post", "head", "options"]

    def scoped_queryset(self, queryset: QuerySet[Job]) -> QuerySet[Job]:
        return queryset.select_related("owner", "tenant", "trial__sweep").prefetch_related(
            "allocations__node", "after", "dependents"
        )

    def save_kwargs(self) -> dict[str, Any]:
        return {**super().save_kwargs(), "owner": request_user(self.request)}

    def _audited(self, job: Job, before: dict[str, Any]) -> None:
        audit.record(
            actor=request_user(self.request),
            action=AuditAction.UPDATE,
            instance=job,
            tenant=self.tenant,
            before=before,
            after=audit.snapshot(job),
        )

    @extend_schema(request=None, responses=JobSerializer)
    @action(detail=True, methods=["post"])
    @transaction.atomic  # the change and its audit entry commit together
    def cancel(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """The job's owner, tenant admins and platform admins cancel it (403 for others).
        Cancelling a job that already ended changes nothing and records nothing."""
        job = self._owner_or_admin(
            self.get_object(), _("Only the job's owner or a tenant admin can cancel it.")
        )
        user = request_user(request)
        before = audit.snapshot(job)
        job = services.cancel_job(job=job, actor=user)
        if audit.snapshot(job) != before:
            self._audited(job, before)
        return Response(JobSerializer(job, context=self.get_serializer_context()).data)

    @extend_schema(
        request=PipelineSerializer,
        responses={201: PipelineJobsSerializer},
        description="Submit a pipeline: steps, in order, each a job body as for POST jobs/ "
        "(`kind` training unless given) whose `after` may name earlier steps as well as "
        "existing jobs by id. Every step is checked first; all are queued in one transaction, "
        "or none (400 with each step's errors at its index under `steps`).",
    )
    @action(detail=False, methods=["post"], url_path="pipeline")
    def submit_pipeline(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        body = PipelineSerializer(data=request.data, context=self.get_serializer_context())
        body.is_valid(raise_exception=True)
        with transaction.atomic():
            jobs = create_steps(body.validated_data["steps"], **self.save_kwargs())
            for job in jobs:
                self._audit_created(job)
        data = JobSerializer(jobs, many=True, context=self.get_serializer_context()).data
        return Response({"jobs": data}, status=status.HTTP_201_CREATED)

    @extend_schema(
        request=None,
        responses=PipelineGraphSerializer,
        description="The pipeline this job belongs to: the job and every job linked to it "
        "through `after`, either way (the jobs it starts after, theirs, the jobs that start "
        "after it, ...), each with the ids it starts after; at most "
        f"{after.MAX_PIPELINE_JOBS} jobs, the nearest first. A job on its own is a pipeline "
        "of one.",
    )
    @action(detail=True, methods=["get"], pagination_class=None, filter_backends=[])
    def pipeline(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        jobs, truncated = after.pipeline_of(self.get_object())
        shown = {job.pk for job in jobs}
        data = PipelineJobSerializer(jobs, many=True, context={"shown": shown}).data
        return Response({"jobs": data, "truncated": truncated})

    @extend_schema(request=None, responses={201: JobSerializer})
    @action(detail=True, methods=["post"])
    @transaction.atomic
    def clone(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        source = self.get_object()
        errors = JobSerializer.clone_errors(source, self.role)
        if errors:
            raise ValidationError(errors)
        return self._created(services.clone_job(job=source, actor=request_user(request)))

    @extend_schema(
        request=None,
        responses={201: JobSerializer},
        description="Start a stopped notebook again with its files: a new queued notebook "
        "that mounts the same home volume, owned by the notebook's owner. Its owner and "
        "tenant admins only (403). 409 while it or another notebook using that volume is "
        "active, or when the volume was deleted; 400 for other kinds. Clone instead starts "
        "a copy with a new, empty home volume.",
    )
    @action(detail=True, methods=["post"])
    def restart(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        source = self._own_notebook(
            _("Only the notebook's owner or a tenant admin can restart it.")
        )
        errors = JobSerializer.clone_errors(source, self.role)
        if errors:
            raise ValidationError(errors)
        try:
            with transaction.atomic():
                return self._created(
                    homes.restart_notebook(job=source, actor=request_user(request))
                )
        except homes.HomeConflict as exc:
            raise Conflict(str(exc)) from exc

    def _created(self, job: Job) -> Response:
        """A job made from another (clone, restart): audited, answered with 201."""
        self._audit_created(job)
        data = JobSerializer(job, context=self.get_serializer_context()).data
        return Response(data, status=status.HTTP_201_CREATED)

    def _audit_created(self, job: Job) -> None:
        audit.record(
            actor=request_user(self.request),
            action=AuditAction.CREATE,
            instance=job,
            tenant=self.tenant,
            before=None,
            after=audit.snapshot(job),
        )

    @extend_schema(
        request=None,
        responses=JobSerializer,
        description="Delete the home volume (the files) a stopped notebook mounts, for every "
        "notebook of its chain of restarts; they cannot be restarted with their files after "
        "this. Its owner and tenant admins only (403). 409 while a notebook using the volume "
        "is active; 400 for other kinds. Deleting it twice changes nothing.",
    )
    @action(detail=True, methods=["post"], url_path="delete-home")
    def delete_home(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        job = self._own_notebook(
            _("Only the notebook's owner or a tenant admin can delete its files.")
        )
        before = audit.snapshot(job)
        try:
            with transaction.atomic():
                marked = homes.delete_home(job=job, actor=request_user(request))
                job.refresh_from_db()
                if marked:
                    self._audited(job, before)
        except homes.HomeConflict as exc:
            raise Conflict(str(exc)) from exc
        return Response(JobSerializer(job, context=self.get_serializer_context()).data)

    def _own_notebook(self, refusal: str) -> Job:
        """The notebook of the URL, for its owner or a tenant admin."""
        job = self.get_object()
        if job.kind != JobKind.NOTEBOOK:
            raise ValidationError({"kind": [_("Only notebooks have a home volume.")]})
        return self._owner_or_admin(job, refusal)

    def _owner_or_admin(self, job: Job, refusal: str) -> Job:
        """``job`` when the caller owns it or is a tenant admin (platform admins act as one);
        403 with ``refusal`` for other members."""
        if job.owner_id != request_user(self.request).pk and self.role != Role.TENANT_ADMIN:
            raise PermissionDenied(refusal)
        return job

    @extend_schema(methods=["GET"], request=None, responses=CheckpointRequestStateSerializer)
    @extend_schema(
        methods=["POST"],
        request=CheckpointRequestSerializer,
        responses=CheckpointRequestStateSerializer,
        description="Ask a running training job to save a checkpoint soon (before stopping it "
        "by hand, say). The SDK in the job hears of it in the answer to its next metrics "
        "batch (zhisuan.checkpoint_requested()); any checkpoint completed from now on serves "
        "it. A request still pending is kept as it is. 400 for a notebook or inference "
        "service, 409 for a job that is not running.",
    )
    @action(detail=True, methods=["get", "post"], pagination_class=None, filter_backends=[])
    def checkpoint(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        job = self.get_object()
        if request.method == "POST":
            body = CheckpointRequestSerializer(data=request.data)
            body.is_valid(raise_exception=True)
            if job.kind != JobKind.TRAINING:
                raise ValidationError(
                    {"kind": [_("A {kind} job saves no checkpoints.").format(kind=job.kind)]}
                )
            if job.state != JobState.RUNNING:
                raise Conflict(
                    _("The job is {state}: only a running job can save one.").format(
                        state=state_word(job.state)
                    )
                )
            said = body.validated_data.get("reason", "").strip() or "asked on the dashboard"
            reason = f"{request_user(request).username}: {said}"
            with transaction.atomic():
                # A repeat while one is pending changes nothing, so it records nothing either.
                if runs.request_checkpoint(run=runs.ensure_run_for_job(job), reason=reason):
                    services.record_event(job, reason="CheckpointRequested", message=reason)
        return Response(CheckpointRequestStateSerializer(checkpoint_state(job)).data)

    @extend_schema(responses=JobEventSerializer(many=True))
    @action(detail=True, methods=["get"], pagination_class=None, filter_backends=[])
    def events(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        job = self.get_object()
        return Response(JobEventSerializer(job.events.all(), many=True).data)

    @extend_schema(
        responses=JobCostSerializer,
        description="What the job has cost: the devices it held (reserved, whether used or "
        "not) times hours, every attempt, priced at its pool's rate. Visible to whoever may "
        "see the job; the tenant's usage report (tenant admins) sums the same holds.",
    )
    @action(detail=True, methods=["get"], pagination_class=None, filter_backends=[])
    def cost(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        job = self.get_object()
        row = job_cost(job, timezone.now())
        price = job.pool.price_per_device_hour
        body = {"device_hours": row.device_hours, "cost": row.cost, "price_per_device_hour": price}
        return Response(JobCostSerializer(body).data)

    @extend_schema(
        parameters=[JobLogsQuerySerializer],
        responses=JobLogsSerializer,
        description="The job's output, newest ``tail`` lines (oldest first). Lines are copied "
        "from the cluster every few seconds and kept after the job ends.",
    )
    @action(detail=True, methods=["get"], pagination_class=None, filter_backends=[])
    def logs(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        job = self.get_object()
        query = JobLogsQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        if job.state == JobState.RUNNING:
            logs.want(job)  # the collector follows it while someone reads
        lines, truncated = logs.read(
            job, tail=query.validated_data["tail"], since=query.validated_data.get("since")
        )
        body = {"source": job.pool.cluster.kind, "lines": lines, "truncated": truncated}
        return Response(JobLogsSerializer(body).data)
