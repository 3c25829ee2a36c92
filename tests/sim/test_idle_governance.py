"""The idle rule in the simulator (apps/scheduling/sim/idle.py) on a virtual clock."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from apps.governance.rules import (
    BUILTIN_RULE,
    IdleRule,
    extended_stop_s,
    may_extend,
    reminder_due,
)
from apps.scheduling.sim import Simulator
from apps.scheduling.sim import policies as pol
from apps.scheduling.sim.idle import (
    IdleModel,
    Profile,
    draw_profile,
    first_stop,
    governed_duration,
    reclaim,
)

from .helpers import job, workload

H = 3600.0
RULE = BUILTIN_RULE  # 10 %, training idle 2 h, grace 30 min, 2 extensions of 1 h
MODEL = IdleModel(keep_running=0.0)


def profile(
    lifetime_h: float,
    idle_h: list[tuple[float, float]],
    *,
    milli: int = 1000,
    keeps: bool = False,
    kind: str = "test",
) -> Profile:
    return Profile(
        lifetime=lifetime_h * H,
        milli=milli,
        kind=kind,
        idle=tuple((a * H, b * H) for a, b in idle_h),
        busy_util=60.0,
        keeps_running=keeps,
    )


def test_stop_falls_one_grace_after_a_full_idle_period() -> None:
    stop = first_stop([(0.0, 10 * H)], 10 * H, RULE)
    assert stop is not None
    assert stop.at == 2 * H + 30 * 60  # warned at 2 h, stopped when the grace ends
    assert (stop.warnings, stop.extensions) == (1, 0)


def test_nothing_is_stopped_inside_the_grace_period() -> None:
    # Idle for the idle period and 29 of the 30 grace minutes, then busy: cleared, no stop.
    assert first_stop([(0.0, 2 * H + 29 * 60)], 10 * H, RULE) is None
    # A task that ends on its own during the grace is not counted as stopped.
    assert first_stop([(0.0, 2.4 * H)], 2.4 * H, RULE) is None
    # Idle for less than a full period is never even warned.
    assert first_stop([(0.0, 1.9 * H), (2 * H, 3.9 * H)], 10 * H, RULE) is None


def test_a_cleared_warning_needs_a_new_full_idle_period() -> None:
    # Warned at 2 h, busy at 2.2 h (cleared), idle again from 3 h: warned at 5 h, stop 5.5 h.
    stop = first_stop([(0.0, 2.2 * H), (3 * H, 20 * H)], 20 * H, RULE)
    assert stop is not None and stop.at == 5.5 * H and stop.warnings == 2


def test_keep_running_extensions_are_honoured_up_to_the_maximum() -> None:
    stop = first_stop([(0.0, 20 * H)], 20 * H, RULE, keeps_running=True)
    assert stop is not None
    assert stop.at == 2 * H + 30 * 60 + 2 * H  # two extensions of 1 h
    assert stop.extensions == 2
    one = replace(RULE, max_extensions=1)
    stop = first_stop([(0.0, 20 * H)], 20 * H, one, keeps_running=True)
    assert stop is not None and stop.at == 3.5 * H and stop.extensions == 1
    # Busy again during the extension: the warning is cleared, no stop.
    assert first_stop([(0.0, 4 * H)], 20 * H, RULE, keeps_running=True) is None
    # The rule functions production uses.
    assert may_extend(1, 2) and not may_extend(2, 2)
    assert extended_stop_s(100.0, 50.0, 10.0) == 110.0
    assert extended_stop_s(100.0, 150.0, 10.0) == 160.0


def test_a_reminder_is_due_from_one_grace_before_the_extended_stop_until_it() -> None:
    # Kept running at 0, stop at 5400, grace 1800: due from 3600 until the stop.
    due = [reminder_due(extended_at_s=0, stop_at_s=5400, now_s=t, grace_s=1800)
           for t in (3599, 3600, 5399, 5400)]  # fmt: skip
    assert due == [False, True, True, False]
    # A click inside the last grace period (at 4000, stop 4500): its answer said when.
    assert not reminder_due(extended_at_s=4000, stop_at_s=4500, now_s=4200, grace_s=1800)


def test_notebook_period_and_sweep_granularity() -> None:
    stop = first_stop([(10.0, 10 * H)], 10 * H, RULE, notebook=True, sweep_s=60.0)
    assert stop is not None and stop.at == 1.5 * H + 60  # next pass after 1 h 30 min 10 s


def test_reclaimed_gpu_hours_are_exact_on_three_tasks() -> None:
    tasks = [
        profile(10, [(0, 10)], milli=2000),  # never busy: stop at 2.5 h, frees 2 x 7.5
        profile(12, [(4, 12)], milli=500),  # idle tail from 4 h: stop at 6.5 h, 0.5 x 5.5
        profile(8, [(1, 5)]),  # paused 1-5 h: stop at 3.5 h, then busy again: a false stop
    ]
    r = reclaim(tasks, RULE, MODEL)
    assert r.allocated_gpu_h == pytest.approx(2 * 10 + 0.5 * 12 + 8)
    assert r.idle_gpu_h == pytest.approx(2 * 10 + 0.5 * 8 + 4)
    assert r.reclaimed_gpu_h == pytest.approx(15 + 2.75 + 4.5)
    assert r.stopped == 3
    assert r.false_stops == 1
    assert r.false_stop_busy_gpu_h == pytest.approx(3.0)  # 5 h .. 8 h of the paused task
    assert r.idle_reclaimed_gpu_h == pytest.approx(15 + 2.75 + 1.5)
    assert r.pct(r.reclaimed_gpu_h) == pytest.approx(100 * 22.25 / 34)
    exempt = reclaim([replace(tasks[0], exempt=True), *tasks[1:]], RULE, MODEL)
    assert exempt.reclaimed_gpu_h == pytest.approx(2.75 + 4.5) and exempt.exempt == 1


def test_a_stopped_task_frees_its_gpus_for_the_next_queued_task() -> None:
    idle = profile(10, [(0, 10)], milli=8000)
    held, stop = governed_duration(idle, RULE, MODEL)
    assert stop is not None and held == 2.5 * H
    starts = {}
    for governed in (False, True):
        first = job("idle", 0.0, gpus=8, duration=held if governed else idle.lifetime)
        second = job("queued", 60.0, gpus=8, duration=H)
        sim = Simulator(workload([first, second], node_count=1), pol.best_fit())
        sim.run()
        starts[governed] = sim.by_id["queued"].first_start
    assert starts[False] == 10 * H  # waits for the idle holder to be deleted
    assert starts[True] == 2.5 * H  # starts when the rule stops it


def test_raw_measure_takes_busy_small_shares_for_idle() -> None:
    rng = random.Random(1)
    active = IdleModel(p_never=0, p_tail=0, p_pause=0, busy_util=(50.0, 50.0))
    share = draw_profile(10 * H, 100, active, RULE, rng)
    assert share.kind == "active" and not share.reads_idle_when_busy
    raw = draw_profile(10 * H, 100, replace(active, measure="raw"), RULE, rng)
    assert raw.reads_idle_when_busy  # 50 % of a 10 % share reads 5 % < 10 %
    r = reclaim([raw], RULE, replace(active, measure="raw"))
    assert r.stopped == 1 and r.false_stops == 1 and r.idle_gpu_h == 0.0
    whole = draw_profile(10 * H, 1000, replace(active, measure="raw"), RULE, rng)
    assert not whole.reads_idle_when_busy


def test_model_rejects_bad_parameters() -> None:
    with pytest.raises(ValueError, match="sum to at most 1"):
        IdleModel(p_never=0.6, p_tail=0.6)
    with pytest.raises(ValueError, match="measure"):
        IdleModel(measure="device")
    assert IdleModel.from_dict({"tail_frac": [0.1, 0.2]}).tail_frac == (0.1, 0.2)


def test_rule_is_shared_with_the_product_defaults() -> None:
    from apps.governance.policy import BUILTIN  # the Django side reads the same numbers

    for name in IdleRule.__dataclass_fields__:
        assert getattr(BUILTIN, name) == getattr(RULE, name)
    assert (RULE.util_threshold_pct, RULE.training_idle_s, RULE.grace_s) == (10.0, 7200, 1800)
