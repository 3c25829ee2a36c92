"""Expected start times of queued jobs, refreshed about once a minute.

The core runs the queue forward on declared runtimes (``core.forecast``) with the policy the
live loop runs; each queued job keeps the answer in ``Job.expected_start_at`` (null when it
does not start within the forecast's horizon) and when it was made in
``expected_start_as_of``. A job that leaves the queue loses both (``jobs.services``).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone

from apps.jobs.models import Job, JobState
from apps.scheduling import snapshot
from apps.scheduling.core.forecast import forecast_starts
from apps.scheduling.loop import live_policy

log = logging.getLogger("zhisuan.scheduler")

INTERVAL_S = 60.0


@dataclass(frozen=True)
class Refreshed:
    queued: int
    forecast: int  # queued jobs with a start within the horizon
    cycles: int
    ms: float


def refresh(now: datetime | None = None) -> Refreshed:
    """Forecast every queued job's start and store it."""
    started = time.perf_counter()
    now = now or timezone.now()
    inputs = snapshot.build(now)
    if not inputs.queue:
        return Refreshed(0, 0, 0, 0.0)
    result = forecast_starts(inputs.snapshot, inputs.queue, live_policy(inputs.snapshot), now)
    rows = [
        Job(pk=int(j.job_id), expected_start_at=result.starts.get(j.job_id),
            expected_start_as_of=now)
        for j in inputs.queue
    ]  # fmt: skip
    # Only jobs still queued: one admitted meanwhile keeps the empty fields its transition
    # left (bulk_update filters through this queryset).
    Job.objects.filter(state=JobState.QUEUED).bulk_update(
        rows, ["expected_start_at", "expected_start_as_of"], batch_size=500
    )
    ms = (time.perf_counter() - started) * 1000
    log.debug("forecast: %d queued, %d start within the horizon (%d cycles, %.0f ms)",
              len(rows), len(result.starts), result.cycles, ms)  # fmt: skip
    return Refreshed(len(rows), len(result.starts), result.cycles, ms)


_last = [float("-inf")]


def refresh_if_due(interval_s: float = INTERVAL_S) -> Refreshed | None:
    """For the embedded ticker (1 s): at most one forecast per ``interval_s``."""
    now = time.monotonic()
    if now - _last[0] < interval_s:
        return None
    _last[0] = now
    return refresh()
