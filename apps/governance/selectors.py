"""Tenant-scoped reads: the efficiency view (reserved vs used GPU-hours, idle reclaimed)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from apps.accounting.selectors import usage_report
from apps.governance.models import FlagState, IdleFlag, QueueAction, QueueFlag
from apps.governance.utilization import UtilizationProvider, get_provider
from apps.tenancy.models import Tenant


@dataclass(frozen=True)
class Efficiency:
    start: datetime
    end: datetime
    reserved_gpu_hours: float
    used_gpu_hours: float
    unknown_util_gpu_hours: float
    utilization_pct: float | None
    idle_reclaimed_gpu_hours: float
    jobs_stopped_idle: int
    jobs_expired_in_queue: int


def efficiency(
    *,
    tenant: Tenant,
    start: datetime,
    end: datetime,
    now: datetime,
    provider: UtilizationProvider | None = None,
) -> Efficiency:
    """Reserved GPU-hours come from accounting (closed holds + holds open now). Used = reserved
    x the job's mean utilization where telemetry knows it (over the window where its 10-minute
    samples cover it, else over its lifetime); the rest is reported as unknown, not
    guessed. Reclaimed = devices each idle stop freed x the time from the stop to the end of
    the window (what the idle job would otherwise have kept holding, bounded by the window)."""
    rows = usage_report(group_by="job", start=start, end=end, now=now, tenant_ids=[tenant.pk])
    means = (provider or get_provider()).mean_util([int(r.key) for r in rows], start, end)
    reserved = used = unknown = 0.0
    for row in rows:
        reserved += row.device_hours
        if int(row.key) in means:
            used += row.device_hours * means[int(row.key)] / 100
        else:
            unknown += row.device_hours
    stopped = IdleFlag.objects.filter(
        tenant=tenant, state=FlagState.STOPPED, stopped_at__gte=start, stopped_at__lt=end
    )
    horizon = min(end, now)
    reclaimed = sum(
        f.device_milli / 1000 * max(0.0, (horizon - f.stopped_at).total_seconds()) / 3600
        for f in stopped
        if f.stopped_at is not None
    )
    known = reserved - unknown
    return Efficiency(
        start=start,
        end=end,
        reserved_gpu_hours=round(reserved, 6),
        used_gpu_hours=round(used, 6),
        unknown_util_gpu_hours=round(unknown, 6),
        utilization_pct=round(used / known * 100, 2) if known > 0 else None,
        idle_reclaimed_gpu_hours=round(reclaimed, 6),
        jobs_stopped_idle=stopped.count(),
        jobs_expired_in_queue=QueueFlag.objects.filter(
            tenant=tenant, action=QueueAction.EXPIRE, created_at__gte=start, created_at__lt=end
        ).count(),
    )
