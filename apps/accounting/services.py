"""Closing usage segments; called by the jobs state machine when a job stops holding devices."""

from __future__ import annotations

from datetime import datetime

from django.db.models import QuerySet

from apps.accounting.models import UsageSegment
from apps.jobs.models import Allocation, Job

FULL = 1000


def held_milli(allocations: QuerySet[Allocation]) -> dict[str, int]:
    """Devices held per accelerator model, in milli-devices."""
    held: dict[str, int] = {}
    for model, devices, shares in allocations.values_list("accelerator_model", "devices", "shares"):
        held[model] = held.get(model, 0) + FULL * len(devices) + sum(m for _d, m in shares)
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
