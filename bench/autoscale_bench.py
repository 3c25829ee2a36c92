"""Replay the Alibaba GenAI production request-rate trace against two autoscalers.

Both policies drive the same simulated service (``apps.inference.autoscale.replicas``) with the
same arrivals, in one run:

* **ours**: ``apps.inference.autoscale.scaler.Autoscaler`` (stable/panic windows, scale-down
  delay, all at their defaults) on the request rate, with its cold-start rule set to the
  quantile forecast (``--quantile``, 0.9): capacity for that quantile of the peak rate over the
  next cold start, learnt online from its own past forecast errors. Its target is the rate one
  replica serves within the SLO (what a load test of the replica measures);
* **hpa**: ``apps.inference.autoscale.hpa.HpaPolicy``, a plain HorizontalPodAutoscaler on a
  utilization metric (15 s sync, 5 min scale-down stabilisation).

Trace handling: ``qps.csv`` holds per-container request-rate samples on a 57 s grid. We keep
the "Generative Requests" rows, sum all containers per grid point (the service's total rate),
hold that rate for the 57 s of the point, and scale it so the busiest point is ``--peak-qps``
requests per second. Arrivals per second are Poisson with that rate (seeded).

Usage: ``.venv/bin/python bench/autoscale_bench.py [--hours H] [--charts docs/benchmarks]``
``--frontier`` adds, in the same replay, the HPA at other utilization targets and ours at other
quantiles, so the comparison is not one tuned point.
"""

from __future__ import annotations

import argparse
import csv
import math
import random
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from apps.inference.autoscale.hpa import HpaConfig, HpaPolicy  # noqa: E402
from apps.inference.autoscale.replicas import ReplicaModel, ServiceSim  # noqa: E402
from apps.inference.autoscale.scaler import Autoscaler, Decision, ScalerConfig  # noqa: E402

TRACE = ROOT.parent / "shared" / "traces" / "alibaba-genai-2026" / "qps.csv"
GRID_S = 57


def load_rates(path: Path, peak_qps: float) -> tuple[list[float], float]:
    """Per-second request rate of the whole service, and the scale factor applied."""
    sums: defaultdict[int, float] = defaultdict(float)
    t0: float | None = None
    with path.open(newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["request_type"] == "Generative Requests"]
    t0 = min(float(r["timestamp_anon"]) for r in rows)
    for row in rows:
        sums[round((float(row["timestamp_anon"]) - t0) / GRID_S)] += float(row["value"])
    last = max(sums)
    scale = peak_qps / max(sums.values())
    rates: list[float] = []
    for point in range(last + 1):
        rates.extend([sums.get(point, 0.0) * scale] * GRID_S)
    return rates, scale


@dataclass
class Run:
    name: str
    sim: ServiceSim
    policy: Autoscaler | HpaPolicy
    slo_s: float
    decide_every: int
    replicas: list[int] = field(default_factory=list)
    p95: list[float] = field(default_factory=list)
    violations: int = 0
    replica_seconds: float = 0.0
    errors: float = 0.0
    changes: int = 0
    served_seconds: int = 0
    requests: float = 0.0
    charted: bool = True

    def step(self, t: int, arrivals: int) -> None:
        if t % self.decide_every == 0:
            decision: Decision = self.policy.decide(float(t), self.sim.ready, len(self.sim.loading))
            if decision.desired != self.sim.replicas:
                self.changes += 1
                self.sim.set_desired(decision.desired)
        m = self.sim.step(float(arrivals))
        if isinstance(self.policy, Autoscaler):
            self.policy.observe(float(t), m.qps)
        else:
            self.policy.observe(float(t), m.gpu_util)
        self.replicas.append(m.replicas)
        self.p95.append(m.p95_s)
        self.replica_seconds += m.replicas
        self.errors += m.errors
        self.requests += arrivals
        if arrivals > 0:
            self.served_seconds += 1
            if m.p95_s > self.slo_s:
                self.violations += 1


