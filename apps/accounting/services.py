"""Closing usage segments; called by the jobs state machine when a job stops holding devices."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime

from django.db.models import QuerySet

from apps.accounting.models import UsageSegment
from apps.jobs.models import Allocation, Job

FULL = 1000


def _milli(devices: list[int], shares: list[tuple[int, int]]) -> int:
    return FULL * len(devices) + sum(m for _d, m in shares)


def held_milli(allocations: QuerySet[Allocation]) -> dict[str, int]:
    """Devices held per accelerator model, in milli-devices."""
    held: dict[str, int] = {}
    for model, devices, shares in allocations.values_list("accelerator_model", "devices", "shares"):
        held[model] = held.get(model, 0) + _milli(devices, shares)
    return held


def held_milli_by_job(job_ids: Iterable[int]) -> dict[int, dict[str, int]]:
    """``held_milli`` of many jobs in one query: job id -> model -> milli-devices."""
    held: defaultdict[int, dict[str, int]] = defaultdict(dict)
    rows = Allocation.objects.filter(job_id__in=list(job_ids)).values_list(
        "job_id", "accelerator_model", "devices", "shares"
    )
    for job_id, model, devices, shares in rows:
        held[job_id][model] = held[job_id].get(model, 0) + _milli(devices, shares)
    return held


def close_segment(*, job: Job, ended_at: datetime, reason: str) -> list[UsageSegment]:
    """Record the hold that ends now. Must run before the job's allocations are deleted."""
    if job.admitted_at is None:
        return []
    return [
        UsageSegment.objects.create(
            job=job,
            tenant_id=job.tenant_id,
            project_id=job.project_id,
            owner_id=job.owner_id,
            pool_id=job.pool_id,
            accelerator_model=model,
            device_milli=milli,
            started_at=job.admitted_at,
            ended_at=ended_at,
            reason=reason,
        )
        for model, milli in held_milli(Allocation.objects.filter(job=job)).items()
        if milli > 0
    ]
