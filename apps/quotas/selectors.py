"""Quota usage: what each tenant holds now per pool and model, from live allocations."""

from __future__ import annotations

from collections import defaultdict

from django.db.models import QuerySet

from apps.jobs.models import HOLDING, Allocation
from apps.quotas.models import Quota

FULL = 1000


def usage_milli(**filters: object) -> dict[tuple[int, int, str], int]:
    """(tenant id, pool id, model) -> milli-devices held by admitted or running work
    (``filters`` narrow the allocations, e.g. to one tenant and pool)."""
    used: defaultdict[tuple[int, int, str], int] = defaultdict(int)
    rows = Allocation.objects.filter(job__state__in=HOLDING, **filters).values_list(
        "job__tenant_id", "job__pool_id", "accelerator_model", "devices", "shares"
    )
    for tenant_id, pool_id, model, devices, shares in rows:
        used[(tenant_id, pool_id, model)] += FULL * len(devices) + sum(m for _d, m in shares)
    return used


def quotas_with_usage(queryset: QuerySet[Quota]) -> list[Quota]:
    used = usage_milli()
    quotas = list(queryset.select_related("tenant", "pool"))
    for q in quotas:
        q.used = used.get((q.tenant_id, q.pool_id, q.accelerator_model), 0) / FULL  # type: ignore[attr-defined]
    return quotas


def quota_usage(quota: Quota) -> float:
    """Devices one quota's tenant holds now in its pool and model."""
    key = (quota.tenant_id, quota.pool_id, quota.accelerator_model)
    used = usage_milli(job__tenant_id=key[0], job__pool_id=key[1], accelerator_model=key[2])
    return used.get(key, 0) / FULL
