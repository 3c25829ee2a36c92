"""Idle-GPU governance on the openb trace: how much allocated GPU time the idle rule returns.

Run from the repository root (``make bench-governance``):

    .venv/bin/python bench/governance_sim.py                  # tables to stdout (Markdown)
    .venv/bin/python bench/governance_sim.py --seeds 1-3 --loads 1.3

1. The real timeline: every GPU task of the openb pod list with its real lifetime and GPU
   request (GPU sharing as the trace asks), an activity profile drawn from the model in
   ``bench/governance_idle.toml`` (one draw per seed), and the platform's idle rule
   (``apps.governance.rules``). Allocated, idle and reclaimed GPU-hours, stops, false stops.
2. Sensitivity of the reclaimed share to the model's parameters.
3. Under load: the trace's tasks replayed through the simulator (policy "ours") on a share of
   the openb nodes at 130 % and 160 % offered load, with and without the rule.

Times are CPU time of this process (``time.process_time``).
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from apps.governance.rules import IdleRule  # noqa: E402
from apps.scheduling.sim import Simulator  # noqa: E402
from apps.scheduling.sim import policies as pol  # noqa: E402
from apps.scheduling.sim.idle import IdleModel, Reclaim, reclaim, rule_from_dict  # noqa: E402
from apps.scheduling.sim.idle_workload import (  # noqa: E402
    gpu_tasks,
    load_workload,
    openb_profiles,
    qos_of,
)
from apps.scheduling.sim.loaders import OpenbTask  # noqa: E402
from apps.scheduling.sim.metrics import percentile  # noqa: E402

TOML = ROOT / "bench" / "governance_idle.toml"


def _seeds(text: str) -> list[int]:
    if "-" in text:
        lo, hi = text.split("-")
        return list(range(int(lo), int(hi) + 1))
    return [int(s) for s in text.split(",")]


def _runs(
    tasks: Sequence[OpenbTask],
    model: IdleModel,
    rule: IdleRule,
    seeds: Sequence[int],
    exempt: set[str],
) -> list[Reclaim]:
    return [
        reclaim(openb_profiles(tasks, model, rule, s, exempt=exempt), rule, model) for s in seeds
    ]


def _spread(values: Sequence[float], fmt: str = "{:.1f}") -> str:
    mean = statistics.fmean(values)
    if len(values) == 1:
        return fmt.format(mean)
    return f"{fmt.format(mean)} [{fmt.format(min(values))} to {fmt.format(max(values))}]"


def _mean(rs: Sequence[Reclaim], fn: Callable[[Reclaim], float]) -> float:
    return statistics.fmean(fn(r) for r in rs)


def timeline_table(scopes: dict[str, list[Reclaim]]) -> str:
    lines = [
        "| scope | tasks judged | allocated GPU-h | idle GPU-h (% of alloc.) | reclaimed GPU-h "
        "(% of alloc.) | of the idle GPU-h | stopped | false stops | busy GPU-h cut by "
        "false stops | owners who extended |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for scope, rs in scopes.items():
        r0 = rs[0]
        lines.append(
            f"| {scope} | {_mean(rs, lambda r: r.tasks - r.exempt):.0f} | "
            f"{r0.allocated_gpu_h:,.0f} | "
            f"{_spread([r.idle_gpu_h for r in rs], '{:,.0f}')} "
            f"({_spread([r.pct(r.idle_gpu_h) for r in rs])} %) | "
            f"{_spread([r.reclaimed_gpu_h for r in rs], '{:,.0f}')} "
            f"(**{_spread([r.pct(r.reclaimed_gpu_h) for r in rs])} %**) | "
            f"{_spread([100 * r.idle_reclaimed_gpu_h / r.idle_gpu_h for r in rs])} % | "
            f"{_spread([r.stopped for r in rs], '{:.0f}')} | "
            f"{_spread([r.false_stops for r in rs], '{:.0f}')} | "
            f"{_spread([r.false_stop_busy_gpu_h for r in rs], '{:,.0f}')} | "
            f"{_spread([r.extended for r in rs], '{:.0f}')} |"
        )
    return "\n".join(lines)


def sensitivity_table(
    tasks: Sequence[OpenbTask],
    model: IdleModel,
    rule: IdleRule,
    seeds: Sequence[int],
    exempt: set[str],
) -> str:
    idle_low = replace(model, p_never=model.p_never / 2, p_tail=model.p_tail / 2)
    idle_high = replace(model, p_never=model.p_never * 1.5, p_tail=model.p_tail * 1.5)
    variants: list[tuple[str, IdleModel, IdleRule]] = [
        ("default model (TOML)", model, rule),
        ("idle mix x0.5 (p_never, p_tail halved)", idle_low, rule),
        ("idle mix x1.5", idle_high, rule),
        ("keep-running clicked by 0 % of owners", replace(model, keep_running=0.0), rule),
        ("keep-running clicked by 60 % of owners", replace(model, keep_running=0.6), rule),
        (
            f"pauses 3x longer (median {3 * model.pause_median_h:g} h)",
            replace(model, pause_median_h=3 * model.pause_median_h),
            rule,
        ),
        ("sharing tasks judged on raw util (no / share)", replace(model, measure="raw"), rule),
        ("notebook idle period (1 h) for every task", replace(model, notebook=True), rule),
        (
            "raw util and busy util 10-40 % (readings near the threshold)",
            replace(model, measure="raw", busy_util=(10.0, 40.0)),
            rule,
        ),
    ]
    lines = [
        "| variant | idle % of alloc. | reclaimed % of alloc. | stopped | false stops | "
        "busy GPU-h cut by false stops |",
        "|---|---|---|---|---|---|",
    ]
    for label, m, r in variants:
        rs = _runs(tasks, m, r, seeds, exempt)
        lines.append(
            f"| {label} | {_spread([x.pct(x.idle_gpu_h) for x in rs])} | "
            f"{_spread([x.pct(x.reclaimed_gpu_h) for x in rs])} | "
            f"{_mean(rs, lambda x: x.stopped):.0f} | {_mean(rs, lambda x: x.false_stops):.0f} | "
            f"{_mean(rs, lambda x: x.false_stop_busy_gpu_h):,.0f} |"
        )
    return "\n".join(lines)


# ------------------------------------------------------------------------- under load


@dataclass
class LoadRow:
    label: str
    load: float
    gpus: int
    tasks: int
    alloc: float
    busy_share: float  # busy GPU-h delivered in the window / capacity GPU-h
    started: int
    submitted: int
    wait_mean: float
    wait_p95: float
    never_started: int
    stopped: int
    false_stops: int
    cpu_s: float


def load_run(
    tasks: Sequence[OpenbTask],
    model: IdleModel,
    rule: IdleRule,
    cfg: dict[str, Any],
    load: float,
    label: str,
    governed: bool,
    exempt: set[str],
) -> LoadRow:
    started_cpu = time.process_time()
    lr = load_workload(
        tasks,
        model,
        rule,
        seed=int(cfg["seed"]),
        load=load,
        window_h=float(cfg["window_h"]),
        warmup_h=float(cfg["warmup_h"]),
        node_share=float(cfg["node_share"]),
        governed=governed,
        exempt=exempt,
    )
    w = lr.workload
    sim = Simulator(w, pol.ours(quotas=False), seed=int(cfg["seed"]), cycle_interval=60.0)
    result = sim.run()
    horizon = float(w.horizon or 0.0)
    lo = w.warmup
    busy = 0.0
    waits: list[float] = []
    never = stopped = false_stops = started = 0
    for run in sim.runs:
        p = lr.profiles[run.job.job_id]
        job = run.job
        if job.submit >= lo:
            if run.first_start is None:
                never += 1
                waits.append(horizon - job.submit)
            else:
                started += 1
                waits.append(run.first_start - job.submit)
        if run.first_start is None:
            continue
        s = run.first_start
        held = min(job.duration or p.lifetime, horizon - s)
        a, b = max(lo - s, 0.0), held
        if b > a:
            busy += p.gpus * ((b - a) - (p.idle_time(b) - p.idle_time(a)))
        stop = lr.stops.get(job.job_id)
        if stop is not None and s + stop <= horizon:
            stopped += 1
            false_stops += p.busy_after(stop) > 0
    capacity_s = sum(n.accelerator_count for n in w.nodes) * (horizon - lo)
    return LoadRow(
        label=label,
        load=load,
        gpus=int(w.meta["gpus"]),  # type: ignore[call-overload]
        tasks=len(w.jobs),
        alloc=result.summary["alloc_window"],
        busy_share=busy / capacity_s if capacity_s else 0.0,
        started=started,
        submitted=len(waits),
        wait_mean=statistics.fmean(waits) if waits else 0.0,
        wait_p95=percentile(waits, 95),
        never_started=never,
        stopped=stopped,
        false_stops=false_stops,
        cpu_s=time.process_time() - started_cpu,
    )


def load_table(rows: Sequence[LoadRow]) -> str:
    lines = [
        "| offered load | governance | allocation ratio | busy GPU time / capacity | "
        "tasks started / submitted | mean wait | p95 wait | never started | stopped | "
        "false stops | CPU s |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {100 * r.load:.0f} % | {r.label} | {100 * r.alloc:.1f} % | "
            f"{100 * r.busy_share:.1f} % | {r.started:,} / {r.submitted:,} | "
            f"{r.wait_mean / 60:.1f} min | {r.wait_p95 / 60:.1f} min | {r.never_started:,} | "
            f"{r.stopped:,} | {r.false_stops:,} | {r.cpu_s:.1f} |"
        )
    return "\n".join(lines)


# ------------------------------------------------------------------------- main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", type=Path, default=TOML)
    parser.add_argument("--seeds", default="1-10", help="profile draws of the timeline runs")
    parser.add_argument("--loads", default=None, help="offered loads (default: the TOML's)")
    parser.add_argument("--no-load", action="store_true", help="skip the simulator runs")
    args = parser.parse_args()
    with args.config.open("rb") as fh:
        cfg = tomllib.load(fh)
    model = IdleModel.from_dict(cfg.get("model", {}))
    rule = rule_from_dict(cfg.get("rule", {}))
    exempt_qos = set(cfg.get("scope", {}).get("exempt_qos", []))
    seeds = _seeds(args.seeds)
    started = time.process_time()
    tasks = gpu_tasks()
    qos = qos_of()
    exempt = {t.name for t in tasks if qos.get(t.name) in exempt_qos}
    print(
        f"(Python {platform.python_version()}, {platform.machine()}, {time.strftime('%Y-%m-%d')})"
    )
    print()
    print(
        f"## Real openb timeline: {len(tasks):,} GPU tasks, lifetimes and GPU shares from the "
        f"trace, activity model of {args.config.name}, seeds {args.seeds} (mean [min to max])"
    )
    print()
    scopes = {
        "all GPU tasks governed": _runs(tasks, model, rule, seeds, set()),
        f"product scope ({', '.join(sorted(exempt_qos))} exempt)": _runs(
            tasks, model, rule, seeds, exempt
        ),
    }
    print(timeline_table(scopes))
    print()
    print("## Sensitivity (all GPU tasks governed; reclaimed = GPU-h the stops returned)")
    print()
    print(sensitivity_table(tasks, model, rule, seeds, set()))
    print()
    if not args.no_load:
        lc = cfg["load"]
        loads = [float(x) for x in args.loads.split(",")] if args.loads else lc["loads"]
        rows = []
        for load in loads:
            rows.append(load_run(tasks, model, rule, lc, load, "none", False, set()))
            rows.append(load_run(tasks, model, rule, lc, load, "all tasks", True, set()))
            rows.append(load_run(tasks, model, rule, lc, load, "product scope", True, exempt))
        print(
            f"## Under load: policy 'ours', {rows[0].gpus} GPUs (a {lc['node_share']:g} share "
            f"of the openb nodes), Poisson arrivals over {lc['window_h']:g} h, measured after "
            f"{lc['warmup_h']:g} h, seed {lc['seed']}"
        )
        print()
        print(load_table(rows))
        print()
    print(f"(total CPU {time.process_time() - started:.0f} s)")


if __name__ == "__main__":
    main()
