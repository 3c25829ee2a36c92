"""A quantile forecast of a service's load over the next cold start, learnt from its own past.

A replica asked for now serves only after its cold start, and one removed now cannot be back
sooner, so the capacity that matters is the *peak* load over the next ``horizon_s``. The
forecast is

    base + q_p * scale(base)

* ``base``: the mean load over the last ``base_window_s`` (a level, not the last noisy sample);
* ``q_p``: the ``quantile`` of the errors this very forecast made in the past: every
  ``sample_every_s`` the forecaster notes its base, and ``horizon_s`` later, once that future is
  the past, it scores the peak load seen in between against it. Only samples older than the
  horizon are ever scored, so no future load is used;
* ``scale(base) = sqrt(base + unit)``: errors are compared in units of the square root of the
  level (request rates that sum many users spread like counts), plus one replica's load
  (``unit``) so the scale stays finite near zero traffic.

Errors older than ``history_s`` are forgotten, so the quantile follows the service's recent
behaviour (a day by default). No Django import.
"""

from __future__ import annotations

import bisect
import math
from collections import deque


class QuantileForecast:
    def __init__(
        self,
        *,
        horizon_s: float,
        quantile: float,
        unit: float,
        base_window_s: float = 300.0,
        level_window_s: float = 10.0,
        history_s: float = 86400.0,
        sample_every_s: float = 5.0,
        min_samples: int = 60,
    ) -> None:
        if not 0 < quantile < 1:
            raise ValueError("quantile must be in (0, 1)")
        if horizon_s <= 0 or base_window_s <= 0 or level_window_s <= 0 or unit <= 0:
            raise ValueError("horizon, windows and unit must be > 0")
        self.horizon_s = horizon_s
        self.quantile = quantile
        self.unit = unit
        self.base_window_s = base_window_s
        self.level_window_s = level_window_s
        self.history_s = history_s
        self.sample_every_s = sample_every_s
        self.min_samples = min_samples
        self._raw: deque[tuple[float, float]] = deque()  # the last level_window_s of samples
        self._raw_sum = 0.0
        self._base: deque[tuple[float, float]] = deque()  # the last base_window_s of samples
        self._base_sum = 0.0
        self._levels: deque[tuple[float, float]] = deque()  # (t, level) over the horizon
        self._pending: deque[tuple[float, float]] = deque()  # (t, base) waiting to be scored
        self._errors: deque[tuple[float, float]] = deque()  # (t, error) in arrival order
        self._sorted: list[float] = []  # the same errors, sorted, for the quantile
        self._next_sample = -math.inf

    def scale(self, base: float) -> float:
        return math.sqrt(max(0.0, base) + self.unit)

    @property
    def base(self) -> float:
        return self._base_sum / len(self._base) if self._base else 0.0

    @property
    def samples(self) -> int:
        return len(self._sorted)

    def add(self, t: float, value: float) -> None:
        """One sample of the load (once a second)."""
        self._raw.append((t, value))
        self._raw_sum += value
        while self._raw[0][0] <= t - self.level_window_s:
            self._raw_sum -= self._raw.popleft()[1]
        self._base.append((t, value))
        self._base_sum += value
        while self._base[0][0] <= t - self.base_window_s:
            self._base_sum -= self._base.popleft()[1]
        self._levels.append((t, self._raw_sum / len(self._raw)))
        while self._levels[0][0] <= t - self.horizon_s:
            self._levels.popleft()
        # score the forecasts whose horizon has now passed
        while self._pending and self._pending[0][0] <= t - self.horizon_s:
            t0, base0 = self._pending.popleft()
            peak = max((level for tl, level in self._levels if tl > t0), default=base0)
            self._remember(t, (peak - base0) / self.scale(base0))
        if t >= self._next_sample:
            self._pending.append((t, self.base))
            self._next_sample = t + self.sample_every_s

    def _remember(self, t: float, error: float) -> None:
        self._errors.append((t, error))
        bisect.insort(self._sorted, error)
        while self._errors[0][0] <= t - self.history_s:
            _, old = self._errors.popleft()
            del self._sorted[bisect.bisect_left(self._sorted, old)]

    def forecast(self) -> float | None:
        """The ``quantile`` of the peak load over the next horizon; None while fewer than
        ``min_samples`` past forecasts have been scored."""
        if len(self._sorted) < self.min_samples:
            return None
        index = min(len(self._sorted) - 1, int(self.quantile * len(self._sorted)))
        base = self.base
        return max(0.0, base + self._sorted[index] * self.scale(base))
