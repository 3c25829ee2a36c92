"""Tenant-scoped reads of runs, downsampled metric series, and checkpoints."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from django.db import connection
from django.db.models import QuerySet

from apps.jobs.models import Job
from apps.runs.models import (
    ROLLUP_SHIFTS,
    Checkpoint,
    CheckpointState,
    MetricKey,
    MetricPoint,
    MetricRollup,
    Run,
)
from apps.tenancy.models import Tenant

MAX_POINTS_LIMIT = 20_000


def runs_of(tenant: Tenant) -> QuerySet[Run]:
    return Run.objects.filter(tenant=tenant)


@dataclass(frozen=True)
class CheckpointRequest:
    """A request that a run save a checkpoint, and the checkpoint that served it, if any."""

    requested_at: datetime
    reason: str
    served_by: Checkpoint | None

    @property
    def pending(self) -> bool:
        return self.served_by is None


def checkpoint_request(run: Run) -> CheckpointRequest | None:
    """The run's latest checkpoint request, or None if it never got one. It is served by the
    first checkpoint every rank completed at or after it (one started just before the request
    still saves the work up to it, which is what the request is for)."""
    if run.checkpoint_requested_at is None:
        return None
    served = (
        Checkpoint.objects.filter(
            run=run,
            state=CheckpointState.COMPLETE,
            completed_at__gte=run.checkpoint_requested_at,
        )
        .order_by("completed_at", "id")
        .first()
    )
    return CheckpointRequest(run.checkpoint_requested_at, run.checkpoint_request_reason, served)


def job_checkpoint_request(job: Job) -> CheckpointRequest | None:
    """The latest checkpoint request of the job's run; None without a run or a request."""
    run = Run.objects.filter(job=job).first()
    return checkpoint_request(run) if run is not None else None


def checkpoint_state(job: Job) -> dict[str, object]:
    """What the job page shows: the job's latest checkpoint request (served or not) and its
    newest complete checkpoint, the one a restart or a clone resumes from."""
    asked = job_checkpoint_request(job)
    newest = newest_complete_checkpoint(job)
    return {
        "requested_at": asked.requested_at if asked else None,
        "reason": asked.reason if asked else "",
        "pending": bool(asked and asked.pending),
        "served_step": asked.served_by.step if asked and asked.served_by else None,
        "newest_step": newest.step if newest else None,
        "newest_path": newest.path if newest else None,
        "newest_completed_at": newest.completed_at if newest else None,
    }


def newest_complete_checkpoint(job: Job) -> Checkpoint | None:
    """The checkpoint a restarted job resumes from: the newest one every rank finished."""
    return (
        Checkpoint.objects.filter(job=job, state=CheckpointState.COMPLETE)
        .order_by("-step", "-id")
        .first()
    )


@dataclass
class Series:
    """One metric series, columnar (what chart libraries take)."""

    steps: list[int] = field(default_factory=list)
    values: list[float] = field(default_factory=list)
    count: int = 0  # points stored in the requested range (estimate when downsampled)
    downsampled: bool = False


def _raw(key_id: int, lo: int, hi: int, limit: int | None = None) -> list[tuple[int, float]]:
    qs = (
        MetricPoint.objects.filter(key_id=key_id, step__gte=lo, step__lte=hi)
        .order_by("step")
        .values_list("step", "value")
    )
    return list(qs[:limit] if limit is not None else qs)


_PG_MERGE = """
SELECT (bucket << %s) / %s AS target,
       min(ARRAY[vmin, smin::float8]), max(ARRAY[vmax, smax::float8]), sum(n)
FROM runs_metricrollup
WHERE key_id = %s AND level = %s AND bucket BETWEEN %s AND %s
GROUP BY 1
"""


