"""Our request-driven autoscaler: Knative-style stable and panic windows, made cold-start aware.

The rules, in the order ``decide`` applies them:

1. **Windows.** Every observation (one a second) goes into a sliding window. The *stable*
   average (60 s) drives normal scaling; the *panic* average (6 s) reacts to bursts. When the
   panic window asks for at least ``panic_threshold`` (2x) the ready replicas, the scaler enters
   panic mode: it scales on the panic window and never scales down, until the stable window has
   passed without another panic signal.
2. **Cold-start awareness.** A replica is useless for ``cold_start_s`` after it is asked for,
   so the scaler also sizes for the load it projects at the moment a new replica would be
   ready: the stable window's least-squares trend (upwards only, at most doubling the stable
   average). Replicas still loading count as capacity already asked for, so a backlog that
   builds while they load does not trigger a second round of replicas.
   With ``forecast_quantile`` set, the scaler instead sizes for that quantile of the *peak*
   load over the next cold start plus panic window (``forecast.QuantileForecast``: a level
   plus headroom learnt online from the errors of its own past forecasts; the trend rule
   stands in until it has scored enough of them). The forecast is what a replica removed now
   would have to cover before it could be back, so it is also the scale-down floor.
3. **Scale-down protection.** A lower recommendation only takes effect once every
   recommendation over ``scale_down_delay_s`` was that low (the maximum over the delay wins),
   and one decision removes at most ``1 - 1/max_scale_down_rate`` of the replicas.
4. **Max scale-up rate.** One decision multiplies the replicas by at most
   ``max_scale_up_rate`` (from zero: to at most ``max_scale_up_rate`` replicas).
5. **Scale to zero.** With ``scale_to_zero`` on and ``min_replicas`` 0, a service with no
   traffic for the whole stable window plus ``scale_to_zero_grace_s`` goes to zero; the first
   request wakes it (activation) without waiting for a window.

Every call returns a :class:`Decision` with its inputs, so the product can record why.
No Django import.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from typing import Literal

from apps.inference.autoscale.forecast import QuantileForecast

TargetMetric = Literal["concurrency", "qps", "latency"]
TARGET_METRICS: tuple[TargetMetric, ...] = ("concurrency", "qps", "latency")


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(message)


@dataclass(frozen=True)
class ScalerConfig:
    """Settings of one service's autoscaler. ``target`` is per replica: in-flight requests
    (concurrency), requests per second (qps), or the p95 latency in seconds (latency)."""

    metric: TargetMetric = "concurrency"
    target: float = 24.0
    min_replicas: int = 1
    max_replicas: int = 10
    scale_to_zero: bool = False
    scale_to_zero_grace_s: float = 30.0
    stable_window_s: float = 60.0
    panic_window_s: float = 6.0
    panic_threshold: float = 2.0
    scale_down_delay_s: float = 300.0
    burst_hold_s: float = 120.0
    max_scale_up_rate: float = 10.0
    max_scale_down_rate: float = 2.0
    cold_start_s: float = 60.0
    trend_aware: bool = True
    forecast_quantile: float | None = None
    forecast_base_window_s: float = 300.0

    def __post_init__(self) -> None:
        _require(self.metric in TARGET_METRICS, f"unknown metric {self.metric!r}")
        _require(self.target > 0, "target must be > 0")
        _require(self.min_replicas >= 0, "min_replicas must be >= 0")
        _require(self.max_replicas >= 1, "max_replicas must be >= 1")
        _require(self.min_replicas <= self.max_replicas, "min_replicas must be <= max_replicas")
        _require(
            0 < self.panic_window_s <= self.stable_window_s,
            "panic window must be > 0 and not longer than the stable window",
        )
        _require(self.panic_threshold > 1, "panic_threshold must be > 1")
        _require(self.scale_down_delay_s >= 0, "scale_down_delay_s must be >= 0")
        _require(self.max_scale_up_rate > 1, "max_scale_up_rate must be > 1")
        _require(self.max_scale_down_rate > 1, "max_scale_down_rate must be > 1")
        _require(self.cold_start_s >= 0, "cold_start_s must be >= 0")
        _require(self.scale_to_zero_grace_s >= 0, "scale_to_zero_grace_s must be >= 0")
        _require(
            self.forecast_quantile is None or 0 < self.forecast_quantile < 1,
            "forecast_quantile must be in (0, 1)",
        )
        _require(self.forecast_base_window_s > 0, "forecast_base_window_s must be > 0")

    @property
    def floor(self) -> int:
        """Fewest replicas while there is (or recently was) traffic."""
        return max(1, self.min_replicas)


@dataclass(frozen=True)
class Decision:
    """One run of the scaler: what it saw, what it wants, and why."""

    t: float
    current: int
    ready: int
    desired: int
    observed_stable: float
    observed_panic: float
    panic: bool
    reason: str

    @property
    def changed(self) -> bool:
        return self.desired != self.current


class _Window:
    """Per-second samples (t, value) kept for ``span`` seconds."""

    def __init__(self, span: float) -> None:
        self.span = span
        self.samples: deque[tuple[float, float]] = deque()

    def add(self, t: float, value: float) -> None:
        self.samples.append((t, value))
        while self.samples and self.samples[0][0] <= t - self.span:
            self.samples.popleft()

    def average(self, now: float, span: float) -> float:
        values = [v for t, v in self.samples if t > now - span]
        return sum(values) / len(values) if values else 0.0

    def slope(self) -> float:
        """Least-squares slope (per second) of the samples; 0 with fewer than 2."""
        n = len(self.samples)
        if n < 2:
            return 0.0
        mt = sum(t for t, _ in self.samples) / n
        mv = sum(v for _, v in self.samples) / n
        den = sum((t - mt) ** 2 for t, _ in self.samples)
        return sum((t - mt) * (v - mv) for t, v in self.samples) / den if den else 0.0


def _forecast_key(config: ScalerConfig) -> tuple[object, ...]:
    return (
        config.metric,
        config.forecast_quantile,
        config.target,
        config.cold_start_s + config.panic_window_s,
        config.forecast_base_window_s,
    )


def _forecast_for(config: ScalerConfig) -> QuantileForecast | None:
    """The cold-start forecast, for a throughput or concurrency target with a quantile."""
    if config.forecast_quantile is None or config.metric == "latency":
        return None
    return QuantileForecast(
        horizon_s=config.cold_start_s + config.panic_window_s,
        quantile=config.forecast_quantile,
        unit=config.target,
        base_window_s=config.forecast_base_window_s,
    )


class Autoscaler:
    """Feed ``observe`` once a second, call ``decide`` every couple of seconds."""

    def __init__(self, config: ScalerConfig) -> None:
        self.config = config
        self._window = _Window(config.stable_window_s)
        self._forecast = _forecast_for(config)
        self._recommendations: deque[tuple[float, int]] = deque()
        self._bursts: deque[tuple[float, int]] = deque()
        self._panic_until: float | None = None
        self._last_traffic: float | None = None
        self._panic_peak = 0

    def reconfigure(self, config: ScalerConfig) -> None:
        """Take new settings and keep what was seen: the held recommendations (a settings
        change must not skip the scale-down delay), panic mode and, while the metric is the
        same, its samples."""
        old, self.config = self.config, config
        if config.metric != old.metric:
            self._window = _Window(config.stable_window_s)  # samples of another metric
            self._forecast = _forecast_for(config)
            return
        self._window.span = config.stable_window_s
        if _forecast_key(config) != _forecast_key(old):
            self._forecast = _forecast_for(config)
            if self._forecast is not None:
                for t, value in self._window.samples:
                    self._forecast.add(t, value)

    def observe(self, t: float, value: float) -> None:
        """One sample of the service's total metric (all replicas), or p95 for latency."""
        self._window.add(t, max(0.0, value))
        if self._forecast is not None:
            self._forecast.add(t, max(0.0, value))
        if value > 0:
            self._last_traffic = t

    def _per_replica(self, value: float, ready: int) -> float:
        """Replicas needed for ``value``. For latency, proportional like a HPA: the ready
        replicas scaled by how far the observed p95 is from the target."""
        cfg = self.config
        if cfg.metric == "latency":
            return max(1, ready) * value / cfg.target if value > 0 else 0.0
        return value / cfg.target

    def decide(self, t: float, ready: int, loading: int) -> Decision:
        cfg = self.config
        current = ready + loading
        stable = self._window.average(t, cfg.stable_window_s)
        panic_avg = self._window.average(t, cfg.panic_window_s)
        want_stable = math.ceil(self._per_replica(stable, ready) - 1e-9)
        want_panic = math.ceil(self._per_replica(panic_avg, ready) - 1e-9)
        reason = "steady"

        # 1. panic mode: entered on a burst, left after a quiet stable window
        if (ready and want_panic >= cfg.panic_threshold * ready) or (
            not ready and want_panic >= cfg.panic_threshold and current
        ):
            if self._panic_until is None:
                self._panic_peak = current
            self._panic_until = t + cfg.stable_window_s
        elif self._panic_until is not None and t >= self._panic_until:
            self._panic_until = None
        panic = self._panic_until is not None

        desired = want_stable
        # 2. cold-start awareness: size for the load when a new replica would be ready
        forecast = self._forecast.forecast() if self._forecast is not None else None
        if forecast is not None:
            want_forecast = math.ceil(self._per_replica(forecast, ready) - 1e-9)
            if want_forecast > desired:
                desired, reason = want_forecast, "forecast"
        elif cfg.trend_aware and cfg.metric != "latency":
            slope = self._window.slope()
            if slope > 0 and stable > 0:
                lead = cfg.stable_window_s / 2 + cfg.cold_start_s
                projected = min(2 * stable, stable + slope * lead)
                want_trend = math.ceil(self._per_replica(projected, ready) - 1e-9)
                if want_trend > desired:
                    desired, reason = want_trend, "trend"
        if panic:
            # never scale down in panic; the panic window decides if it asks for more
            self._panic_peak = max(self._panic_peak, want_panic, desired, current)
            desired, reason = self._panic_peak, "panic"
        elif desired > current and reason == "steady":
            reason = "scale-up"

        # 5. activation and scale to zero
        idle_for = t - self._last_traffic if self._last_traffic is not None else math.inf
        if cfg.scale_to_zero and cfg.min_replicas == 0 and stable == 0:
            if idle_for >= cfg.stable_window_s + cfg.scale_to_zero_grace_s:
                desired, reason = 0, "scale-to-zero"
            else:
                desired = max(desired, min(current, 1))
        elif desired < cfg.floor:
            desired = cfg.floor
        if current == 0 and panic_avg > 0:
            desired, reason = max(desired, 1), "activate"

        # 3. scale-down protection. The stable-window recommendation is held for the whole
        # delay; trend and panic sizes (spikier) for ``burst_hold_s``: holding their spikes for
        # the whole delay keeps a noisy service over-provisioned, dropping them at once thrashes.
        self._recommendations.append((t, max(want_stable, min(desired, cfg.floor))))
        self._bursts.append((t, desired))
        while self._recommendations and self._recommendations[0][0] <= t - cfg.scale_down_delay_s:
            self._recommendations.popleft()
        while self._bursts and self._bursts[0][0] <= t - cfg.burst_hold_s:
            self._bursts.popleft()
        if desired < current and reason != "scale-to-zero":
            held = max(
                max((r for _, r in self._recommendations), default=0),
                max((r for _, r in self._bursts), default=0),
            )
            if held > desired:
                desired, reason = min(held, current), "hold (scale-down delay)"
            if desired < current:
                floor = math.floor(current / cfg.max_scale_down_rate)
                desired = max(desired, floor, 0 if cfg.scale_to_zero else 1)
                reason = "scale-down" if reason == "steady" else reason
        # 4. max scale-up rate
        if desired > current:
            desired = min(
                desired,
                max(1, math.floor(current * cfg.max_scale_up_rate))
                if current
                else math.floor(cfg.max_scale_up_rate),
            )
        desired = max(0, min(desired, cfg.max_replicas))
        return Decision(
            t=t,
            current=current,
            ready=ready,
            desired=desired,
            observed_stable=stable,
            observed_panic=panic_avg,
            panic=panic,
            reason=reason,
        )