def poisson(rng: random.Random, lam: float) -> int:
    if lam <= 0:
        return 0
    if lam > 50:  # normal approximation, fine at this size
        return max(0, round(rng.gauss(lam, math.sqrt(lam))))
    limit, k, p = math.exp(-lam), 0, 1.0
    while True:
        p *= rng.random()
        if p <= limit:
            return k
        k += 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", type=Path, default=TRACE)
    parser.add_argument("--peak-qps", type=float, default=100.0)
    parser.add_argument("--slo-p95", type=float, default=10.0, help="p95 latency SLO (s)")
    parser.add_argument("--target-concurrency", type=float, default=24.0)
    parser.add_argument("--cold-start", type=float, default=60.0)
    parser.add_argument("--max-replicas", type=int, default=40)
    parser.add_argument("--hours", type=float, default=0.0, help="replay only the first H hours")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--charts", type=Path, default=None, help="folder for PNG charts")
    parser.add_argument("--quantile", type=float, default=0.9, help="ours: forecast quantile")
    parser.add_argument("--frontier", action="store_true", help="more HPA targets and quantiles")
    args = parser.parse_args()

    rates, scale = load_rates(args.trace, args.peak_qps)
    if args.hours:
        rates = rates[: int(args.hours * 3600)]
    model = ReplicaModel(cold_start_s=args.cold_start)
    target_util = args.target_concurrency / model.max_batch
    slo_rate = model.throughput(model.slo_batch(args.slo_p95))

    def ours(quantile: float, charted: bool = True) -> Run:
        cfg = ScalerConfig(
            metric="qps",
            target=slo_rate,
            min_replicas=1,
            max_replicas=args.max_replicas,
            cold_start_s=args.cold_start,
            forecast_quantile=quantile,
        )
        name = f"ours (forecast q{quantile:g})"
        return Run(
            name, ServiceSim(model, ready=1), Autoscaler(cfg), args.slo_p95, 2, charted=charted
        )

    def hpa(util: float, charted: bool = True) -> Run:
        cfg = HpaConfig(target_utilization=util, min_replicas=1, max_replicas=args.max_replicas)
        name = f"hpa (util {util:.1%})"
        return Run(
            name, ServiceSim(model, ready=1), HpaPolicy(cfg), args.slo_p95, 1, charted=charted
        )

    runs = [ours(args.quantile), hpa(target_util)]
    if args.frontier:
        slo_util = model.slo_batch(args.slo_p95) / model.max_batch
        runs += [ours(q, charted=False) for q in (0.8, 0.95) if q != args.quantile]
        runs += [hpa(u, charted=False) for u in (0.3, 0.45, slo_util) if u != target_util]
    rng = random.Random(args.seed)
    arrivals = [poisson(rng, r) for r in rates]
    started = time.perf_counter()
    for t, n in enumerate(arrivals):
        for run in runs:
            run.step(t, n)
    elapsed = time.perf_counter() - started

    print(
        f"trace: {args.trace.name}, {len(rates)} s ({len(rates) / 3600:.1f} h), "
        f"scale x{scale:.2f} (peak {args.peak_qps:.0f} req/s), {sum(arrivals):,} requests"
    )
    print(
        f"replica: max batch {model.max_batch}, {model.max_throughput:.1f} req/s saturated, "
        f"SLO batch {model.slo_batch(args.slo_p95):.1f} ({slo_rate:.2f} req/s), cold start "
        f"{model.cold_start_s:.0f} s; SLO p95 <= {args.slo_p95:g} s; ours: target "
        f"{slo_rate:.2f} req/s + q{args.quantile:g} forecast; hpa: {target_util:.1%} utilization"
        f" ({args.target_concurrency:g} in flight)"
    )
    header = (
        f"{'policy':<26}{'SLO-viol s':>11}{'viol %':>8}{'replica-h':>11}{'mean rep':>9}"
        f"{'max rep':>8}{'changes':>8}{'errors':>9}"
    )
    print(header)
    print("-" * len(header))
    for run in runs:
        print(
            f"{run.name:<26}{run.violations:>11}{run.violations / max(1, run.served_seconds):>8.2%}"
            f"{run.replica_seconds / 3600:>11.1f}{run.replica_seconds / len(rates):>9.2f}"
            f"{max(run.replicas):>8}{run.changes:>8}{run.errors:>9.0f}"
        )
    mine, base = runs[0], runs[1]
    ratio = mine.violations / max(1, base.violations)
    cost = mine.replica_seconds / base.replica_seconds
    print(
        f"ours/hpa: SLO-violation seconds x{ratio:.2f}, replica-hours x{cost:.2f} "
        f"(target: <= 0.50 and <= 1.00) -> {'MET' if ratio <= 0.5 and cost <= 1 else 'NOT MET'}"
    )
    print(f"replay took {elapsed:.1f} s")
    if args.charts:
        charts(args.charts, rates, [run for run in runs if run.charted], args.slo_p95)
    return 0


def charts(folder: Path, rates: list[float], runs: list[Run], slo: float) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder.mkdir(parents=True, exist_ok=True)

    def draw(name: str, lo: int, hi: int, every: int) -> None:
        xs = [t / 3600 for t in range(lo, hi, every)]
        fig, axes = plt.subplots(3, 1, figsize=(12, 8), sharex=True)
        axes[0].plot(xs, rates[lo:hi:every], color="gray", lw=0.8)
        axes[0].set_ylabel("offered req/s")
        for run, color in zip(runs, ("tab:blue", "tab:red"), strict=True):
            axes[1].plot(xs, run.replicas[lo:hi:every], color=color, lw=0.9, label=run.name)
            p95 = [min(v, 60.0) for v in run.p95[lo:hi:every]]
            axes[2].plot(xs, p95, color=color, lw=0.6, label=run.name)
        axes[1].set_ylabel("replicas")
        axes[1].legend(loc="upper right")
        axes[2].axhline(slo, color="black", ls="--", lw=0.8, label=f"SLO {slo:.0f} s")
        axes[2].set_ylabel("p95 latency (s, cut at 60)")
        axes[2].set_xlabel("hours into trace")
        axes[2].legend(loc="upper right")
        fig.suptitle(f"Autoscaler replay, Alibaba GenAI trace ({name})")
        fig.tight_layout()
        fig.savefig(folder / f"autoscale-{name}.png", dpi=110)
        plt.close(fig)
        print(f"wrote {folder / f'autoscale-{name}.png'}")

    draw("full", 0, len(rates), 10)
    lo = 4 * 3600 + 20 * 60  # the trough and rebound at about 4.5-5 h
    draw("burst", lo, min(len(rates), lo + 3600), 1)


if __name__ == "__main__":
    raise SystemExit(main())
