"""The quantile-forecast rule on a virtual clock: headroom learnt from the service's own past
forecast errors, never from future load."""

from __future__ import annotations

import random

import pytest

from apps.inference.autoscale.forecast import QuantileForecast
from apps.inference.autoscale.scaler import ScalerConfig
from tests.inference.test_scaler import Clock


def noisy_load(seed: int, level: float, spread: float, hold: int = 57) -> list[float]:
    """A level with a new random value every ``hold`` s, like the production trace's grid."""
    rng = random.Random(seed)
    values: list[float] = []
    while len(values) < 4 * 3600:
        values.extend([max(0.0, rng.gauss(level, spread))] * hold)
    return values[: 4 * 3600]


def forecaster(**kw: float) -> QuantileForecast:
    base: dict[str, float] = {"horizon_s": 66.0, "quantile": 0.9, "unit": 10.0}
    base.update(kw)
    return QuantileForecast(**base)  # type: ignore[arg-type]


def test_no_forecast_until_enough_past_forecasts_are_scored() -> None:
    fc = forecaster()
    for t in range(1, 66 + 5 * 59):  # 59 scored samples: one short of min_samples
        fc.add(float(t), 50.0)
    assert fc.samples == 59
    assert fc.forecast() is None
    for t in range(66 + 5 * 59, 66 + 5 * 61):
        fc.add(float(t), 50.0)
    assert fc.forecast() == pytest.approx(50.0)  # a flat load: no error, no headroom


def test_headroom_covers_the_quantile_of_past_peaks() -> None:
    load = noisy_load(seed=3, level=50.0, spread=10.0)
    fc = forecaster(quantile=0.9)
    covered = total = 0
    for t, value in enumerate(load, start=1):
        fc.add(float(t), value)
        if 3600 < t < len(load) - 66 and t % 60 == 0:
            forecast = fc.forecast()
            assert forecast is not None
            assert forecast > fc.base  # headroom above the level
            peak = max(load[t : t + 66])  # scored here only, never shown to the forecaster
            covered += peak <= forecast
            total += 1
    assert total > 100
    assert 0.8 <= covered / total <= 0.98  # about the asked-for 90 %, not everything


def test_forecast_uses_only_the_past() -> None:
    # two services share their first hour, then differ: the forecast at that hour must match
    same = noisy_load(seed=5, level=40.0, spread=8.0)[:3600]
    a, b = forecaster(), forecaster()
    for t, value in enumerate(same + [0.0] * 600, start=1):
        a.add(float(t), value)
        if t == 3600:
            at_hour = a.forecast()
    for t, value in enumerate(same + [200.0] * 600, start=1):
        b.add(float(t), value)
        if t == 3600:
            assert b.forecast() == at_hour


def test_old_errors_are_forgotten() -> None:
    fc = forecaster(history_s=600.0)
    for t, value in enumerate(noisy_load(seed=1, level=50.0, spread=15.0)[:1800], start=1):
        fc.add(float(t), value)
    noisy = fc.forecast()
    for t in range(1801, 3000):
        fc.add(float(t), 50.0)
    assert noisy is not None and noisy > 55.0
    assert fc.forecast() == pytest.approx(50.0)  # only the last 600 s of errors count


def test_bad_forecast_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="quantile"):
        forecaster(quantile=1.0)
    with pytest.raises(ValueError, match="forecast_quantile"):
        ScalerConfig(forecast_quantile=0.0)


def config(**kw: object) -> ScalerConfig:
    base: dict[str, object] = {
        "metric": "qps",
        "target": 10.0,
        "max_replicas": 50,
        "cold_start_s": 60.0,
        "forecast_quantile": 0.9,
    }
    base.update(kw)
    return ScalerConfig(**base)  # type: ignore[arg-type]


def feed(clock: Clock, load: list[float], target: float = 10.0) -> int:
    """Replay ``load`` (even length) two seconds at a time, the scaler's decision period;
    returns the seconds in which the ready replicas could not serve it at ``target``."""
    start = clock.t
    short = 0
    for i in range(0, len(load), 2):
        clock.run(2, lambda t: load[int(t - start) - 1])
        short += sum(value > clock.ready * target for value in load[i : i + 2])
    return short


def test_noisy_load_forecast_beats_the_trend_rule_and_does_not_flap() -> None:
    load = noisy_load(seed=9, level=50.0, spread=12.0)
    aware = Clock(config(), replicas=5, cold_start_s=60.0)
    trend = Clock(config(forecast_quantile=None), replicas=5, cold_start_s=60.0)
    short_aware = feed(aware, load)
    short_trend = feed(trend, load)
    assert short_aware < short_trend / 2
    assert short_aware < 0.1 * len(load)
    forecasts = [d for d in aware.decisions if d.reason == "forecast"]
    assert forecasts  # the rule took over once it had scored enough past forecasts
    # a steady noisy level: a handful of changes an hour, not one a minute
    assert aware.changes() < 4 * 30


def test_forecast_scales_down_after_a_drop() -> None:
    clock = Clock(config(), replicas=1, cold_start_s=60.0)
    feed(clock, noisy_load(seed=2, level=80.0, spread=8.0)[:3600])
    high = clock.replicas
    assert high >= 9  # 80 req/s at 10 a replica, plus headroom
    feed(clock, noisy_load(seed=4, level=20.0, spread=4.0)[:900])
    # within the 300 s base window and the 300 s scale-down delay, it follows the drop
    assert clock.replicas <= 4
    assert all(d.desired >= d.current // 2 for d in clock.decisions if d.desired < d.current)


def test_zero_burst_hold_is_allowed() -> None:
    clock = Clock(config(burst_hold_s=0.0, scale_down_delay_s=0.0), replicas=1)
    clock.run(200, lambda t: 40.0)
    clock.run(400, lambda t: 5.0)
    assert clock.replicas == 1
