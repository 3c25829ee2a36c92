"""What a sweep's early stopping and its search method give, on simulated learning curves.

Run from the repository root (``make bench-sweeps``):

    .venv/bin/python bench/sweep_bench.py                       # Markdown tables to stdout
    .venv/bin/python bench/sweep_bench.py --seeds 42-51 --trials 32 --parallel 4

Each seed draws a random search over ``lr`` (log-uniform, 1e-5 to 1e-2) with the product's
sampler (``apps.sweeps.space``); every trial's loss curve is the simulated cluster's
(``apps.clusters.backends.simcurves``: it settles lower the closer ``lr`` is to 3e-4, with a
per-trial start, speed and spread, and noise), reported every ``--every`` steps. At most
``--parallel`` trials run at once, each to ``--steps`` unless stopped; the next starts in the
slot a trial leaves, as the product's sweep loop does. Each report interval the product's own
rules (``apps.sweeps.rules``) judge the running trials, as ``apps.sweeps.stopping`` does each
scheduling cycle: against the others that reached the step, read at or before it.

Per rule, averaged over the seeds: GPU-hours used (8 GPUs a trial, 2 steps a second, as the
simulated cluster's curves run) and the share of those without stopping, the sweep's length
in time, trials stopped, how often the sweep's best (ranked as the product ranks: newest
value) is the trial that would have ended lowest had every trial run to the end, and the
regret: that true best's final loss subtracted from the final loss the chosen best would have
reached. The rules include successive halving from later first rungs and with Hyperband's
brackets side by side (``rules.assign_brackets``, ``rules.in_bracket``: trials split between
the brackets as Hyperband splits its budget, each judged within its own), which stop later
at a higher cost. For scale, smaller sweeps without stopping (the first quarter, third and
half of the same draws) spend less the other way: fewer trials, each run to the end.

Then the search methods: the same random sweep against ``tpe``, whose first ``--startup``
trials are the same random draws and each later one is chosen when it starts by the
product's sampler (``apps.sweeps.adaptive``) from the trials that have ended and those
running; each without early stopping and with halving. Per method: GPU-hours, the chosen
trial's final loss had it run to the end, how far its lr is from 3e-4 in decades, and in how
many seeds it was the lowest of the four.
"""

from __future__ import annotations

import argparse
import bisect
import math
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from apps.clusters.backends.simcurves import STEPS_PER_S, training_point  # noqa: E402
from apps.sweeps import space  # noqa: E402
from apps.sweeps.adaptive import COMPLETE, PRUNED, RUNNING, Result, suggest  # noqa: E402
from apps.sweeps.rules import (  # noqa: E402
    ASHA,
    MEDIAN,
    Rule,
    assign_brackets,
    in_bracket,
    step_to_judge,
    verdict,
)

DEVICES = 8
LR = space.Parameter("lr", kind="log_uniform", low=1e-5, high=1e-2)
BEST_LR = 3e-4  # where the simulated curves settle lowest


@dataclass
class Trial:
    index: int
    lr: float | None  # None: a tpe trial, chosen when it starts
    steps: list[int] = field(default_factory=list)
    values: list[float] = field(default_factory=list)
    judged: int | None = None
    stopped: bool = False

    def value_at(self, step: int) -> float | None:
        """Its newest value at or before ``step`` (as the product reads the others)."""
        i = bisect.bisect_right(self.steps, step)
        return self.values[i - 1] if i else None


@dataclass(frozen=True)
class Outcome:
    gpu_hours: float
    hours: float
    stopped: int
    chosen: int  # the index of the sweep's best trial
    chosen_final: float  # that trial's final loss had it run to the end
    chosen_lr: float


def loss(seed: int, trial: Trial, step: int) -> float:
    return training_point(seed * 1000 + trial.index, DEVICES, step, trial.lr)["loss"]


def choose(seed: int, index: int, ended: list[Trial], running: list[Trial]) -> float:
    """A tpe trial's lr, from the trials that have ended and those running, as
    ``services.choose`` does."""
    # Every trial that has started has its lr: it was chosen then, if not before.
    results = [
        Result({"lr": cast(float, t.lr)}, PRUNED if t.stopped else COMPLETE, t.values[-1],
               t.steps[-1])
        for t in ended
    ] + [Result({"lr": cast(float, t.lr)}, RUNNING) for t in running]  # fmt: skip
    chosen = suggest([LR], results, maximize=False, seed=(seed * 1009 + index) % 2**31)
    return float(chosen["lr"])


