"""Quota usage: what each tenant holds now per pool and model, from live allocations."""

from __future__ import annotations

from collections import defaultdict

from django.db.models import QuerySet

from apps.jobs.models import HOLDING, Allocation
from apps.quotas.models import Quota

FULL = 1000


def usage_milli() -> dict[tuple[int, int, str], int]:
    """(tenant id, pool id, model) -> milli-devices held by admitted or running work."""
    used: defaultdict[tuple[int, int, str], int] = defaultdict(int)
    rows = Allocation.objects.filter(job__state__in=HOLDING).values_list(
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
