"""Slow-node localisation: pairwise probes (apps.health.slownode) against bisection by jobs.

128 nodes, one or two of them slow by 20-40%, realistic noise (2% log-normal jitter, 1.5%
fixed per-link spread, 2% of probes disturbed by other traffic losing 5-30%); 100 trials
each. Prints rounds needed (a round is ~60 s of probes), detection and false positives.

    .venv/bin/python bench/slow_node_bench.py [--trials 100] [--nodes 128] [--seed 7]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from apps.health.slownode import (
    SimulatedProbeRunner,
    bisect_slow_nodes,
    locate_slow_nodes,
)


def trial(method: str, nodes: int, slow: int, rng: random.Random) -> tuple[int, int, int]:
    names = [f"node-{i:03d}" for i in range(nodes)]
    bad = set(rng.sample(names, slow))
    speed = {n: 1.0 - rng.uniform(0.20, 0.40) if n in bad else 1.0 for n in names}
    runner = SimulatedProbeRunner(speed=speed, rng=random.Random(rng.random()))
    if method == "pairwise probes":
        search = locate_slow_nodes(names, runner, rng=random.Random(rng.random()))
    else:
        search = bisect_slow_nodes(names, runner, expected_gbps=runner.base_gbps)
    found = set(search.slow)
    return len(search.rounds), len(found & bad), len(found - bad)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--nodes", type=int, default=128)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    header = (
        f"{'method':<16} {'slow':>4} {'trials':>6} {'rounds mean':>11} {'max':>4} "
        f"{'minutes max':>11} {'found':>9} {'false pos':>9} {'FP trials':>9}"
    )
    print(f"{args.nodes} nodes, slow by 20-40%, 60 s per probe round")
    print(header)
    print("-" * len(header))
    for slow in (0, 1, 2):
        for method in ("pairwise probes", "bisection"):
            rows = [trial(method, args.nodes, slow, rng) for _ in range(args.trials)]
            rounds = [r for r, _f, _p in rows]
            found = sum(f for _r, f, _p in rows)
            fps = sum(p for _r, _f, p in rows)
            fp_trials = sum(1 for _r, _f, p in rows if p)
            print(
                f"{method:<16} {slow:>4} {args.trials:>6} {statistics.mean(rounds):>11.2f} "
                f"{max(rounds):>4} {max(rounds):>11.0f} {found:>4}/{slow * args.trials:<4} "
                f"{fps:>9} {fp_trials:>9}"
            )
    print(
        "bisection rounds are job submissions (tens of minutes each in production); "
        "the minutes column assumes 60 s for both."
    )


if __name__ == "__main__":
    main()
