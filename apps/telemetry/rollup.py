"""Streaming rollups: per-tick aggregates are averaged into 10 s / 1 min / 10 min buckets in
memory and written once per closed bucket, so PostgreSQL sees a few bulk inserts a minute,
not a row per sample. ``prune`` enforces retention.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.db.models import F
from django.db.models.functions import Greatest
from django.utils import timezone

from apps.telemetry.aggregate import State
from apps.telemetry.models import JobTelemetry, SeriesKind, SeriesPoint

# resolution -> retention
RESOLUTIONS: dict[int, dt.timedelta] = {
    10: dt.timedelta(hours=1),
    60: dt.timedelta(days=1),
    600: dt.timedelta(days=30),
}
NUMERIC = ("gpus", "util", "fb_used_mib", "power_w")


@dataclass
class _Bucket:
    start: int
    n: int = 0
    sums: dict[tuple[str, str], dict[str, float]] = field(default_factory=dict)
    temp: dict[tuple[str, str], float] = field(default_factory=dict)


def _series(state: State) -> dict[tuple[str, str], dict[str, Any]]:
    out: dict[tuple[str, str], dict[str, Any]] = {(SeriesKind.CLUSTER, ""): state.cluster}
    for pid, agg in state.pools.items():
        out[(SeriesKind.POOL, str(pid))] = agg
    for tid, agg in state.tenants.items():
        out[(SeriesKind.TENANT, str(tid))] = agg
    for jid, agg in state.jobs.items():
        out[(SeriesKind.JOB, str(jid))] = agg
    node_gpu: dict[str, dict[str, float]] = {}
    for key, cell in state.cells.items():
        host = key.rsplit(":", 1)[0]
        row = node_gpu.setdefault(host, {"gpus": 0, "util": 0.0, "fb_used_mib": 0, "power_w": 0})
        row["gpus"] += 1
        row["util"] += cell[0]
        row["fb_used_mib"] += cell[1]
        row["power_w"] += cell[3]
        row["temp_max_c"] = max(row.get("temp_max_c", 0.0), cell[2])
    for host, row in node_gpu.items():
        row["util"] = row["util"] / row["gpus"] if row["gpus"] else 0.0
        out[(SeriesKind.NODE, host)] = {**row, **state.nodes.get(host, {})}
    return out


class Rollups:
    """Feed one state per tick; closed buckets are written to PostgreSQL."""

    def __init__(self) -> None:
        self._open: dict[int, _Bucket] = {}
        self._job_last: float | None = None
        self._job_acc: dict[int, list[float]] = {}

    def feed(self, state: State) -> list[SeriesPoint]:
        series = _series(state)
        written: list[SeriesPoint] = []
        for res in RESOLUTIONS:
            start = int(state.at) // res * res
            bucket = self._open.get(res)
            if bucket is not None and bucket.start != start:
                written.extend(self._close(res, bucket))
                bucket = None
            if bucket is None:
                bucket = self._open[res] = _Bucket(start=start)
            bucket.n += 1
            for key, agg in series.items():
                sums = bucket.sums.setdefault(key, {})
                for name, value in agg.items():
                    if name == "temp_max_c":  # a maximum, not a mean: kept below
                        continue
                    sums[name] = sums.get(name, 0.0) + float(value)
                bucket.temp[key] = max(bucket.temp.get(key, 0.0), float(agg.get("temp_max_c", 0)))
        self._accumulate_jobs(state)
        return written

    def _close(self, res: int, bucket: _Bucket) -> list[SeriesPoint]:
        ts = dt.datetime.fromtimestamp(bucket.start, tz=dt.UTC)
        rows = []
        for (kind, key), sums in bucket.sums.items():
            mean = {k: v / bucket.n for k, v in sums.items()}
            rows.append(
                SeriesPoint(
                    kind=kind,
                    key=key,
                    resolution_s=res,
                    ts=ts,
                    gpus=round(mean.pop("gpus", 0)),
                    util=round(mean.pop("util", 0.0), 2),
                    fb_used_mib=round(mean.pop("fb_used_mib", 0.0), 1),
                    power_w=round(mean.pop("power_w", 0.0), 1),
                    temp_max_c=bucket.temp.get((kind, key), 0.0),
                    extra={k: round(v, 1) for k, v in mean.items()},
                )
            )
        SeriesPoint.objects.bulk_create(rows, ignore_conflicts=True, batch_size=1000)
        if res == 10:
            self.flush_jobs()
        return rows

    def flush(self) -> list[SeriesPoint]:
        """Write every open bucket as it stands (a mean of the ticks so far) and the jobs'
        accumulated usage: for a collector that stops. The restarted collector's row for
        the same bucket is then dropped by the unique key, not doubled."""
        written: list[SeriesPoint] = []
        for res, bucket in sorted(self._open.items()):
            written.extend(self._close(res, bucket))
        self._open.clear()
        self.flush_jobs()
        return written

    def _accumulate_jobs(self, state: State) -> None:
        dt_s = 0.0 if self._job_last is None else min(10.0, max(0.0, state.at - self._job_last))
        self._job_last = state.at
        for jid, agg in state.jobs.items():
            acc = self._job_acc.setdefault(jid, [0.0, 0.0, 0.0, 0.0])
            gpus = float(agg["gpus"])
            acc[0] += gpus * dt_s
            acc[1] += float(agg["util"]) * gpus * dt_s
            acc[2] += float(agg["power_w"]) * dt_s
            acc[3] = max(acc[3], float(agg["fb_used_mib"]))

    def flush_jobs(self) -> None:
        """Add the accumulated GPU-seconds, utilization and energy to each job's totals."""
        pending, self._job_acc = self._job_acc, {}
        if not pending:
            return
        from apps.jobs.models import Job

        existing = set(Job.objects.filter(id__in=pending).values_list("id", flat=True))
        with transaction.atomic():
            JobTelemetry.objects.bulk_create(
                [JobTelemetry(job_id=j) for j in existing], ignore_conflicts=True
            )
            for jid in sorted(existing):
                gpu_s, util_s, energy, peak = pending[jid]
                JobTelemetry.objects.filter(job_id=jid).update(
                    gpu_seconds=F("gpu_seconds") + gpu_s,
                    util_gpu_seconds=F("util_gpu_seconds") + util_s,
                    energy_joules=F("energy_joules") + energy,
                    fb_used_peak_mib=Greatest(F("fb_used_peak_mib"), peak),
                    updated_at=timezone.now(),
                )


def prune(now: dt.datetime | None = None) -> int:
    """Delete buckets past their resolution's retention; returns rows deleted."""
    now = now or timezone.now()
    deleted = 0
    for res, keep in RESOLUTIONS.items():
        deleted += SeriesPoint.objects.filter(resolution_s=res, ts__lt=now - keep).delete()[0]
    return deleted
