"""Pools with capacity per model, each pool's queue (position, reason, holds) and its
topology with what each node holds."""

from __future__ import annotations

from typing import Any

from django.db.models import Max, QuerySet, Sum
from django.utils import timezone
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import mixins, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from apps.clusters.api.topology import PoolTopologySerializer
from apps.clusters.models import Node, ResourcePool
from apps.clusters.topology import pool_topology
from apps.core.viewsets import request_user
from apps.jobs.models import Job, JobState
from apps.scheduling.models import Hold
from apps.tenancy.selectors import visible_tenants


class CapacitySerializer(serializers.Serializer[Any]):
    model = serializers.CharField()
    vendor = serializers.CharField()
    devices = serializers.IntegerField(help_text="Accelerators of the non-spare nodes.")
    per_node = serializers.IntegerField(
        help_text="Accelerators of the largest such node: the most one replica can ask for."
    )


class PoolSerializer(serializers.ModelSerializer[ResourcePool]):
    cluster = serializers.CharField(source="cluster.name", read_only=True)
    capacity = serializers.SerializerMethodField()

    class Meta:
        model = ResourcePool
        fields = ["id", "name", "cluster", "description", "capacity"]
        read_only_fields = fields

    @extend_schema_field(CapacitySerializer(many=True))
    def get_capacity(self, pool: ResourcePool) -> list[dict[str, Any]]:
        capacity: dict[int, list[dict[str, Any]]] = self.context["capacity"]
        return capacity.get(pool.pk, [])


class QueueEntrySerializer(serializers.Serializer[Any]):
    position = serializers.IntegerField(allow_null=True)
    job = serializers.IntegerField(allow_null=True, help_text="null for other tenants' jobs")
    name = serializers.CharField(allow_null=True)
    tenant = serializers.CharField(allow_null=True)
    priority = serializers.IntegerField()
    devices = serializers.IntegerField()
    waiting_s = serializers.FloatField()
    pending_code = serializers.CharField()
    pending_message = serializers.CharField(allow_null=True)
    pending_detail = serializers.ListField(
        child=serializers.JSONField(), allow_null=True, help_text="as on the job"
    )
    held_nodes = serializers.IntegerField()
    expected_start_at = serializers.DateTimeField(
        allow_null=True,
        help_text="the scheduler's forecast of its start, as on the job; null: none yet or "
        "not within 7 days",
    )


def capacity_by_pool() -> dict[int, list[dict[str, Any]]]:
    rows = (
        Node.objects.filter(is_spare=False, pool__isnull=False)
        .values("pool_id", "accelerator_model", "accelerator_vendor")
        .annotate(total=Sum("accelerator_count"), per_node=Max("accelerator_count"))
        .order_by("pool_id", "accelerator_model")
    )
    out: dict[int, list[dict[str, Any]]] = {}
    for r in rows:
        out.setdefault(r["pool_id"], []).append(
            {
                "model": r["accelerator_model"],
                "vendor": r["accelerator_vendor"],
                "devices": r["total"],
                "per_node": r["per_node"],
            }
        )
    return out


class PoolViewSet(
    mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet[ResourcePool]
):
    """Resource pools (platform-level; every user sees capacity, not other tenants' work)."""

    serializer_class = PoolSerializer
    pagination_class = None

    def get_queryset(self) -> QuerySet[ResourcePool]:
        return ResourcePool.objects.select_related("cluster").order_by("id")

    def get_serializer_context(self) -> dict[str, Any]:
        if getattr(self, "swagger_fake_view", False):
            # schema generation (also run by `check --deploy`) must not need a database
            return super().get_serializer_context()
        return {**super().get_serializer_context(), "capacity": capacity_by_pool()}

    @extend_schema(responses=QueueEntrySerializer(many=True))
    @action(detail=True, methods=["get"])
    def queue(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """The pool's queue in scheduling order. Other tenants' jobs show only their size and
        priority, so a researcher sees what is ahead without seeing whose it is."""
        pool = self.get_object()
        user = request_user(request)
        mine = set(visible_tenants(user).values_list("pk", flat=True))
        holds = {h.job_id: len(h.node_ids) for h in Hold.objects.filter(job__pool=pool)}
        jobs = Job.objects.filter(pool=pool, state=JobState.QUEUED).select_related("tenant")
        now = timezone.now()
        entries = []
        for job in sorted(jobs, key=lambda j: (j.queue_position or 10**9, j.submitted_at)):
            visible = job.tenant_id in mine
            entries.append(
                {
                    "position": job.queue_position,
                    "job": job.pk if visible else None,
                    "name": job.name if visible else None,
                    "tenant": job.tenant.slug if visible else None,
                    "priority": job.priority,
                    "devices": job.requested_devices,
                    "waiting_s": (now - job.submitted_at).total_seconds(),
                    "pending_code": job.pending_code,
                    "pending_message": job.pending_message if visible else None,
                    "pending_detail": job.pending_detail if visible else None,
                    "held_nodes": holds.get(job.pk, 0),
                    "expected_start_at": job.expected_start_at,
                }
            )
        return Response(QueueEntrySerializer(entries, many=True).data)

    @extend_schema(responses=PoolTopologySerializer)
    @action(detail=True, methods=["get"])
    def topology(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Spine -> Scalable Unit -> leaf -> nodes, each with its devices used, free and out of
        service; per domain the wholly free nodes and the free devices stranded on part-used
        nodes; the largest whole-node gang that could start now in one leaf, one unit or the
        pool; the queue by pending reason. Counts only, so every user may read it."""
        return Response(PoolTopologySerializer(pool_topology(self.get_object())).data)
