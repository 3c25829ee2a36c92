"""The early-stopping rules as pure functions (apps/sweeps/rules.py), on hand-computed cases."""

from __future__ import annotations

import importlib.util
import sys
from fractions import Fraction
from pathlib import Path
from types import ModuleType

from apps.sweeps.rules import (
    ASHA,
    MEDIAN,
    Rule,
    Stop,
    assign_brackets,
    bracket_shares,
    in_bracket,
    rung,
    step_to_judge,
    verdict,
)


def test_rungs_are_the_first_step_times_the_factors_powers() -> None:
    assert [rung(s, 100, 3) for s in (99, 100, 299, 300, 899, 900, 2700)] == [
        None, 100, 100, 300, 300, 900, 2700,
    ]  # fmt: skip
    assert rung(5, 0, 3) is None  # no first rung, no rungs


def test_the_median_rule_judges_every_new_step_and_halving_each_rung_once() -> None:
    median = Rule(MEDIAN, first_step=100, min_trials=1)
    assert [step_to_judge(median, s, None) for s in (50, 100, 130)] == [None, 100, 130]
    assert step_to_judge(median, 130, 130) is None and step_to_judge(median, 140, 130) == 140
    asha = Rule(ASHA, first_step=100, min_trials=1, factor=2)
    assert step_to_judge(asha, 450, None) == 400  # skipped rungs 100 and 200: judged at 400
    assert step_to_judge(asha, 790, 400) is None and step_to_judge(asha, 800, 400) == 800


def test_trials_split_as_hyperband_splits_its_budget_and_each_bracket_starts_a_rung_later(
) -> None:  # fmt: skip
    # Factor 3, three brackets: 3^2/3 : 3^1/2 : 3^0/1 = 3 : 1.5 : 1 (the JMLR paper's n_i for
    # R = 9: 9, 5, 3 configurations, before rounding up).
    assert bracket_shares(3, 3) == [Fraction(6, 11), Fraction(3, 11), Fraction(2, 11)]
    assert bracket_shares(2, 2) == [Fraction(1, 2), Fraction(1, 2)]  # even: in turn
    assert bracket_shares(1, 3) == [1]
    assert assign_brackets(6, 2, 2) == [0, 1, 0, 1, 0, 1]
    assert assign_brackets(11, 3, 3) == [0, 1, 0, 2, 0, 1, 0, 2, 0, 1, 0]
    assert [assign_brackets(11, 3, 3).count(b) for b in range(3)] == [6, 3, 2]
    assert assign_brackets(5, 1, 3) == [0] * 5
    # Every first n trials are split as near the shares as whole trials allow.
    shares = bracket_shares(4, 2)
    split = assign_brackets(200, 4, 2)
    for n in range(1, 201):
        assert all(abs(split[:n].count(b) - n * shares[b]) < 1 for b in range(4))
    asha = Rule(ASHA, first_step=250, min_trials=3, factor=2)
    assert [in_bracket(asha, b).first_step for b in (0, 1, 2)] == [250, 500, 1000]
    assert in_bracket(asha, 2).factor == 2 and in_bracket(asha, 2).min_trials == 3
    assert step_to_judge(in_bracket(asha, 1), 450, None) is None  # below its first rung, 500
    median = Rule(MEDIAN, first_step=100, min_trials=1)
    assert in_bracket(median, 2) == median  # brackets are halving's only


def test_the_median_rule_stops_a_trial_worse_than_the_others_median() -> None:
    rule = Rule(MEDIAN, first_step=0, min_trials=2)
    assert verdict(rule, 200, 3.0, [1.0, 1.2]) == Stop(
        "earlyStopped", {"step": 200, "value": 3.0, "median": 1.1}
    )
    assert verdict(rule, 200, 1.1, [1.0, 1.2]) is None  # equal to the median: not worse
    assert verdict(rule, 200, 3.0, [1.0]) is None  # one other is too few
    higher = Rule(MEDIAN, first_step=0, min_trials=2, maximize=True)
    assert verdict(higher, 200, 3.0, [1.0, 1.2]) is None
    assert verdict(higher, 200, 0.5, [1.0, 1.2]) is not None


def test_halving_keeps_the_best_nth_of_the_trials_at_the_rung() -> None:
    rule = Rule(ASHA, first_step=100, min_trials=2, factor=3)
    # Six trials at the rung: 6 // 3 = 2 go on. 2.5 ranks 3rd; 2.0 ties the 2nd, in its favour.
    assert verdict(rule, 300, 2.5, [1.0, 2.0, 3.0, 4.0, 5.0]) == Stop(
        "earlyStoppedRung", {"step": 300, "value": 2.5, "rank": 3, "count": 6, "keep": 2}
    )
    assert verdict(rule, 300, 2.0, [1.0, 2.0, 3.0, 4.0, 5.0]) is None
    # Three trials: 3 // 3 = 1, only the best goes on; never fewer than one.
    assert verdict(rule, 100, 1.5, [1.0, 2.0]) is not None
    assert verdict(rule, 100, 0.5, [1.0, 2.0]) is None
    assert verdict(Rule(ASHA, 100, 1, factor=4), 100, 0.5, [1.0]) is None  # 2 // 4 -> 1
    assert verdict(Rule(ASHA, 100, 1, factor=2, maximize=True), 100, 0.5, [1.0]) is not None


def _bench() -> ModuleType:
    path = Path(__file__).resolve().parents[2] / "bench" / "sweep_bench.py"
    spec = importlib.util.spec_from_file_location("sweep_bench", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_the_benchmark_counts_each_trials_steps_and_stops_with_the_product_rule() -> None:
    bench = _bench()
    lrs = [3e-4, 1e-2, 1e-5]
    # One at a time, 100 steps each in reports of 50: 6 intervals of 25 s on 8 GPUs.
    full = bench.run(42, lrs, None, steps=100, every=50, parallel=1)
    assert (full.gpu_hours, full.hours, full.stopped) == (300 * 8 / 2 / 3600, 300 / 2 / 3600, 0)
    finals = [bench.loss(42, bench.Trial(i, lr), 100) for i, lr in enumerate(lrs)]
    assert full.chosen == finals.index(min(finals))
    # Halving from step 50, one other enough: trials 1 and 2 each meet the trials before
    # them at step 50, and only the better of two goes on (2 // 2 = 1).
    at_50 = [bench.loss(42, bench.Trial(i, lr), 50) for i, lr in enumerate(lrs)]
    cut = bench.run(42, lrs, Rule(ASHA, 50, 1, factor=2), steps=100, every=50, parallel=1)
    expect = sum(
        at_50[i] > min(at_50[:i]) for i in (1, 2)
    )  # worse than the best before it at the rung
    assert expect == 1  # these curves: trial 1 beats trial 0 at step 50, trial 2 beats neither
    assert cut.stopped == expect and cut.gpu_hours == (300 - 50 * expect) * 8 / 2 / 3600
