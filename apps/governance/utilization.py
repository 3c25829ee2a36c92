"""Where recent GPU utilization of a job comes from.

The governance loop asks one question: "what was the highest utilization of this job's GPUs
during [start, end), and is there enough data to trust the answer?". The default provider reads
the telemetry rollups (1-minute job series, kept a day); a Prometheus/DCGM provider can replace
it without touching the policy code. No data, or too little, means "unknown", and an unknown
job is never flagged: governance must not stop work on missing evidence.
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from django.db.models import Avg, Count, Max

from apps.jobs.models import Job
from apps.telemetry.models import JobTelemetry, SeriesKind, SeriesPoint

RESOLUTION_S = 60
WINDOW_RESOLUTION_S = 600  # the efficiency report's window mean: 10-minute buckets
MIN_COVERAGE = 0.8  # share of the window that must have samples


class UtilizationProvider(Protocol):
    def peak_util(
        self, job: Job, start: datetime, end: datetime, *, min_coverage: float = MIN_COVERAGE
    ) -> float | None:
        """Highest per-bucket mean GPU utilization (%) of the job in [start, end), or None when
        samples cover less than ``min_coverage`` of the window (0: any one sample will do)."""
        ...

    def mean_util(
        self, job_ids: list[int], start: datetime | None = None, end: datetime | None = None
    ) -> dict[int, float]:
        """Mean GPU utilization (%) of the jobs that have any telemetry: over [start, end)
        where samples there say it, else over the job's lifetime."""
        ...


class TelemetryUtilization:
    """Reads ``SeriesPoint`` (kind job, 1-minute buckets) and ``JobTelemetry`` totals."""

    def peak_util(
        self, job: Job, start: datetime, end: datetime, *, min_coverage: float = MIN_COVERAGE
    ) -> float | None:
        found = SeriesPoint.objects.filter(
            kind=SeriesKind.JOB,
            key=str(job.pk),
            resolution_s=RESOLUTION_S,
            ts__gte=start,
            ts__lt=end,
        ).aggregate(peak=Max("util"), n=Count("id"))
        window_s = (end - start).total_seconds()
        if not found["n"] or found["n"] * RESOLUTION_S < min_coverage * window_s:
            return None
        return float(found["peak"])

    def mean_util(
        self, job_ids: list[int], start: datetime | None = None, end: datetime | None = None
    ) -> dict[int, float]:
        rows = JobTelemetry.objects.filter(job_id__in=job_ids, gpu_seconds__gt=0)
        means = {row.job_id: row.mean_util for row in rows}
        if start is None or end is None or not job_ids:
            return means
        # The window's own mean from the 10-minute job series (kept 30 days): a job busy
        # last month and idle this week reads idle for this week. Older windows, or jobs
        # without samples there, keep the lifetime mean.
        window = (
            SeriesPoint.objects.filter(
                kind=SeriesKind.JOB,
                key__in=[str(j) for j in job_ids],
                resolution_s=WINDOW_RESOLUTION_S,
                ts__gte=start,
                ts__lt=end,
            )
            .values("key")
            .annotate(mean=Avg("util"))
        )
        means.update({int(row["key"]): float(row["mean"]) for row in window})
        return means


_provider: UtilizationProvider = TelemetryUtilization()


def get_provider() -> UtilizationProvider:
    return _provider


def set_provider(provider: UtilizationProvider | None) -> None:
    """Swap the process's provider (a Prometheus reader in production; None restores the
    telemetry one)."""
    global _provider
    _provider = provider or TelemetryUtilization()