def run(
    seed: int,
    lrs: list[float | None],
    rule: Rule | None,
    steps: int,
    every: int,
    parallel: int,
    brackets: int = 1,
) -> Outcome:
    """One sweep of ``lrs`` under ``rule`` (None: no early stopping), its trials taking
    ``brackets`` halving brackets as the product splits them; a None lr is chosen by TPE when
    its trial starts."""
    trials = [Trial(i, lr) for i, lr in enumerate(lrs)]
    # Trial i here is the product's trial i + 1.
    split = assign_brackets(len(trials), brackets, rule.factor if rule is not None else 3)
    bracket = {t.index: split[t.index] for t in trials}
    waiting, running, ended = list(trials), list[Trial](), list[Trial]()
    ticks = used = 0
    while waiting or running:
        while waiting and len(running) < parallel:  # the next trial takes a free slot
            trial = waiting.pop(0)
            if trial.lr is None:
                trial.lr = choose(seed, trial.index, ended, running)
            running.append(trial)
        ticks += 1
        for trial in running:
            step = (trial.steps[-1] if trial.steps else 0) + every
            trial.steps.append(step)
            trial.values.append(loss(seed, trial, step))
            used += every
        for trial in [t for t in running if t.steps[-1] >= steps]:  # finished
            running.remove(trial)
            ended.append(trial)
        if rule is not None:
            for trial in list(running):
                mine_rule = in_bracket(rule, bracket[trial.index])
                at = step_to_judge(mine_rule, trial.steps[-1], trial.judged)
                if at is None:
                    continue
                trial.judged = at
                theirs = [
                    v
                    for o in trials
                    if o is not trial
                    and o.steps
                    and o.steps[-1] >= at
                    and bracket[o.index] == bracket[trial.index]
                    for v in [o.value_at(at)]
                    if v is not None
                ]
                mine = trial.value_at(at)
                if mine is not None and verdict(mine_rule, at, mine, theirs) is not None:
                    trial.stopped = True
                    running.remove(trial)
                    ended.append(trial)
    chosen = min(ended, key=lambda t: (t.values[-1], t.index))
    seconds = ticks * every / STEPS_PER_S
    assert chosen.lr is not None
    return Outcome(used * DEVICES / STEPS_PER_S / 3600, seconds / 3600,
                   sum(t.stopped for t in ended), chosen.index, loss(seed, chosen, steps),
                   chosen.lr)  # fmt: skip


def seeds_of(text: str) -> list[int]:
    low, _, high = text.partition("-")
    return list(range(int(low), int(high or low) + 1))


HALVING = Rule(ASHA, 250, 3, factor=2)


