"""What a sweep's early stopping saves, and what it costs, on simulated learning curves.

Run from the repository root (``make bench-sweeps``):

    .venv/bin/python bench/sweep_stopping.py                       # Markdown tables to stdout
    .venv/bin/python bench/sweep_stopping.py --seeds 42-51 --trials 32 --parallel 4

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
reached. For scale, two smaller sweeps without stopping (the first quarter and third of the
same draws) spend about as little the other way: fewer trials, each run to the end.
"""

from __future__ import annotations

import argparse
import bisect
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from apps.clusters.backends.simcurves import STEPS_PER_S, training_point  # noqa: E402
from apps.sweeps import space  # noqa: E402
from apps.sweeps.rules import ASHA, MEDIAN, Rule, step_to_judge, verdict  # noqa: E402

DEVICES = 8


@dataclass
class Trial:
    index: int
    lr: float
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


def loss(seed: int, trial: Trial, step: int) -> float:
    return training_point(seed * 1000 + trial.index, DEVICES, step, trial.lr)["loss"]


def run(
    seed: int, lrs: list[float], rule: Rule | None, steps: int, every: int, parallel: int
) -> Outcome:
    """One sweep of ``lrs`` under ``rule`` (None: no early stopping)."""
    trials = [Trial(i, lr) for i, lr in enumerate(lrs)]
    waiting, running, ended = list(trials), list[Trial](), list[Trial]()
    ticks = used = 0
    while waiting or running:
        while waiting and len(running) < parallel:  # the next trial takes a free slot
            running.append(waiting.pop(0))
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
                at = step_to_judge(rule, trial.steps[-1], trial.judged)
                if at is None:
                    continue
                trial.judged = at
                theirs = [
                    v
                    for o in trials
                    if o is not trial and o.steps and o.steps[-1] >= at
                    for v in [o.value_at(at)]
                    if v is not None
                ]
                mine = trial.value_at(at)
                if mine is not None and verdict(rule, at, mine, theirs) is not None:
                    trial.stopped = True
                    running.remove(trial)
                    ended.append(trial)
    chosen = min(ended, key=lambda t: (t.values[-1], t.index))
    seconds = ticks * every / STEPS_PER_S
    return Outcome(used * DEVICES / STEPS_PER_S / 3600, seconds / 3600,
                   sum(t.stopped for t in ended), chosen.index)  # fmt: skip


def seeds_of(text: str) -> list[int]:
    low, _, high = text.partition("-")
    return list(range(int(low), int(high or low) + 1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="42-51")
    parser.add_argument("--trials", type=int, default=32)
    parser.add_argument("--parallel", type=int, default=4)
    parser.add_argument("--steps", type=int, default=4000, help="a trial's length if not stopped")
    parser.add_argument("--every", type=int, default=50, help="steps between metric reports")
    args = parser.parse_args(argv)
    # name -> (rule, trials run): the rules, and smaller sweeps without stopping of about
    # the same GPU-hours, the other way to spend less.
    policies: dict[str, tuple[Rule | None, int]] = {
        "none": (None, args.trials),
        "median from step 500, 3 others": (Rule(MEDIAN, first_step=500, min_trials=3), args.trials),
        "asha 250 x3 (250, 750, 2250), 3 others": (Rule(ASHA, 250, 3, factor=3), args.trials),
        "asha 250 x2 (250, 500, 1000, 2000), 3 others": (Rule(ASHA, 250, 3, factor=2), args.trials),
        "asha 500 x3 (500, 1500), 3 others": (Rule(ASHA, 500, 3, factor=3), args.trials),
    }
    for share in (4, 3):
        policies[f"none, the first {args.trials // share} trials only"] = (
            None,
            args.trials // share,
        )
    lr = space.Parameter("lr", kind="log_uniform", low=1e-5, high=1e-2)
    table: dict[str, list[tuple[Outcome, float, bool]]] = {name: [] for name in policies}
    for seed in seeds_of(args.seeds):
        lrs = [float(t["lr"]) for t in space.trials([lr], "random", args.trials, seed)]
        full = [loss(seed, Trial(i, x), args.steps) for i, x in enumerate(lrs)]
        best = min(range(len(lrs)), key=lambda i: (full[i], i))  # of all the trials drawn
        for name, (rule, count) in policies.items():
            out = run(seed, lrs[:count], rule, args.steps, args.every, args.parallel)
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
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
