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


def held_milli_by_job(job_ids: Iterable[int]) -> dict[int, dict[tuple[str, datetime | None], int]]:
    """``held_milli`` of many jobs in one query: job id -> (model, since) -> milli-devices.
    ``since`` is None for what the job was admitted with, the admission time of replicas an
    autoscaler added later."""
    held: defaultdict[int, dict[tuple[str, datetime | None], int]] = defaultdict(dict)
    rows = Allocation.objects.filter(job_id__in=list(job_ids)).values_list(
        "job_id", "accelerator_model", "devices", "shares", "extra", "created_at"
    )
    for job_id, model, devices, shares, extra, created in rows:
        key = (model, created if extra else None)
        held[job_id][key] = held[job_id].get(key, 0) + _milli(devices, shares)
    return held


def _segment(job: Job, model: str, milli: int, started_at: datetime, ended_at: datetime,
             reason: str) -> UsageSegment:  # fmt: skip
    return UsageSegment.objects.create(
        job=job,
        tenant_id=job.tenant_id,
        project_id=job.project_id,
        owner_id=job.owner_id,
        pool_id=job.pool_id,
        accelerator_model=model,
        device_milli=milli,
        started_at=started_at,
        ended_at=ended_at,
        reason=reason,
    )


def close_extra_segments(
    *, job: Job, allocations: QuerySet[Allocation], ended_at: datetime, reason: str
) -> list[UsageSegment]:
    """Bill autoscaler-added replicas (``extra`` allocations) from their own admission."""
    held: defaultdict[tuple[str, datetime], int] = defaultdict(int)
    for model, devices, shares, created in allocations.filter(extra=True).values_list(
        "accelerator_model", "devices", "shares", "created_at"
    ):
        held[(model, created)] += _milli(devices, shares)
    return [
        _segment(job, model, milli, max(created, job.admitted_at or created), ended_at, reason)
        for (model, created), milli in held.items()
        if milli > 0
    ]


def close_segment(*, job: Job, ended_at: datetime, reason: str) -> list[UsageSegment]:
    """Record the hold that ends now. Must run before the job's allocations are deleted."""
    if job.admitted_at is None:
        return []
    held = Allocation.objects.filter(job=job)
    base = [
        _segment(job, model, milli, job.admitted_at, ended_at, reason)
        for model, milli in held_milli(held.filter(extra=False)).items()
        if milli > 0
    ]
    return base + close_extra_segments(job=job, allocations=held, ended_at=ended_at, reason=reason)