def methods_of(
    seed: int, lrs: list[float | None], args: argparse.Namespace, table: dict[str, list[Outcome]]
) -> None:
    """Random search against tpe (its first ``--startup`` trials the same random draws), each
    without early stopping and with halving; one sweep of each for this seed."""
    adaptive = lrs[: args.startup] + [None] * (len(lrs) - args.startup)
    for name, chosen, rule in (
        ("random", lrs, None),
        (f"tpe, the first {args.startup} at random", adaptive, None),
        ("random, asha 250 x2", lrs, HALVING),
        (f"tpe, the first {args.startup} at random, asha 250 x2", adaptive, HALVING),
    ):
        table.setdefault(name, []).append(
            run(seed, chosen, rule, args.steps, args.every, args.parallel)
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="42-51")
    parser.add_argument("--trials", type=int, default=32)
    parser.add_argument("--parallel", type=int, default=4)
    parser.add_argument("--steps", type=int, default=4000, help="a trial's length if not stopped")
    parser.add_argument("--every", type=int, default=50, help="steps between metric reports")
    parser.add_argument("--startup", type=int, default=10, help="tpe's random trials first")
    args = parser.parse_args(argv)
    # name -> (rule, trials run): the rules, and smaller sweeps without stopping of about
    # the same GPU-hours, the other way to spend less.
    trials = args.trials
    policies: dict[str, tuple[Rule | None, int, int]] = {
        "none": (None, trials, 1),
        "median from step 500, 3 others": (Rule(MEDIAN, first_step=500, min_trials=3), trials, 1),
        "asha 250 x3 (250, 750, 2250), 3 others": (Rule(ASHA, 250, 3, factor=3), trials, 1),
        "asha 250 x2 (250, 500, 1000, 2000), 3 others": (Rule(ASHA, 250, 3, factor=2), trials, 1),
        "asha 500 x3 (500, 1500), 3 others": (Rule(ASHA, 500, 3, factor=3), trials, 1),
        # Later first rungs, and Hyperband's brackets side by side (trials split as its budget;
        # bracket b's first rung is the b-th rung): both stop later, at a higher cost.
        "asha 500 x2 (500, 1000, 2000), 3 others": (Rule(ASHA, 500, 3, factor=2), trials, 1),
        "asha 1000 x2 (1000, 2000), 3 others": (Rule(ASHA, 1000, 3, factor=2), trials, 1),
        "asha 250 x2, 2 brackets (from 250, from 500), 3 others": (HALVING, trials, 2),
        "asha 250 x2, 3 brackets (from 250, 500, 1000), 3 others": (HALVING, trials, 3),
        "asha 250 x3, 2 brackets (from 250, 750), 3 others": (
            Rule(ASHA, 250, 3, factor=3),
            trials,
            2,
        ),
        "asha 250 x3, 3 brackets (from 250, 750, 2250), 3 others": (
            Rule(ASHA, 250, 3, factor=3),
            trials,
            3,
        ),
    }
    for share in (4, 3, 2):
        policies[f"none, the first {trials // share} trials only"] = (None, trials // share, 1)
    table: dict[str, list[tuple[Outcome, float, bool]]] = {name: [] for name in policies}
    methods: dict[str, list[Outcome]] = {}
    for seed in seeds_of(args.seeds):
        lrs: list[float | None] = [
            float(t["lr"]) for t in space.trials([LR], "random", args.trials, seed)
        ]
        full = [loss(seed, Trial(i, x), args.steps) for i, x in enumerate(lrs)]
        methods_of(seed, lrs, args, methods)
        best = min(range(len(lrs)), key=lambda i: (full[i], i))  # of all the trials drawn
        for name, (rule, count, brackets) in policies.items():
            out = run(seed, lrs[:count], rule, args.steps, args.every, args.parallel, brackets)
            table[name].append((out, full[out.chosen] - full[best], out.chosen == best))
    base = statistics.mean(o.gpu_hours for o, _, _ in table["none"])
    base_hours = statistics.mean(o.hours for o, _, _ in table["none"])
    n = len(seeds_of(args.seeds))
    print(f"Random search over lr, {args.trials} trials, {args.parallel} at a time, {args.steps} "
          f"steps each unless stopped, seeds {args.seeds} (means over {n})\n")  # fmt: skip
    print("| rule | GPU-hours | vs none | sweep length (h) | stopped | found the best | regret |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, rows in table.items():
        gpu = statistics.mean(o.gpu_hours for o, _, _ in rows)
        hours = statistics.mean(o.hours for o, _, _ in rows)
        stopped = statistics.mean(o.stopped for o, _, _ in rows)
        found = sum(hit for _, _, hit in rows)
        regret = statistics.mean(r for _, r, _ in rows)
        print(f"| {name} | {gpu:.1f} | {gpu / base:.0%} | {hours:.2f} ({hours / base_hours:.0%}) "
              f"| {stopped:.1f} | {found}/{n} | {regret:.3f} |")  # fmt: skip
    print(f"\nRandom search against tpe, the same {args.trials} trials' budget; the chosen "
          "trial's final loss had it run to the end, and how far its lr is from the curves' "
          "best (3e-4)\n")  # fmt: skip
    print(
        "| method | GPU-hours | best loss found | its lr, decades from 3e-4 | lowest of the four |"
    )
    print("|---|---:|---:|---:|---:|")
    for name, outs in methods.items():
        gpu = statistics.mean(o.gpu_hours for o in outs)
        final = statistics.mean(o.chosen_final for o in outs)
        away = statistics.mean(abs(math.log10(o.chosen_lr / BEST_LR)) for o in outs)
        wins = sum(
            o.chosen_final <= min(other[i].chosen_final for other in methods.values())
            for i, o in enumerate(outs)
        )
        print(f"| {name} | {gpu:.1f} | {final:.3f} | {away:.2f} | {wins}/{n} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
