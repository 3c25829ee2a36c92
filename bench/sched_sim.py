"""Trace-driven simulation of the scheduling policies, side by side.

Run from the repository root (``--workers`` runs independent simulations in parallel):

    .venv/bin/python bench/sched_sim.py openb            # openb trace, 130% demand, seeds 42-51
    .venv/bin/python bench/sched_sim.py llm              # 100,000 LLM-era jobs on 10,000 GPUs
    .venv/bin/python bench/sched_sim.py sweep            # allocation vs arriving load
    .venv/bin/python bench/sched_sim.py seeds            # the LLM bar on seeds 42-51 (20,000 jobs)
    .venv/bin/python bench/sched_sim.py speed            # the 8,152-task openb trace, each policy
    .venv/bin/python bench/sched_sim.py --compiled llm   # any of them on the mypyc-compiled core
    .venv/bin/python bench/sched_sim.py seeds --runtimes declared  # told limits, not run times
    .venv/bin/python bench/sched_sim.py seeds --policies ours,ours-plan  # an experiment beside ours

Tables go to stdout (Markdown); charts (PNG, matplotlib if installed) to docs/benchmarks/.
Times are CPU time of the process that ran the simulation (``time.process_time``).
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from apps.scheduling import compiled  # noqa: E402

# ``--compiled`` must act before the core is imported (just below), so it is read here;
# argparse declares it too, for --help.
if "--compiled" in sys.argv[1:]:
    compiled.enable()

from apps.scheduling.sim import SimResult, Simulator  # noqa: E402
from apps.scheduling.sim import policies as pol  # noqa: E402
from apps.scheduling.sim.llm import RUNTIMES, llm_workload  # noqa: E402
from apps.scheduling.sim.loaders import openb_workload  # noqa: E402
from apps.scheduling.sim.report import (  # noqa: E402
    FGD_PUBLISHED,
    large_over_table,
    llm_tables,
    openb_table,
    published_table,
)

CHARTS = ROOT / "docs" / "benchmarks"
TOML = ROOT / "bench" / "llm_workload.toml"
RUNTIMES_SAID = {
    "exact": "the scheduler is told each job's real run time",
    "declared": "the scheduler is told only each job's declared runtime limit",
}
POLICIES = ["fifo-spread", "best-fit", "volcano", "ours"]


# ----------------------------------------------------------------------- workers


def _openb_run(args: tuple[str, int, str, float, int | None]) -> SimResult:
    name, seed, pods, tune, limit = args
    workload = openb_workload(seed, pods=pods, tune=tune, limit=limit)
    spec = pol.spec_for(name, quotas=False)
    started = time.process_time()
    result = Simulator(workload, spec, seed=seed, sample_interval=50.0).run()
    result.wall_s = time.process_time() - started
    return result


def _llm_run(args: tuple[str, int, int, int, float, float, str]) -> SimResult:
    name, seed, jobs, gpus, load, cycle, runtimes = args
    workload = llm_workload(TOML, seed, jobs=jobs, gpus=gpus, load=load, runtimes=runtimes)
    spec = pol.spec_for(name, quotas=True, devices=gpus)
    started = time.process_time()
    result = Simulator(
        workload, spec, seed=seed, cycle_interval=cycle, sample_interval=3600.0
    ).run()
    result.wall_s = time.process_time() - started
    return result


def _map(fn: Callable[[Any], SimResult], tasks: Sequence[Any], workers: int) -> list[SimResult]:
    if workers <= 1:
        return [fn(t) for t in tasks]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(fn, tasks))


# ----------------------------------------------------------------------- charts


def _plt() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib is not installed: no charts)", file=sys.stderr)
        return None
    return plt


def _binned(curves: Sequence[Sequence[tuple[float, float]]]) -> tuple[list[int], list[float]]:
    """Mean of y per integer x over several (x, y) curves."""
    sums: dict[int, list[float]] = {}
    for curve in curves:
        per: dict[int, list[float]] = {}
        for x, y in curve:
            per.setdefault(round(x), []).append(y)
        for x, ys in per.items():
            sums.setdefault(x, []).append(sum(ys) / len(ys))
    xs = sorted(sums)
    return xs, [sum(sums[x]) / len(sums[x]) for x in xs]


def openb_charts(results: dict[str, list[SimResult]], tag: str) -> list[Path]:
    plt = _plt()
    if plt is None:
        return []
    CHARTS.mkdir(parents=True, exist_ok=True)
    out = []
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for runs in results.values():
        xs, ys = _binned([r.curve for r in runs])
        ax.plot(xs, ys, label=runs[0].label)
    ax.axhline(FGD_PUBLISHED["FGD"], color="grey", ls=":", lw=1, label="FGD (published, 95.39%)")
    ax.axhline(
        FGD_PUBLISHED["Best-fit"], color="grey", ls="--", lw=1, label="Best-fit (published, 93.08%)"
    )
    ax.set_xlabel("arrived GPU demand (% of capacity)")
    ax.set_ylabel("GPU allocation ratio (%)")
    ax.set_xlim(60, 131)
    ax.set_ylim(60, 100)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(f"openb trace: allocation vs arriving load ({tag})")
    path = CHARTS / f"openb_alloc_{tag}.png"
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    out.append(path)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for runs in results.values():
        curves = [[(100 * s["arrived"], s["fragmented"]) for s in r.samples] for r in runs]
        xs, ys = _binned(curves)
        ax.plot(xs, ys, label=runs[0].label)
    ax.set_xlabel("arrived GPU demand (% of capacity)")
    ax.set_ylabel("fragmented GPUs")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(f"openb trace: fragmented GPUs ({tag})")
    path = CHARTS / f"openb_frag_{tag}.png"
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    out.append(path)
    return out


def llm_charts(results: Sequence[SimResult]) -> list[Path]:
    plt = _plt()
    if plt is None:
        return []
    CHARTS.mkdir(parents=True, exist_ok=True)
    out = []
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for r in results:
        waits = sorted(max(w, 1.0) for ws in r.waits.values() for w in ws)
        if not waits:
            continue
        n = len(waits)
        ax.plot(waits, [(i + 1) / n for i in range(n)], label=r.label)
    ax.set_xscale("log")
    ax.set_xlabel("queueing delay (s, log)")
    ax.set_ylabel("share of jobs")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title("LLM workload: queueing delay CDF")
    path = CHARTS / "llm_wait_cdf.png"
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    out.append(path)
    fig, axes = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
    for r in results:
        ts = [s["t"] / 3600 for s in r.samples]
        axes[0].plot(ts, [100 * s["alloc"] for s in r.samples], label=r.label, lw=0.8)
        axes[1].plot(ts, [s["fragmented"] for s in r.samples], label=r.label, lw=0.8)
    axes[0].set_ylabel("GPU allocation (%)")
    axes[1].set_ylabel("fragmented GPUs")
    axes[1].set_xlabel("time (h)")
    for ax in axes:
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    axes[0].set_title("LLM workload: allocation and fragmentation over time")
    path = CHARTS / "llm_alloc_frag_time.png"
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    out.append(path)
    return out


def sweep_chart(rows: dict[str, list[tuple[float, float]]]) -> list[Path]:
    plt = _plt()
    if plt is None:
        return []
    CHARTS.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for label, points in rows.items():
        ax.plot([100 * x for x, _ in points], [100 * y for _, y in points], marker="o", label=label)
    ax.plot([40, 150], [40, 150], color="grey", ls=":", lw=1, label="allocation = load")
    ax.set_xlabel("arriving load (offered GPU time, % of capacity)")
    ax.set_ylabel("GPU allocation, window mean (%)")
    ax.set_ylim(40, 100)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title("LLM workload: allocation vs arriving load")
    path = CHARTS / "llm_alloc_vs_load.png"
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return [path]


# ----------------------------------------------------------------------- commands


def _seeds(text: str) -> list[int]:
    if "-" in text:
        lo, hi = text.split("-")
        return list(range(int(lo), int(hi) + 1))
    return [int(s) for s in text.split(",")]


def cmd_openb(args: argparse.Namespace) -> None:
    seeds = _seeds(args.seeds)
    names = args.policies.split(",")
    tasks = [(n, s, args.pods, args.tune, None) for n in names for s in seeds]
    started = time.perf_counter()
    flat = _map(_openb_run, tasks, args.workers)
    results: dict[str, list[SimResult]] = {}
    for (name, _, _, _, _), r in zip(tasks, flat, strict=True):
        results.setdefault(name, []).append(r)
    tag = Path(args.pods).stem.removeprefix("openb_pod_list_")
    print(f"## openb {tag}, arrivals to {100 * args.tune:.0f}% of GPU capacity, seeds {args.seeds}")
    print()
    print(openb_table(results))
    print()
    if tag == "default":
        print(published_table())
        print()
    print(f"(wall {time.perf_counter() - started:.0f} s with {args.workers} workers)")
    for path in openb_charts(results, tag):
        print(f"chart: {path.relative_to(ROOT)}")


def cmd_llm(args: argparse.Namespace) -> None:
    names = args.policies.split(",")
    tasks = [
        (n, args.seed, args.jobs, args.gpus, args.load, args.cycle, args.runtimes) for n in names
    ]
    started = time.perf_counter()
    results = _map(_llm_run, tasks, args.workers)
    w = llm_workload(TOML, args.seed, jobs=args.jobs, gpus=args.gpus, load=args.load)
    print(
        f"## LLM workload: {args.jobs} jobs, {args.gpus} GPUs, offered load {args.load:g}, "
        f"seed {args.seed}, cycle every {args.cycle:g} s; arrivals over "
        f"{w.meta['window_h']:.0f} h, {len(w.failures)} node failures; "
        f"{RUNTIMES_SAID[args.runtimes]}"
    )
    print()
    print(llm_tables(results))
    print()
    for r in results:
        if r.summary.get("large_over"):
            print(f"{r.label}: >=256-GPU jobs over 2x their fair-share expectation")
            print()
            print(large_over_table(r))
            print()
    print(f"(wall {time.perf_counter() - started:.0f} s with {args.workers} workers)")
    for path in llm_charts(results):
        print(f"chart: {path.relative_to(ROOT)}")


def cmd_sweep(args: argparse.Namespace) -> None:
    names = args.policies.split(",")
    loads = [float(x) for x in args.loads.split(",")]
    tasks = [
        (n, args.seed, args.jobs, args.gpus, ld, args.cycle, args.runtimes)
        for n in names
        for ld in loads
    ]
    flat = _map(_llm_run, tasks, args.workers)
    rows: dict[str, list[tuple[float, float]]] = {}
    table_rows = []
    for (name, _, _, _, ld, _, _), r in zip(tasks, flat, strict=True):
        rows.setdefault(r.label, []).append((ld, r.summary["alloc_window"]))
        table_rows.append((name, ld, r))
    print(
        f"## Allocation vs arriving load: {args.jobs} jobs, {args.gpus} GPUs, seed {args.seed}; "
        f"{RUNTIMES_SAID[args.runtimes]}"
    )
    print()
    print("| load | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for ld in loads:
        cells = []
        for name in names:
            r = next(r for n, x, r in table_rows if n == name and x == ld)
            s = r.summary
            inside, total = s["one_leaf"]
            leaf = f"{100 * inside / total:.0f}%" if total else "-"
            cells.append(
                f"{100 * s['alloc_window']:.1f}% (leaf {leaf}, "
                f">=256 over 2x: {s['large_over_2x_expectation']}/{s['large_checked']})"
            )
        print(f"| {100 * ld:.0f}% | " + " | ".join(cells) + " |")
    for path in sweep_chart(rows):
        print(f"chart: {path.relative_to(ROOT)}")


def cmd_seeds(args: argparse.Namespace) -> None:
    """The LLM bar on several seeds: one row per policy and seed, and the totals."""
    names = args.policies.split(",")
    seeds = _seeds(args.seeds)
    tasks = [
        (n, s, args.jobs, args.gpus, args.load, args.cycle, args.runtimes)
        for n in names
        for s in seeds
    ]
    flat = _map(_llm_run, tasks, args.workers)
    print(
        f"## LLM bar by seed: {args.jobs} jobs, {args.gpus} GPUs, offered load {args.load:g}, "
        f"seeds {args.seeds}; {RUNTIMES_SAID[args.runtimes]}"
    )
    print()
    print(
        "| policy | seed | allocation | in one leaf | >=256-GPU jobs over 2x | worst "
        "| over 2x, limit term by rate only | over 2x, the rules in full "
        "| mean wait 2-8 / 9-64 / 65-255 GPUs | past max wait |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    totals: dict[str, list[int]] = {}
    late: dict[str, int] = {}
    for (name, seed, *_), r in zip(tasks, flat, strict=True):
        s = r.summary
        inside, total = s["one_leaf"]
        over, checked = s["large_over_2x_expectation"], s["large_checked"]
        rate = s["large_over_2x_rate"]
        rules = s["large_over_2x_rules"]
        t = totals.setdefault(name, [0, 0, 0, 0, 0, 0])
        t[0] += over
        t[1] += checked
        t[2] += inside
        t[3] += total
        t[4] += rate
        t[5] += rules
        print(
            f"| {name} | {seed} | {100 * s['alloc_window']:.1f}% | "
            f"{100 * inside / max(total, 1):.1f}% | {over}/{checked} | "
            f"{s['large_worst_wait_over_expectation']:.1f}x | {rate}/{checked} | "
            f"{rules}/{checked} | {_mean_waits(s)} | {s['late_jobs']} |"
        )
        late[name] = late.get(name, 0) + s["late_jobs"]
    for name, (over, checked, inside, total, rate, rules) in totals.items():
        print(
            f"| {name} | all | | {100 * inside / max(total, 1):.1f}% | {over}/{checked} | "
            f"| {rate}/{checked} | {rules}/{checked} | | {late[name]} |"
        )


def _mean_waits(summary: dict[str, Any]) -> str:
    """Mean queueing delay of the 2-8, 9-64 and 65-255-GPU jobs, in minutes."""
    return " / ".join(f"{summary[f'wait_{c}'].mean / 60:.0f}" for c in ("2-8", "9-64", "65-255"))


def cmd_speed(args: argparse.Namespace) -> None:
    print("## Speed: the 8,152-task openb trace (no inflation), one seed, each policy")
    print()
    print("| policy | CPU s | tasks placed | cycles |")
    print("|---|---|---|---|")
    total = 0.0
    for name in POLICIES:
        r = _openb_run((name, 42, "openb_pod_list_default.csv", 0.0, None))
        total += r.wall_s
        placed = r.summary["jobs"] - r.summary["dropped"]
        print(f"| {r.label} | {r.wall_s:.1f} | {placed} | {r.cycles} |")
    print(f"| all four | {total:.1f} | | |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--compiled",
        action="store_true",
        help="run the core and the engine compiled with mypyc (apps/scheduling/compiled.py; "
        "builds on first use, about two minutes)",
    )
    sub = parser.add_subparsers(dest="cmd", required=True)
    o = sub.add_parser("openb")
    o.add_argument("--seeds", default="42-51")
    o.add_argument("--pods", default="openb_pod_list_default.csv")
    o.add_argument("--tune", type=float, default=1.3)
    o.add_argument("--policies", default=",".join(POLICIES))
    o.add_argument("--workers", type=int, default=2)
    for name in ("llm", "sweep", "seeds"):
        p = sub.add_parser(name)
        if name == "seeds":
            p.add_argument("--seeds", default="42-51")
        else:
            p.add_argument("--seed", type=int, default=42)
        p.add_argument("--jobs", type=int, default=100_000 if name == "llm" else 20_000)
        p.add_argument("--gpus", type=int, default=10_000)
        p.add_argument("--cycle", type=float, default=60.0, help="seconds between cycles")
        p.add_argument("--policies", default=",".join(POLICIES))
        p.add_argument("--workers", type=int, default=2)
        p.add_argument(
            "--runtimes",
            choices=RUNTIMES,
            default="exact",
            help="what the scheduler is told of run times: each job's real one (exact), or "
            "only the limit its owner would declare ([runtime_estimates] in the workload file)",
        )
        if name == "llm":
            p.add_argument("--load", type=float, default=1.0)
        elif name == "seeds":
            p.add_argument("--load", type=float, default=0.95)
        else:
            p.add_argument("--loads", default="0.6,0.8,1.0,1.2,1.4")
    sub.add_parser("speed")
    args = parser.parse_args()
    core = "compiled with mypyc" if compiled.active() else "interpreted"
    print(
        f"(Python {platform.python_version()}, {platform.machine()}, core {core}, "
        f"{time.strftime('%Y-%m-%d')})"
    )
    print()
    commands = {
        "openb": cmd_openb,
        "llm": cmd_llm,
        "sweep": cmd_sweep,
        "seeds": cmd_seeds,
        "speed": cmd_speed,
    }
    commands[args.cmd](args)


if __name__ == "__main__":
    main()