def _downsample(
    key: MetricKey, lo: int, hi: int, max_points: int, *, portable: bool = False
) -> Series:
    """Min/max per bucket (M4 without first/last): at most ``max_points`` points, each a real
    stored point, so spikes survive. Interior buckets come from the rollup level just finer
    than the target width; the partial edges of a zoomed range come from raw points."""
    buckets = max(2, max_points // 2)
    span = hi - lo + 1
    width = -(-span // (buckets - 1))  # ceil: aligned buckets overlapping [lo, hi] <= buckets
    usable = [s for s in ROLLUP_SHIFTS if (1 << s) <= width]
    cells: dict[int, list[float]] = {}  # target bucket -> [vmin, smin, vmax, smax]
    count = 0

    def add(target: int, vmin: float, smin: int, vmax: float, smax: int) -> None:
        cell = cells.get(target)
        if cell is None:
            cells[target] = [vmin, smin, vmax, smax]
            return
        if vmin < cell[0]:
            cell[0], cell[1] = vmin, smin
        if vmax > cell[2]:
            cell[2], cell[3] = vmax, smax

    if usable:
        shift = usable[-1]
        grain = 1 << shift
        width = -(-width // grain) * grain  # whole rollup buckets per target bucket
        first_full = -(-lo // grain)
        last_full = (hi + 1) // grain - 1
        if connection.vendor == "postgresql" and not portable:
            # Merge the rollup rows into target buckets in the database: at most `buckets`
            # rows come back instead of up to 8x as many.
            with connection.cursor() as cur:
                cur.execute(_PG_MERGE, [shift, width, key.pk, shift, first_full, last_full])
                for target, mn, mx, n in cur.fetchall():
                    add(int(target), mn[0], int(mn[1]), mx[0], int(mx[1]))
                    count += int(n)
        else:
            rows = MetricRollup.objects.filter(
                key_id=key.pk, level=shift, bucket__gte=first_full, bucket__lte=last_full
            ).values_list("bucket", "vmin", "smin", "vmax", "smax", "n")
            for bucket, vmin, smin, vmax, smax, n in rows:
                add((bucket << shift) // width, vmin, smin, vmax, smax)
                count += n
        edges: list[tuple[int, int]] = []
        if first_full > last_full:
            edges.append((lo, hi))
        else:
            edges.append((lo, (first_full << shift) - 1))
            edges.append(((last_full + 1) << shift, hi))
        for a, b in edges:
            if a <= b:
                for s, v in _raw(key.pk, a, b):
                    add(s // width, v, s, v, s)
                    count += 1
    else:
        for s, v in _raw(key.pk, lo, hi):
            add(s // width, v, s, v, s)
            count += 1
    out = Series(count=count, downsampled=True)
    for target in sorted(cells):
        lo_v, lo_s, hi_v, hi_s = cells[target]
        for step_at, value in sorted({(int(lo_s), lo_v), (int(hi_s), hi_v)}):
            out.steps.append(step_at)
            out.values.append(value)
    return out


def metric_series(
    run: Run,
    keys: Sequence[str],
    *,
    max_points: int = 1000,
    step_min: int | None = None,
    step_max: int | None = None,
    portable: bool = False,
) -> dict[str, Series]:
    """Series of ``run`` for ``keys`` (all keys when empty), each at most ``max_points`` long:
    raw when the range holds that few points, else min/max downsampled. ``portable`` forces
    the ORM path (always used on databases other than PostgreSQL)."""
    qs = MetricKey.objects.filter(run=run)
    if keys:
        qs = qs.filter(name__in=keys)
    found = {k.name: k for k in qs}
    result: dict[str, Series] = {}
    for name in keys or sorted(found):
        key = found.get(name)
        if key is None or key.first_step is None or key.last_step is None:
            result[name] = Series()
            continue
        lo = key.first_step if step_min is None else max(step_min, key.first_step)
        hi = key.last_step if step_max is None else min(step_max, key.last_step)
        if lo > hi:
            result[name] = Series()
            continue
        whole = step_min is None and step_max is None
        if whole and key.count > max_points:  # the summary says: too many for raw
            result[name] = _downsample(key, lo, hi, max_points, portable=portable)
            continue
        raw = _raw(key.pk, lo, hi, limit=max_points + 1)
        if len(raw) <= max_points:
            result[name] = Series(
                steps=[s for s, _ in raw], values=[v for _, v in raw], count=len(raw)
            )
        else:
            result[name] = _downsample(key, lo, hi, max_points, portable=portable)
    return result
