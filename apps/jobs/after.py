"""Jobs that start after others (a pipeline: prepare data, then train, then evaluate).

A job submitted with ``after`` (training jobs of its tenant) is queued like any other, but
``waiting_for_jobs`` keeps it out of the scheduler's reach: the snapshot hands it to the core
with the jobs it still waits for, and the core says so as its pending reason (code
``after``) without placing it, holding nodes for it or counting it in its tenant's share.
Once per scheduling cycle, before the snapshot, ``settle`` looks at every such job:

- every job it waits for succeeded: it is let in (``released_at``); it takes its place in
  the queue and its max wait runs from then;
- one of them failed or was cancelled: it is cancelled, since it would never start;
- otherwise it keeps waiting.

Settling in the cycle, rather than when the other job ends, also catches a job submitted
while one it names was ending: nothing is missed, and nothing waits forever.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.db.models import Q

from apps.jobs import services
from apps.jobs.models import Job, JobState
from apps.jobs.notes import note

MAX_AFTER = 16
"""Most jobs one job may start after."""

Through = Job.after.through
NEVER_SUCCEEDS = frozenset({JobState.FAILED, JobState.CANCELLED})


@dataclass(frozen=True)
class Settled:
    released: int = 0
    cancelled: int = 0
    waiting: int = 0


def unmet(job_ids: list[int]) -> dict[int, list[int]]:
    """For each job, the jobs it starts after that have not succeeded, in id order."""
    out: defaultdict[int, list[int]] = defaultdict(list)
    rows = (
        Through.objects.filter(from_job_id__in=job_ids)
        .exclude(to_job__state=JobState.SUCCEEDED)
        .order_by("from_job_id", "to_job_id")
        .values_list("from_job_id", "to_job_id")
    )
    for job_id, before_id in rows:
        out[job_id].append(before_id)
    return out


def settle(now: datetime) -> Settled:
    waiting = list(
        Job.objects.filter(state=JobState.QUEUED, waiting_for_jobs=True).values_list(
            "pk", flat=True
        )
    )
    if not waiting:
        return Settled()
    states: defaultdict[int, list[tuple[int, str, str]]] = defaultdict(list)
    rows = Through.objects.filter(from_job_id__in=waiting).values_list(
        "from_job_id", "to_job_id", "to_job__state", "to_job__name"
    )
    for job_id, before_id, state, name in rows:
        states[job_id].append((before_id, state, name))
    released = cancelled = 0
    for job_id in waiting:
        befores = sorted(states.get(job_id, []))
        ended = next((b for b in befores if b[1] in NEVER_SUCCEEDS), None)
        if ended is not None:
            cancelled += _cancel(job_id, ended)
        elif all(state == JobState.SUCCEEDED for _, state, _ in befores):
            released += _release(job_id, now)
    return Settled(released, cancelled, len(waiting) - released - cancelled)


@transaction.atomic
def _release(job_id: int, now: datetime) -> int:
    # Compare-and-set: a job cancelled meanwhile stays cancelled.
    updated = Job.objects.filter(pk=job_id, state=JobState.QUEUED, waiting_for_jobs=True).update(
        waiting_for_jobs=False, released_at=now
    )
    if updated:
        services.record_event(
            Job.objects.get(pk=job_id), reason="Released", message=note("afterMet")
        )
    return updated


@transaction.atomic
def _cancel(job_id: int, ended: tuple[int, str, str]) -> int:
    job = Job.objects.select_for_update().select_related("tenant").get(pk=job_id)
    if job.state != JobState.QUEUED or not job.waiting_for_jobs:
        return 0
    before_id, state, name = ended
    key = "afterFailed" if state == JobState.FAILED else "afterCancelled"
    services.transition(
        job,
        JobState.CANCELLED,
        reason="DependencyFailed",
        message=note(key, job=before_id, name=name),
        extra={"waiting_for_jobs": False},
    )
    return 1


MAX_PIPELINE_JOBS = 200
"""Most jobs ``pipeline_of`` gathers: enough to draw a pipeline, bounded for a page."""


def pipeline_of(job: Job, limit: int = MAX_PIPELINE_JOBS) -> tuple[list[Job], bool]:
    """The jobs linked to ``job`` through ``after`` in either direction (the jobs it starts
    after, theirs, the jobs that start after it, ...), ``job`` included, in id order; and
    whether more were left out at ``limit``. Links never cross tenants (the API checks), and
    the tenant filter keeps it so. One query per step away from ``job``."""
    seen = {job.pk}
    frontier = {job.pk}
    truncated = False
    while frontier and not truncated:
        rows = Through.objects.filter(
            Q(from_job_id__in=frontier) | Q(to_job_id__in=frontier)
        ).values_list("from_job_id", "to_job_id")
        found = sorted({pk for pair in rows for pk in pair} - seen)
        if len(seen) + len(found) > limit:
            found, truncated = found[: limit - len(seen)], True
        seen.update(found)
        frontier = set(found)
    jobs = Job.objects.filter(tenant_id=job.tenant_id, pk__in=seen)
    jobs = jobs.select_related("owner").prefetch_related("after")
    return list(jobs.order_by("pk")), truncated
