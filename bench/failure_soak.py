"""Failure soak: 1,000 GPUs for a simulated week with 7 GPU faults, one NIC flap and one slow
node, on a virtual clock (pure Python; the policy is the one apps/health implements).

125 nodes x 8 GPUs: 120 nodes run gang training jobs (1 x 512, 2 x 128, 6 x 32 GPUs), 5 are
hot spares. Jobs checkpoint every ``--ckpt-min`` minutes (two-stage, 5 s blocking). A fault is
seen by the node agent within one round (30 s), the node is cordoned and drained, the whole
gang restarts on a hot spare and resumes from its newest complete checkpoint after a restart
overhead (reschedule, image start, checkpoint load). A NIC flap is a fault like any other
(the node stays cordoned until an operator clears it). A slow node (30% slower) slows its
job until the throughput watch (10 min below 90% of the job's own rate) starts a probe run
(3 rounds x 60 s); then the node is cordoned and the gang restarts from its checkpoint.

    .venv/bin/python bench/failure_soak.py [--weeks 20] [--ckpt-min 30] [--seed 1]
"""

from __future__ import annotations

import argparse
import random
import statistics
from dataclasses import dataclass, field

WEEK = 7 * 24 * 3600.0
AGENT_ROUND_S = 30.0
RESTART_OVERHEAD_S = 300.0
CKPT_BLOCK_S = 5.0
SLOW_WATCH_S = 600.0
PROBE_S = 3 * 60.0
SLOW_FACTOR = 0.7
REPAIR_S = 24 * 3600.0


@dataclass
class Job:
    name: str
    nodes: list[int]
    resumed_at: float = 0.0  # checkpoint schedule restarts here after each resume
    restarts: int = 0
    lost_gpu_s: float = 0.0

    @property
    def gpus(self) -> int:
        return 8 * len(self.nodes)


@dataclass
class Incident:
    kind: str
    at: float
    job: str
    recompute_s: float
    down_s: float
    lost_gpu_s: float


@dataclass
class Week:
    incidents: list[Incident] = field(default_factory=list)
    productive_gpu_s: float = 0.0
    scheduled_gpu_s: float = 0.0
    spares_short: int = 0


def simulate(rng: random.Random, ckpt_s: float) -> Week:
    sizes = [64, 16, 16, 4, 4, 4, 4, 4, 4]  # nodes per job: 512, 128, 128, 6 x 32 GPUs
    jobs: list[Job] = []
    next_node = 0
    for i, n in enumerate(sizes):
        jobs.append(Job(f"job{i}", list(range(next_node, next_node + n))))
        next_node += n
    spares = [(n, 0.0) for n in range(next_node, next_node + 5)]  # (node, available from)
    faults = [("gpu", rng.uniform(0, WEEK)) for _ in range(7)]
    faults += [("nic_flap", rng.uniform(0, WEEK)), ("slow", rng.uniform(0, WEEK))]
    week = Week()
    lost: dict[str, float] = {j.name: 0.0 for j in jobs}
    for kind, at in sorted(faults, key=lambda f: f[1]):
        owner = rng.choice([j for j in jobs for _ in j.nodes])  # a random busy node
        node = rng.choice(owner.nodes)
        if kind == "slow":
            found = at + SLOW_WATCH_S + PROBE_S
            slow_loss = (found - at) * (1 - SLOW_FACTOR)  # ran at 70% until found
            detect_at = found
        else:
            slow_loss = 0.0
            detect_at = at + rng.uniform(0, AGENT_ROUND_S)
        since_ckpt = (detect_at - owner.resumed_at) % ckpt_s if detect_at > owner.resumed_at else 0
        recompute = min(since_ckpt, detect_at - owner.resumed_at)
        ready = [s for s in spares if s[1] <= detect_at]
        if ready:
            spare = ready[0]
            spares.remove(spare)
            wait = 0.0
        else:  # no spare: wait for the earliest repaired one
            week.spares_short += 1
            spare = min(spares, key=lambda s: s[1])
            spares.remove(spare)
            wait = spare[1] - detect_at
        owner.nodes[owner.nodes.index(node)] = spare[0]
        spares.append((node, detect_at + REPAIR_S))  # repaired, back as a spare
        down = (detect_at - at if kind != "slow" else 0.0) + wait + RESTART_OVERHEAD_S
        owner.resumed_at = detect_at + wait + RESTART_OVERHEAD_S
        owner.restarts += 1
        gpu_lost = owner.gpus * (recompute + down + slow_loss)
        lost[owner.name] += gpu_lost
        week.incidents.append(Incident(kind, at, owner.name, recompute, down, gpu_lost))
    for job in jobs:
        week.scheduled_gpu_s += job.gpus * WEEK
        blocking = job.gpus * CKPT_BLOCK_S * (WEEK / ckpt_s)
        week.productive_gpu_s += job.gpus * WEEK - lost[job.name] - blocking
    return week


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--weeks", type=int, default=20, help="independent simulated weeks")
    parser.add_argument("--ckpt-min", type=float, default=30.0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    ckpt_s = args.ckpt_min * 60
    rng = random.Random(args.seed)
    weeks = [simulate(rng, ckpt_s) for _ in range(args.weeks)]
    first = weeks[0]
    print(
        f"1,000 GPUs (960 in jobs + 40 hot spare), 1 week, checkpoint every {args.ckpt_min:g} min"
    )
    print(
        f"{'fault':<9} {'at (h)':>7} {'job':>5} {'recompute (min)':>15} {'down (min)':>10} "
        f"{'lost GPU-h':>10}"
    )
    for inc in first.incidents:
        print(
            f"{inc.kind:<9} {inc.at / 3600:>7.1f} {inc.job:>5} {inc.recompute_s / 60:>15.1f} "
            f"{inc.down_s / 60:>10.1f} {inc.lost_gpu_s / 3600:>10.1f}"
        )
    effective = [w.productive_gpu_s / w.scheduled_gpu_s for w in weeks]
    worst_recompute = max(i.recompute_s for w in weeks for i in w.incidents)
    resumed = sum(len(w.incidents) for w in weeks)
    print(
        f"\nover {args.weeks} simulated weeks ({resumed} faults, every one resumed from a "
        f"checkpoint; spare shortages: {sum(w.spares_short for w in weeks)}):"
    )
    print(
        f"  max recomputed work per fault: {worst_recompute / 60:.1f} min "
        f"(checkpoint interval {args.ckpt_min:g} min)"
    )
    print(
        f"  effective training time: mean {statistics.mean(effective):.2%}, "
        f"min {min(effective):.2%} (target >= 97%)"
    )


if __name__ == "__main__":
    main()
