"""Mirror quotas onto the cluster: one Volcano Queue per tenant x pool (guarantee/capability)."""

from __future__ import annotations

from collections import defaultdict

from celery import shared_task

from apps.clusters.registry import accelerator_resource, get_backend
from apps.jobs.workload import queue_name
from apps.quotas.models import Quota


def sync_queues() -> int:
    """Create or update every queue; idempotent, so it runs after each edit and periodically."""
    guarantee: defaultdict[str, dict[str, int]] = defaultdict(dict)
    capability: defaultdict[str, dict[str, int]] = defaultdict(dict)
    weight: dict[str, int] = {}
    quotas = Quota.objects.select_related("tenant", "pool")
    for q in quotas:
        name = queue_name(q.tenant.slug, q.pool.name)
        vendor = q.pool.nodes.filter(accelerator_model=q.accelerator_model).values_list(
            "accelerator_vendor", flat=True
        )
        resource = accelerator_resource(vendor.first() or "nvidia") or "nvidia.com/gpu"
        guarantee[name][resource] = guarantee[name].get(resource, 0) + q.guarantee
        capability[name][resource] = (
            capability[name].get(resource, 0) + q.guarantee + q.borrow_limit
        )
        weight[name] = max(weight.get(name, 1), q.weight)
    backend = get_backend()
    for name in guarantee:
        backend.ensure_queue(name, guarantee[name], capability[name], weight=weight[name])
    return len(guarantee)


@shared_task(acks_late=True, ignore_result=True)
def sync_cluster_queues() -> int:
    return sync_queues()
