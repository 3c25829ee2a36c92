"""The overview numbers behind the dashboard's first page."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.clusters.models import Cluster, Node, ResourcePool
from apps.clusters.selectors import accelerators_by_model, spare_accelerators
from apps.core.viewsets import request_user
from apps.jobs.selectors import job_counts
from apps.tenancy.selectors import visible_tenants


class ModelCountSerializer(serializers.Serializer[Any]):
    model = serializers.CharField()
    vendor = serializers.CharField()
    count = serializers.IntegerField()


class OverviewSerializer(serializers.Serializer[Any]):
    tenants = serializers.IntegerField()
    clusters = serializers.IntegerField()
    pools = serializers.IntegerField()
    nodes = serializers.IntegerField()
    gpus = serializers.IntegerField(help_text="Schedulable accelerators (hot spares apart).")
    spare_gpus = serializers.IntegerField(help_text="Accelerators on hot-spare nodes.")
    gpus_by_model = ModelCountSerializer(many=True)
    jobs_running = serializers.IntegerField()
    jobs_pending = serializers.IntegerField()


class OverviewView(APIView):
    """Capacity is platform-wide (every user may see it); tenant and job counts are the
    caller's own (platform admins: all)."""

    @extend_schema(responses=OverviewSerializer)
    def get(self, request: Request) -> Response:
        by_model = accelerators_by_model()
        jobs = job_counts(visible_tenants(request_user(request)))
        data = {
            "tenants": visible_tenants(request_user(request)).count(),
            "clusters": Cluster.objects.count(),
            "pools": ResourcePool.objects.count(),
            "nodes": Node.objects.count(),
            "gpus": sum(int(str(row["count"])) for row in by_model),
            "spare_gpus": spare_accelerators(),
            "gpus_by_model": by_model,
            "jobs_running": jobs["running"],
            "jobs_pending": jobs["pending"],
        }
        return Response(OverviewSerializer(data).data)
