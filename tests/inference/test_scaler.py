"""The autoscaling rules on a virtual clock: the scaler is fed one sample a second and asked
to decide every two seconds, like the product's loop."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

import pytest

from apps.inference.autoscale.hpa import HpaConfig, HpaPolicy
from apps.inference.autoscale.replicas import ReplicaModel, ServiceSim
from apps.inference.autoscale.scaler import Autoscaler, Decision, ScalerConfig


class Clock:
    """Drives a scaler with a load function; replicas become ready after ``cold_start_s``."""

    def __init__(self, config: ScalerConfig, replicas: int, cold_start_s: float = 0.0) -> None:
        self.scaler = Autoscaler(config)
        self.t = 0.0
        self.ready = replicas
        self.loading: list[float] = []  # time each loading replica becomes ready
        self.cold_start_s = cold_start_s
        self.decisions: list[Decision] = []

    def run(self, seconds: int, load: Callable[[float], float]) -> Decision:
        last = None
        for _ in range(seconds):
            self.t += 1
            self.ready += sum(1 for r in self.loading if r <= self.t)
            self.loading = [r for r in self.loading if r > self.t]
            self.scaler.observe(self.t, load(self.t))
            if int(self.t) % 2 == 0:
                last = self.scaler.decide(self.t, self.ready, len(self.loading))
                self.decisions.append(last)
                self._apply(last.desired)
        assert last is not None
        return last

    def _apply(self, desired: int) -> None:
        while self.ready + len(self.loading) < desired:
            self.loading.append(self.t + self.cold_start_s)
        while self.ready + len(self.loading) > desired:
            if self.loading:
                self.loading.pop()
            else:
                self.ready -= 1

    @property
    def replicas(self) -> int:
        return self.ready + len(self.loading)

    def changes(self) -> int:
        return sum(1 for d in self.decisions if d.changed)


def config(**kw: object) -> ScalerConfig:
    base: dict[str, object] = {"target": 10.0, "max_replicas": 50, "cold_start_s": 0.0}
    base.update(kw)
    return ScalerConfig(**base)  # type: ignore[arg-type]


def test_steady_load_settles_at_load_over_target() -> None:
    clock = Clock(config(), replicas=1)
    decision = clock.run(300, lambda t: 45.0)
    assert decision.desired == 5
    assert clock.replicas == 5
    assert decision.observed_stable == 45.0
    assert decision.panic is False
    late = [d for d in clock.decisions if d.t > 120]
    assert all(not d.changed for d in late)


def test_burst_enters_panic_and_scales_on_the_panic_window() -> None:
    clock = Clock(config(), replicas=2)
    clock.run(120, lambda t: 20.0)
    assert clock.replicas == 2
    decision = clock.run(6, lambda t: 100.0)  # 5x the target of 2 replicas
    assert decision.panic is True
    assert decision.reason == "panic"
    assert clock.replicas == 10  # the 6 s panic average, not the 60 s stable one (~28)
    # in panic the scaler never scales down, even when the burst is over...
    decision = clock.run(30, lambda t: 20.0)
    assert decision.panic is True
    assert clock.replicas == 10
    # ...and leaves panic a stable window after the last panic signal
    decision = clock.run(60, lambda t: 20.0)
    assert decision.panic is False


def test_max_scale_up_rate_caps_one_decision() -> None:
    clock = Clock(config(max_scale_up_rate=2.0), replicas=2)
    clock.run(2, lambda t: 400.0)
    assert clock.decisions[0].desired == 4


def test_drop_to_zero_scales_to_zero_after_the_grace_period() -> None:
    cfg = config(min_replicas=0, scale_to_zero=True, scale_to_zero_grace_s=30.0)
    clock = Clock(cfg, replicas=3)
    clock.run(100, lambda t: 30.0)
    assert clock.replicas == 3
    clock.run(60, lambda t: 0.0)  # the stable window empties at t=160
    assert clock.replicas == 3  # kept through the grace period (the scale-down delay holds)
    decision = clock.run(30, lambda t: 0.0)  # 60 s window + 30 s grace after the last request
    assert decision.desired == 0
    assert decision.reason == "scale-to-zero"
    assert clock.replicas == 0
    # the first request wakes it at once
    decision = clock.run(2, lambda t: 1.0)
    assert decision.reason == "activate"
    assert clock.replicas == 1


def test_without_scale_to_zero_it_keeps_min_replicas() -> None:
    clock = Clock(config(min_replicas=2), replicas=4)
    clock.run(100, lambda t: 40.0)
    clock.run(900, lambda t: 0.0)
    assert clock.replicas == 2


def test_flapping_load_does_not_thrash() -> None:
    # 30 s at 80, 30 s at 20, for 20 minutes: hold the peak rather than follow the flap
    clock = Clock(config(), replicas=8)
    clock.run(1200, lambda t: 80.0 if int(t // 30) % 2 == 0 else 20.0)
    # the trend rule may add headroom once, then it holds: no up-down cycles
    assert 8 <= clock.replicas <= 10
    assert clock.changes() <= 2
    assert all(d.desired >= d.current for d in clock.decisions)


def test_scale_down_waits_for_the_delay_then_steps_down() -> None:
    clock = Clock(config(scale_down_delay_s=300.0, max_scale_down_rate=2.0), replicas=1)
    clock.run(200, lambda t: 80.0)
    assert clock.replicas == 8
    clock.run(200, lambda t: 10.0)
    assert clock.replicas == 8  # within 300 s of the last high recommendation
    clock.run(200, lambda t: 10.0)
    assert clock.replicas == 1
    downs = [d for d in clock.decisions if d.desired < d.current]
    assert downs[0].t > 500  # 300 s after the stable window began to fall (t=200)
    assert all(d.desired >= d.current // 2 for d in downs)  # at most halving per decision


def test_new_settings_keep_the_windows_and_the_scale_down_delay() -> None:
    clock = Clock(config(scale_down_delay_s=300.0, max_replicas=20), replicas=1)
    clock.run(200, lambda t: 80.0)
    assert clock.replicas == 8
    # An operator edits the service (a wider range, a longer window) as the load falls.
    clock.scaler.reconfigure(config(scale_down_delay_s=300.0, max_replicas=30, stable_window_s=90))
    assert len(clock.scaler._window.samples) == 60  # the samples were kept
    clock.run(200, lambda t: 10.0)
    assert clock.replicas == 8  # the held recommendation still holds for the whole delay
    fresh = Clock(config(scale_down_delay_s=300.0, max_replicas=30, stable_window_s=90), 8)
    fresh.run(200, lambda t: 10.0)
    assert fresh.replicas < 8  # what rebuilding the scaler did: the delay was skipped


def test_a_new_metric_starts_its_window_afresh() -> None:
    clock = Clock(config(), replicas=1)
    clock.run(120, lambda t: 80.0)
    clock.scaler.reconfigure(config(metric="qps", target=40.0))
    assert clock.scaler._window.samples == deque()  # concurrency samples mean nothing now
    clock.run(120, lambda t: 80.0)
    assert clock.replicas == 8  # held at the concurrency-era size for the scale-down delay


def test_cold_start_loading_replicas_count_as_capacity() -> None:
    # trend off: this checks that loading replicas count, not the ramp projection
    clock = Clock(config(cold_start_s=60.0, trend_aware=False), replicas=2, cold_start_s=60.0)
    clock.run(120, lambda t: 20.0)
    clock.run(10, lambda t: 60.0)
    asked = clock.replicas
    assert clock.loading  # new replicas are still loading
    clock.run(40, lambda t: 60.0)  # still loading: no second round for the same load
    assert clock.replicas == asked
    assert clock.ready == 2


def test_cold_start_trend_sizes_ahead_of_a_ramp() -> None:
    ramp = lambda t: max(0.0, t - 100.0) * 0.2  # noqa: E731 - +0.2 in flight per second
    aware = Clock(config(cold_start_s=60.0), replicas=1, cold_start_s=60.0)
    blind = Clock(config(cold_start_s=60.0, trend_aware=False), replicas=1, cold_start_s=60.0)
    aware.run(300, ramp)
    blind.run(300, ramp)
    # at t=300 the load is 40 (4 replicas); the aware scaler already asked for more
    assert aware.replicas > blind.replicas >= 3


def test_hpa_baseline_syncs_every_15s_and_stabilises_down_for_5_min() -> None:
    hpa = HpaPolicy(HpaConfig(target_utilization=0.5, max_replicas=20, metric_window_s=1))
    ready = 2
    for t in range(1, 31):
        hpa.observe(float(t), 1.0 if t <= 16 else 0.1)  # twice the target, then a twentieth
        ready = hpa.decide(float(t), ready, 0).desired
        if t == 15:
            assert ready == 4  # 2 -> 4 at the t=1 sync; nothing between syncs
    assert ready == 8  # 4 -> 8 at the t=16 sync
    for t in range(31, 316):
        hpa.observe(float(t), 0.1)
        ready = hpa.decide(float(t), ready, 0).desired
    assert ready == 8  # within 300 s of the last high recommendation (t=16)
    for t in range(316, 331):
        hpa.observe(float(t), 0.1)
        ready = hpa.decide(float(t), ready, 0).desired
    assert ready == 2


def test_replica_model_batches_saturates_and_cold_starts() -> None:
    model = ReplicaModel(cold_start_s=30.0)
    assert model.step_s(64) > model.step_s(1)  # per-token time grows with the batch
    assert model.throughput(64) == pytest.approx(64 / model.service_s(64))
    sim = ServiceSim(model, ready=1)
    light = sim.step(2.0)
    assert light.queued == 0.0
    for _ in range(30):
        heavy = sim.step(40.0)  # three times what a replica can do
    assert heavy.queued > 0
    assert heavy.p95_s > light.p95_s
    sim.set_desired(3)
    assert (sim.ready, len(sim.loading)) == (1, 2)
    for _ in range(31):
        sim.step(0.0)
    assert (sim.ready, len(sim.loading)) == (3, 0)


def test_bad_config_is_refused() -> None:
    with pytest.raises(ValueError, match="min_replicas must be <= max_replicas"):
        ScalerConfig(min_replicas=5, max_replicas=2)
    with pytest.raises(ValueError, match="panic window"):
        ScalerConfig(panic_window_s=90.0)
