"""The baseline: a plain Kubernetes HorizontalPodAutoscaler (autoscaling/v2) on a
utilization metric, as the controller computes it by default.

* every ``sync_s`` (15 s) it reads the metric averaged over the last ``metric_window_s``;
* ``desired = ceil(current * utilization / target)``, where replicas that are not ready yet
  count as 0 % when scaling up (the controller's conservative rule) and a ratio within
  ``tolerance`` (10 %) of 1 changes nothing;
* scale-up policy: at most ``max(4 pods, +100 %)`` per period; scale-down: the highest
  recommendation of the last ``stabilization_s`` (300 s) wins;
* never below ``min_replicas`` (>= 1: a HPA cannot scale to zero).

The utilization here is the replica's batch occupancy (running sequences / max batch), the
analogue of vLLM's KV-cache usage gauge that people put behind a HPA. No Django import.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

from apps.inference.autoscale.scaler import Decision


@dataclass(frozen=True)
class HpaConfig:
    target_utilization: float = 0.5
    min_replicas: int = 1
    max_replicas: int = 10
    sync_s: float = 15.0
    metric_window_s: float = 15.0
    stabilization_s: float = 300.0
    tolerance: float = 0.1

    def __post_init__(self) -> None:
        if not 0 < self.target_utilization <= 1:
            raise ValueError("target_utilization must be in (0, 1]")
        if not 1 <= self.min_replicas <= self.max_replicas:
            raise ValueError("need 1 <= min_replicas <= max_replicas")


class HpaPolicy:
    def __init__(self, config: HpaConfig) -> None:
        self.config = config
        self._samples: deque[tuple[float, float]] = deque()
        self._recommendations: deque[tuple[float, int]] = deque()
        self._next_sync = 0.0
        self._last_desired: int | None = None

    def observe(self, t: float, mean_utilization: float) -> None:
        """Mean utilization (0..1) over the ready replicas, once a second."""
        self._samples.append((t, mean_utilization))
        while self._samples and self._samples[0][0] <= t - self.config.metric_window_s:
            self._samples.popleft()

    def decide(self, t: float, ready: int, loading: int) -> Decision:
        cfg = self.config
        current = ready + loading
        util = sum(v for _, v in self._samples) / len(self._samples) if self._samples else 0.0
        if t < self._next_sync:
            desired = self._last_desired if self._last_desired is not None else current
            return Decision(t, current, ready, desired, util, util, False, "between syncs")
        self._next_sync = t + cfg.sync_s
        reason = "steady"
        ratio = util * ready / (cfg.target_utilization * max(1, current))
        if abs(ratio - 1) <= cfg.tolerance or current == 0:
            recommended = max(current, cfg.min_replicas)
        else:
            recommended = math.ceil(util * ready / cfg.target_utilization - 1e-9)
        recommended = max(cfg.min_replicas, min(cfg.max_replicas, recommended))
        self._recommendations.append((t, recommended))
        while self._recommendations and self._recommendations[0][0] <= t - cfg.stabilization_s:
            self._recommendations.popleft()
        desired = recommended
        if recommended < current:
            desired = min(current, max(r for _, r in self._recommendations))
            reason = "scale-down" if desired < current else "hold (stabilization)"
        elif recommended > current:
            desired = min(recommended, max(current + 4, 2 * current))
            reason = "scale-up"
        self._last_desired = desired
        return Decision(t, current, ready, desired, util, util, False, reason)
