"""``manage.py whatif``: replay the cluster's recent history under other scheduling policies."""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from apps.clusters.models import ResourcePool
from apps.scheduling import whatif
from apps.scheduling.core import Quota
from apps.scheduling.sim.report import large_over_table, llm_tables, table, wait_cell
from apps.scheduling.sim.scenario import MAX_LOAD, NodeChange, ScenarioError
from apps.scheduling.snapshot import pool_key
from apps.tenancy.models import Tenant


class Command(BaseCommand):
    help = (
        "Replay the jobs of the last HOURS through the simulator under each policy and print "
        "the measures side by side, with the queueing delays as they really were."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--hours", type=float, default=168.0, help="window (default 168)")
        parser.add_argument(
            "--policies",
            default=",".join(whatif.POLICIES),
            help=f"comma-separated, from {', '.join(whatif.POLICIES)}",
        )
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument(
            "--nodes",
            action="append",
            default=[],
            metavar="POOL=N",
            help="replay with N nodes added to (N > 0) or removed from (N < 0) a pool, named "
            "by id, by name or as cluster/pool; repeatable",
        )
        parser.add_argument(
            "--quota",
            action="append",
            default=[],
            metavar="TENANT:POOL:MODEL=G+B",
            help="replay with the tenant's quota of MODEL in POOL set to a guarantee of G and "
            "a borrowing limit of B devices; repeatable",
        )
        parser.add_argument(
            "--load",
            type=float,
            default=1.0,
            metavar="F",
            help="replay F times the work that arrived (1.3: 30%% more jobs in the same "
            f"pattern; from 0.1 to {MAX_LOAD:g}; default 1)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        hours = options["hours"]
        if hours <= 0:
            raise CommandError("--hours must be positive")
        names = [n.strip() for n in options["policies"].split(",") if n.strip()]
        unknown = [n for n in names if n not in whatif.POLICIES]
        if unknown or not names:
            raise CommandError(
                f"unknown policy {', '.join(unknown) or '(none given)'}; "
                f"choose from {', '.join(whatif.POLICIES)}"
            )
        if not 0.1 <= options["load"] <= MAX_LOAD:
            raise CommandError(f"--load must be from 0.1 to {MAX_LOAD:g}")
        changes = [_change(text) for text in options["nodes"]]
        quotas = [_quota(text) for text in options["quota"]]
        start, end = whatif.window_ending(timezone.now(), hours)
        try:
            history = whatif.changed(
                whatif.history_workload(start, end),
                changes,
                quotas,
                load=options["load"],
                seed=options["seed"],
            )
        except ScenarioError as exc:
            raise CommandError(str(exc)) from exc
        w = history.workload
        if not w.nodes:
            raise CommandError("no nodes in any resource pool: nothing to replay on")
        self.stdout.write(
            f"## What-if: {len(w.jobs)} jobs (submitted in {start:%Y-%m-%d %H:%M} - "
            f"{end:%Y-%m-%d %H:%M} UTC or running when it began) on {len(w.nodes)} nodes "
            f"({w.capacity_milli // 1000} accelerators); {history.never_started} never "
            "started and are not replayed\n"
        )
        for c in history.node_changes:
            self.stdout.write(
                f"Replayed with {c['nodes']:+d} nodes ({c['accelerators']:+d} accelerators) in "
                f"{c['pool']}; the measures as it happened are of the cluster as it was\n"
            )
        if history.load_change:
            c = history.load_change
            self.stdout.write(
                f"Replayed with {c['factor']:g} times the arriving work: {c['jobs_added']} "
                f"copies of jobs added, {c['jobs_dropped']} jobs left out\n"
            )
        for q in history.quota_changes:
            was = (
                "none"
                if q["was_guarantee"] is None
                else f"{q['was_guarantee']} + {q['was_borrow_limit']}"
            )
            self.stdout.write(
                f"Replayed with {q['tenant']}'s quota of {q['accelerator_model']} in {q['pool']} "
                f"at {q['guarantee']} guaranteed + {q['borrow_limit']} to borrow (was {was})\n"
            )
        if not w.jobs:
            self.stdout.write("No job ran in this window.")
            return

        def progress(share: float, message: str) -> None:
            if options["verbosity"] > 1:
                print(f"  {100 * share:3.0f}% {message}", file=sys.stderr)

        results = whatif.replay(history, names, seed=options["seed"], progress=progress)
        self.stdout.write(llm_tables(results))
        self.stdout.write("\nQueueing delay as it happened (submission to admission):\n")
        rows = [
            [f"{label} ({stats.count} jobs)", wait_cell(stats)]
            for label, stats in history.actual_waits.items()
            if stats.count
        ]
        self.stdout.write(table(["size class", "mean / p95 / p99"], rows))
        self.stdout.write(
            f"\nAs it happened: {100 * history.actual_allocation:.1f}% of the accelerators "
            f"allocated on average, {history.actual_late} jobs admitted past their maximum "
            "wait\n"
        )
        # In GPUs too: with pools resized, the shares above are of different clusters.
        replayed = w.capacity_milli // 1000
        real = replayed - sum(c["accelerators"] for c in history.node_changes)
        held = ", ".join(f"{r.policy} {r.summary['alloc_window'] * replayed:.1f}" for r in results)
        self.stdout.write(
            f"GPUs allocated on average: {held}; as it happened "
            f"{history.actual_allocation * real:.1f}\n"
        )
        if history.actual_tenant_use:
            use = ", ".join(f"{t} {gpus:.1f}" for t, gpus in history.actual_tenant_use.items())
            self.stdout.write(f"GPUs in use by tenant, mean over the window: {use}\n")
        for r in results:
            if r.summary.get("large_over"):
                self.stdout.write(
                    f"\n{r.label}: >=256-GPU jobs over 2x their fair-share expectation\n"
                )
                self.stdout.write(large_over_table(r))


def _pool(name: str, text: str, flag: str) -> str:
    """A pool's key from its id, its name (if only one pool has it) or cluster/pool."""
    pools = {pool_key(p): p for p in ResourcePool.objects.select_related("cluster")}
    found = [
        key
        for key, p in pools.items()
        if name in (key, p.name) or (name.isdigit() and int(name) == p.pk)
    ]
    if len(found) != 1:
        some = ", ".join(sorted(pools)) or "(none)"
        why = "names more than one pool" if found else "is not a pool"
        raise CommandError(f"{flag} {text}: {name} {why}; pools: {some}")
    return found[0]


def _change(text: str) -> NodeChange:
    """``POOL=N`` as a node change."""
    name, sep, count = text.rpartition("=")
    try:
        nodes = int(count)
    except ValueError:
        nodes = 0
    if not sep or not name or nodes == 0:
        raise CommandError(f"--nodes {text}: expected POOL=N with N a non-zero whole number")
    return NodeChange(pool=_pool(name, text, "--nodes"), nodes=nodes)


def _quota(text: str) -> Quota:
    """``TENANT:POOL:MODEL=G+B`` as a quota for the replay."""
    where, _, amounts = text.rpartition("=")
    parts = where.split(":")
    numbers = amounts.split("+")
    if len(parts) != 3 or len(numbers) != 2 or not all(x.strip().isdigit() for x in numbers):
        raise CommandError(
            f"--quota {text}: expected TENANT:POOL:MODEL=G+B with G and B whole numbers"
        )
    slug, pool, model = parts
    if not Tenant.objects.filter(slug=slug).exists():
        raise CommandError(f"--quota {text}: no tenant {slug}")
    return Quota(
        tenant=slug,
        pool=_pool(pool, text, "--quota"),
        accelerator_model=model,
        guarantee=int(numbers[0]),
        borrow_limit=int(numbers[1]),
    )
