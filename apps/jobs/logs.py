"""Job output: copied from the cluster into the database by a worker, read by the API.

Why a copy: the web process never calls a cluster (ARCHITECTURE.md), and a pod's log is gone
with the pod, while a user reads a failed job's output after it ended. The collector follows
running jobs someone is reading (the logs API marks them for ``FOLLOW_S``), the last words of
every job for ``FINAL_TAIL_S`` after it ends, and the relay copies a job's output right before
it deletes the objects. It asks the cluster interface for lines newer than the newest one
stored and keeps at most ``KEEP_PER_JOB`` lines per job (the newest).
"""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime, timedelta

from django.db.models import Max, OuterRef, Q, Subquery
from django.utils import timezone

from apps.clusters.backends.base import BackendError, ClusterBackend
from apps.clusters.registry import get_backend
from apps.jobs.models import TERMINAL, Job, JobLogFollow, JobLogLine, JobState

log = logging.getLogger("zhisuan.logs")

KEEP_PER_JOB = 5_000
PER_READ = 1_000  # lines asked of the cluster per job and pass
FINAL_TAIL_S = 120  # keep reading a job this long after it ended (its last lines)
MAX_JOBS_PER_PASS = 500
FOLLOW_S = 60  # how long one read of the logs API keeps a running job followed


def want(job: Job, now: datetime | None = None) -> None:
    """A reader is looking at the job's output: follow it for ``FOLLOW_S`` more seconds (one
    write per half period, not per poll)."""
    now = now or timezone.now()
    until = now + timedelta(seconds=FOLLOW_S)
    stale = now + timedelta(seconds=FOLLOW_S / 2)
    if not JobLogFollow.objects.filter(job=job, until__lt=stale).update(until=until):
        JobLogFollow.objects.get_or_create(job=job, defaults={"until": until})


def _jobs_to_follow(now: datetime) -> list[Job]:
    read = Q(state=JobState.RUNNING, log_follow__until__gte=now)
    recent_end = Q(state__in=TERMINAL, state_changed_at__gte=now - timedelta(seconds=FINAL_TAIL_S))
    newest = JobLogLine.objects.filter(job=OuterRef("pk")).order_by("-ts").values("ts")[:1]
    return list(
        Job.objects.filter(read | recent_end)
        .select_related("tenant")
        .annotate(last_log=Subquery(newest))  # one index probe per job, not a scan of lines
        .order_by("id")[:MAX_JOBS_PER_PASS]
    )


def _trim(job: Job) -> None:
    boundary = (
        JobLogLine.objects.filter(job=job).order_by("-ts", "-id").values_list("ts", flat=True)
    )[KEEP_PER_JOB : KEEP_PER_JOB + 1]
    if boundary:
        JobLogLine.objects.filter(job=job, ts__lte=boundary[0]).delete()


def collect_job(backend: ClusterBackend, job: Job, last: datetime | None = None) -> int:
    """Store the job's output newer than its newest stored line; the number of lines stored.
    The relay calls this right before it deletes a job's objects, so a failed attempt's last
    lines are kept. Errors are logged, never raised: logs must not block a delete."""
    if last is None:
        last = JobLogLine.objects.filter(job=job).aggregate(last=Max("ts"))["last"]
    try:
        lines = backend.read_logs(
            job.pk,
            job.tenant.slug,
            job.kind,  # type: ignore[arg-type]
            # stored times are whole microseconds: start one after, or the line stored last
            # (rounded down) would come back as new
            since=last.timestamp() + 1e-6 if last else None,
            limit=PER_READ,
        )
    except BackendError as exc:
        log.warning("reading logs of job %s failed: %s", job.pk, exc)
        return 0
    if not lines:
        return 0
    JobLogLine.objects.bulk_create(
        JobLogLine(
            job=job,
            attempt=job.attempt,
            ts=datetime.fromtimestamp(line.ts, tz=UTC),
            replica=line.replica[:253],
            text=line.text[:2000],
        )
        for line in lines
    )
    _trim(job)
    return len(lines)


def collect(backend: ClusterBackend | None = None) -> int:
    """Copy new output of the jobs being followed; the number of lines stored. Idempotent:
    a line is only stored when it is newer than the newest stored line of its job."""
    backend = backend or get_backend()
    return sum(
        collect_job(backend, job, getattr(job, "last_log", None))
        for job in _jobs_to_follow(timezone.now())
    )


_last_collect = [float("-inf")]


def collect_if_due(interval_s: float = 3.0) -> int:
    """For the embedded ticker (1 s): a pass every few seconds is enough for a log view."""
    now = time.monotonic()
    if now - _last_collect[0] < interval_s:
        return 0
    _last_collect[0] = now
    return collect()


def read(job: Job, *, tail: int, since: datetime | None = None) -> tuple[list[JobLogLine], bool]:
    """The newest ``tail`` stored lines of the job (after ``since``), oldest first, and whether
    older lines were left out."""
    rows = JobLogLine.objects.filter(job=job)
    if since is not None:
        rows = rows.filter(ts__gt=since)
    newest = list(rows.order_by("-ts", "-id")[: tail + 1])
    truncated = len(newest) > tail
    return newest[:tail][::-1], truncated
