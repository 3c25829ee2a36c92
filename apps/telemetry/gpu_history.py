"""History of one GPU: its utilization, memory, temperature, power and SM activity over time.

Per-GPU history is not stored in PostgreSQL (10,000 GPUs x 360 points an hour would dominate
it). Where it comes from:

* **Prometheus** (``ZS_TELEMETRY_SOURCE=prometheus``): ``query_range`` over the DCGM
  exporter's series of that GPU (labels ``Hostname`` and ``gpu``), as far back as Prometheus
  keeps them.
* **Recent** (the embedded default's simulated source): the collector keeps one sample per
  GPU every ``STEP_S`` seconds for the last ``KEEP_S`` in this process's memory
  (``RecentGpuHistory``). A deployment whose collector runs in another process (``REDIS_URL``
  set) without Prometheus has none to offer, and says so.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass

from apps.telemetry import metrics as m
from apps.telemetry.sources.prometheus import PrometheusSource

STEP_S = 10
KEEP_S = 3600
FIELDS = ("util", "fb_used_pct", "power_w", "temp_c", "sm_active_pct")


@dataclass(frozen=True, slots=True)
class GpuPoint:
    t: float  # epoch seconds
    util: float  # %
    fb_used_pct: float  # % of the GPU's memory in use
    power_w: float
    temp_c: float
    sm_active_pct: float  # % of SM cycles with a warp resident (DCGM's SM_ACTIVE x 100)


def point_of(t: float, values: dict[str, float]) -> GpuPoint:
    """One point from a sample's DCGM values (missing ones read 0)."""
    used, free = values.get(m.FB_USED, 0.0), values.get(m.FB_FREE, 0.0)
    return GpuPoint(
        t=t,
        util=round(values.get(m.GPU_UTIL, 0.0), 1),
        fb_used_pct=round(100 * used / (used + free), 1) if used + free > 0 else 0.0,
        power_w=round(values.get(m.POWER, 0.0), 1),
        temp_c=round(values.get(m.GPU_TEMP, 0.0), 1),
        sm_active_pct=round(100 * values.get(m.SM_ACTIVE, 0.0), 1),
    )


class RecentGpuHistory:
    """The last ``keep_s`` seconds of every GPU, one point per ``step_s`` (the first sample
    of each step: a tick costs one comparison until a step is due)."""

    def __init__(self, step_s: int = STEP_S, keep_s: int = KEEP_S) -> None:
        self.step_s = step_s
        self._points: dict[tuple[str, int], deque[GpuPoint]] = {}
        self._size = keep_s // step_s
        self._last_step = -1
        self._lock = threading.Lock()

    def record(self, collection: m.Collection) -> bool:
        """Keep the collection's GPUs when a new step began; True when it did."""
        step = int(collection.at // self.step_s)
        if step == self._last_step:
            return False
        self._last_step = step
        with self._lock:
            for sample in collection.gpus:
                key = (sample.hostname, sample.gpu)
                ring = self._points.get(key)
                if ring is None:
                    ring = self._points[key] = deque(maxlen=self._size)
                ring.append(point_of(collection.at, sample.values))
        return True

    def points(self, node: str, gpu: int, start: float, end: float) -> list[GpuPoint]:
        with self._lock:
            ring = list(self._points.get((node, gpu), ()))
        return [p for p in ring if start <= p.t < end]


# The embedded default's collector feeds this one (its thread and the web share the process).
RECENT = RecentGpuHistory()


def _label(value: str) -> str:
    """A PromQL string literal's content: backslash and double quote escaped."""
    return value.replace("\\", "\\\\").replace('"', '\\"')


def prometheus_points(
    source: PrometheusSource, node: str, gpu: int, start: float, end: float, step_s: int
) -> list[GpuPoint]:
    """The GPU's series from Prometheus between ``start`` and ``end``, ``step_s`` apart."""
    selector = f'{{Hostname="{_label(node)}",gpu="{gpu}"}}'
    names = (m.GPU_UTIL, m.FB_USED, m.FB_FREE, m.POWER, m.GPU_TEMP, m.SM_ACTIVE)
    by_time: dict[float, dict[str, float]] = {}
    for name in names:
        # max: one value per instant even when the exporter is scraped twice (two jobs).
        for series in source.query_range(f"max({name}{selector})", start, end, step_s):
            for t, value in series.get("values", []):
                by_time.setdefault(float(t), {})[name] = float(value)
    return [point_of(t, by_time[t]) for t in sorted(by_time)]
