"""Reads over clusters, pools and nodes."""

from __future__ import annotations

from django.db.models import Count, OuterRef, QuerySet, Subquery, Sum
from django.db.models.functions import Coalesce

from apps.clusters.models import Cluster, Node


def clusters_with_counts() -> QuerySet[Cluster]:
    """Clusters annotated with pool, node and accelerator counts in one query."""
    # The GPU sum is a subquery: summed over the pools x nodes join, each node counted once
    # per pool of its cluster (320 for a 160-GPU cluster of two pools).
    gpus = (
        Node.objects.filter(cluster=OuterRef("pk"), is_spare=False)
        .order_by()
        .values("cluster")
        .annotate(n=Sum("accelerator_count"))
        .values("n")
    )
    return Cluster.objects.annotate(
        pool_count=Count("pools", distinct=True),
        node_count=Count("nodes", distinct=True),
        gpu_count=Coalesce(Subquery(gpus), 0),
    )


def spare_accelerators() -> int:
    """Accelerators held back on hot-spare nodes (not schedulable until substituted)."""
    total = Node.objects.filter(is_spare=True).aggregate(n=Sum("accelerator_count"))["n"]
    return int(total or 0)


def accelerators_by_model() -> list[dict[str, object]]:
    """Schedulable accelerators (spares excluded) per model and vendor."""
    rows = (
        Node.objects.filter(is_spare=False, accelerator_count__gt=0)
        .values("accelerator_model", "accelerator_vendor")
        .annotate(count=Sum("accelerator_count"))
        .order_by("-count", "accelerator_model")
    )
    return [
        {"model": r["accelerator_model"], "vendor": r["accelerator_vendor"], "count": r["count"]}
        for r in rows
    ]
