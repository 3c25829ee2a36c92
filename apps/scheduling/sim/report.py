"""Markdown tables of simulation results, policies side by side."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from .metrics import LargeWait, SimResult, WaitStats
from .workload import SIZE_CLASSES

FGD_PUBLISHED = {
    "FGD": 95.39,
    "Best-fit": 93.08,
    "GPU Packing": 92.00,
    "GPU Clustering": 91.88,
    "Dot-product": 90.85,
    "Random-fit": 87.47,
}
"""GPU allocation ratio (%) at 130% arrived demand on the openb default trace, mean of seeds
42-51 (Weng et al., USENIX ATC 2023; artifact ``experiments/analysis/expected_results``)."""


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else math.nan


def _std(values: Sequence[float]) -> float:
    if len(values) < 2:
        return 0.0
    m = _mean(values)
    return math.sqrt(sum((v - m) ** 2 for v in values) / (len(values) - 1))


def _h(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "never"
    if seconds < 3600:
        return f"{seconds / 60:.1f} m"
    return f"{seconds / 3600:.1f} h"


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def openb_table(results: Mapping[str, Sequence[SimResult]]) -> str:
    """Allocation at 130% arrived demand per policy over seeds, with the end state."""
    rows = []
    for _, runs in results.items():
        alloc = [r.summary["alloc_at_130"] or 0.0 for r in runs]
        rows.append(
            [
                runs[0].label,
                len(runs),
                f"{_mean(alloc):.2f}",
                f"{_std(alloc):.2f}",
                f"{min(alloc):.2f} - {max(alloc):.2f}",
                f"{_mean([r.summary['unallocated_end'] for r in runs]):.0f}",
                f"{_mean([r.summary['fragmented_end'] for r in runs]):.0f}",
                f"{_mean([r.summary['dropped'] for r in runs]):.0f}",
                f"{_mean([r.wall_s for r in runs]):.1f}",
            ]
        )
    return table(
        [
            "policy",
            "seeds",
            "alloc @130% (%)",
            "std",
            "min - max",
            "unallocated GPUs",
            "fragmented GPUs",
            "tasks that did not fit",
            "CPU s / run",
        ],
        rows,
    )


def published_table() -> str:
    return table(
        ["published policy (ATC'23)", "alloc @130% (%)"],
        [[k, f"{v:.2f}"] for k, v in FGD_PUBLISHED.items()],
    )


def wait_cell(w: WaitStats) -> str:
    if not w.count:
        return "-"
    cens = f" ({w.censored} never ran)" if w.censored else ""
    return f"{_h(w.mean)} / {_h(w.p95)} / {_h(w.p99)}{cens}"


def llm_tables(results: Sequence[SimResult]) -> str:
    """Every measure of a dynamic run, one column per policy."""
    heads = ["measure", *[r.label for r in results]]

    def row(name: str, fn: object) -> list[object]:
        return [name, *[fn(r) for r in results]]  # type: ignore[operator]

    def frac(pair: tuple[int, int]) -> str:
        inside, total = pair
        return f"{100 * inside / total:.1f}% ({inside}/{total})" if total else "-"

    main = [
        row(
            "GPU allocation, mean over window", lambda r: f"{100 * r.summary['alloc_window']:.1f}%"
        ),
        row("mean free GPUs (window)", lambda r: f"{r.summary['mean_free_window']:.0f}"),
        row(
            "mean fragmented GPUs (window)", lambda r: f"{r.summary['mean_fragmented_window']:.0f}"
        ),
        row(
            "jobs / completed / never started",
            lambda r: (
                f"{r.summary['jobs']} / {r.summary['completed']} / {r.summary['never_started']}"
            ),
        ),
        row("multi-node jobs that fit a leaf: in one leaf", lambda r: frac(r.summary["one_leaf"])),
        row("multi-node jobs that fit an SU: in one SU", lambda r: frac(r.summary["one_su"])),
        row("longest wait of a >=256-GPU job", lambda r: _h(r.summary["large_longest_wait"])),
        row(
            ">=256-GPU jobs over 2x fair-share expectation",
            lambda r: (
                f"{r.summary['large_over_2x_expectation']}/{r.summary['large_checked']} "
                f"(worst {r.summary['large_worst_wait_over_expectation']:.2f}x)"
            ),
        ),
        row(
            "same, under the product's rules in full (only P4/P5 work reclaimed; the tenant's "
            "higher-priority work arriving while it waits goes first)",
            lambda r: f"{r.summary.get('large_over_2x_rules', '-')}/{r.summary['large_checked']}",
        ),
        row(
            "same, borrowing-limit term from the turnover rate only (definition until 2026-11-30)",
            lambda r: f"{r.summary.get('large_over_2x_rate', '-')}/{r.summary['large_checked']}",
        ),
        row(
            "same, without the borrowing-limit term (first definition)",
            lambda r: f"{r.summary.get('large_over_2x_plain', '-')}/{r.summary['large_checked']}",
        ),
        row(
            "preemptions / GPU-hours lost",
            lambda r: f"{r.summary['preemptions']} / {r.summary['preempt_lost_gpu_h']:.0f}",
        ),
        row(
            "node-failure restarts / GPU-hours lost",
            lambda r: (
                f"{r.summary['failure_interruptions']} / {r.summary['failure_lost_gpu_h']:.0f}"
            ),
        ),
        row("jobs past their max wait", lambda r: r.summary["late_jobs"]),
        row("scheduling cycles", lambda r: r.cycles),
        row("CPU time of the run", lambda r: f"{r.wall_s:.0f} s"),
    ]
    out = [table(heads, main), "", "Queueing delay, mean / p95 / p99, by job size (GPUs):", ""]
    labels = [k.removeprefix("wait_") for k in results[0].summary if k.startswith("wait_")]
    waits = []
    for label in labels:
        if not any(r.summary[f"wait_{label}"].count for r in results):
            continue
        n = results[0].summary[f"wait_{label}"].count
        waits.append(
            [f"{label} ({n} jobs)", *[wait_cell(r.summary[f"wait_{label}"]) for r in results]]
        )
    out.append(table(["size class", *[r.label for r in results]], waits))
    out += [
        "",
        "Tenants: guarantee, mean use (share of guarantee), time short of 90% of the "
        "guarantee while it had jobs waiting:",
        "",
    ]
    tenant_rows = []
    for i, t in enumerate(results[0].tenants):
        cells: list[object] = [f"{t['tenant']} ({t['guarantee']:.0f})"]
        for r in results:
            tt = r.tenants[i]
            cells.append(
                f"{tt['mean_used']:.0f} ({100 * tt['used_over_guarantee']:.0f}%), "
                f"short {100 * tt['short_when_demanding']:.0f}%"
            )
        tenant_rows.append(cells)
    out.append(table(["tenant (guarantee GPUs)", *[r.label for r in results]], tenant_rows))
    return "\n".join(out)


PENDING_SHOWN = ("quota", "reserved", "capacity")


def large_over_table(result: SimResult, limit: int = 12) -> str:
    """The jobs of >= 256 GPUs that waited over 2x their fair-share expectation, worst
    first: the earliest their nodes could have been free under the preemption rules, their
    wait under their tenant's borrowing limit alone, what the cluster looked like when they
    arrived, and where their wait went."""
    over: list[LargeWait] = result.summary.get("large_over", [])
    rows = []
    for w in over[:limit]:
        other = sum(v for k, v in w.pending.items() if k not in PENDING_SHOWN)
        rows.append(
            [
                w.job_id,
                w.tenant,
                f"P{w.priority}",
                f"{w.gpus:.0f}",
                _h(w.wait or 0.0),
                _h(w.expectation),
                f"{w.ratio:.1f}x",
                _h(w.expectation_rules),
                _h(w.nodes_free),
                f"{_h(w.quota_wait)} / {_h(w.quota_wait_rules)}",
                f"{w.idle:.0f} / {w.unused_guarantee:.0f} / {w.reclaimable:.0f}",
                " / ".join(_h(w.pending.get(k, 0.0)) for k in PENDING_SHOWN) + f" / {_h(other)}",
            ]
        )
    if len(over) > limit:
        rows.append([f"... {len(over) - limit} more", *[""] * 11])
    return table(
        [
            "job",
            "tenant",
            "priority",
            "GPUs",
            "waited",
            "expectation",
            "ratio",
            "expectation under the rules in full",
            "its nodes free at the earliest",
            "under its tenant's limit alone (with later higher-priority work)",
            "at arrival: idle / unused guarantee / reclaimable GPUs",
            "pending: quota / reserved / capacity / other",
        ],
        rows,
    )


def sweep_table(cases: Sequence[tuple[str, int, Sequence[Sequence[SimResult]]]]) -> str:
    """One row per case and policy: a series of what-if replays read as one table. Each
    case is ``(what changed, the replayed cluster's accelerators, per seed a result per
    policy)``; with several seeds a row gives the means over them, and for the mean waits
    also their range (a load question's answer depends on which jobs were copied). Mean
    waits by the size classes any case has; GPUs allocated is the comparable measure
    across clusters of different sizes."""
    classes = [
        label
        for label, _, _ in SIZE_CLASSES
        if any(r.summary[f"wait_{label}"].count for _, _, runs in cases for rs in runs for r in rs)
    ]

    def count(values: list[float]) -> str:  # a mean of counts: whole, or to a tenth
        m = _mean(values)
        return f"{m:.0f}" if m == int(m) else f"{m:.1f}"

    def wait(values: list[float]) -> str:
        if not values:
            return "-"
        if min(values) == max(values):
            return _h(values[0])
        return f"{_h(_mean(values))} ({_h(min(values))} - {_h(max(values))})"

    rows = []
    for case, accelerators, runs in cases:
        for i, first in enumerate(runs[0]):
            sums = [rs[i].summary for rs in runs]
            alloc = [s["alloc_window"] for s in sums]
            held = [s["mean_allocated_window"] for s in sums]
            waits = [
                wait([s[f"wait_{c}"].mean for s in sums if s[f"wait_{c}"].count]) for c in classes
            ]
            rows.append(
                [
                    case,
                    first.policy,
                    accelerators,
                    f"{100 * _mean(alloc):.1f}%",
                    f"{_mean(held):.1f}",
                    *waits,
                    count([s["late_jobs"] for s in sums]),
                    count([s["never_started"] for s in sums]),
                    f"{count([s['preemptions'] for s in sums])} / "
                    f"{_mean([s['preempt_lost_gpu_h'] for s in sums]):.0f}",
                ]
            )
    heads = ["replay", "policy", "GPUs", "allocation", "GPUs allocated"]
    heads += [f"wait {c} (mean)" for c in classes]
    heads += ["past max wait", "not started", "preemptions / GPU-h lost"]
    return table(heads, rows)
