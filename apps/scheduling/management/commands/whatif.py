"""``manage.py whatif``: replay the cluster's recent history under other scheduling policies."""

from __future__ import annotations

import sys
from itertools import product
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from apps.clusters.models import ResourcePool
from apps.scheduling import whatif
from apps.scheduling.core import Quota
from apps.scheduling.sim.report import (
    large_over_table,
    llm_tables,
    sweep_table,
    table,
    wait_cell,
)
from apps.scheduling.sim.scenario import MAX_LOAD, Maintenance, NodeChange, ScenarioError
from apps.scheduling.snapshot import pool_key
from apps.tenancy.models import Tenant

# A replay of a series: the pools changed, the load factor, whether outages are replayed,
# the maintenance windows.
Case = tuple[list[NodeChange], float, bool, list[Maintenance]]


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
        parser.add_argument(
            "--seed",
            default="0",
            metavar="S",
            help="the replay's seed (it draws the jobs --load copies or drops); S1,S2,... or "
            "A-B replays each and gives the means, with the range of the mean waits",
        )
        parser.add_argument(
            "--nodes",
            action="append",
            default=[],
            metavar="POOL=N",
            help="replay with N nodes added to (N > 0) or removed from (N < 0) a pool, named "
            "by id, by name or as cluster/pool; repeatable; N1,N2,... replays each (0: the "
            "pool as it is) and prints one table of them all",
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
            default="1",
            metavar="F",
            help="replay F times the work that arrived (1.3: 30%% more jobs in the same "
            f"pattern; from 0.1 to {MAX_LOAD:g}; default 1); F1,F2,... replays each",
        )
        parser.add_argument(
            "--faults",
            default="replay",
            metavar="replay|none",
            help="replay the window's node outages (nodes cordoned or drained by health "
            "incidents; the default) or none (every node healthy: what did the faults cost?); "
            "replay,none replays both",
        )
        parser.add_argument(
            "--maintenance",
            action="append",
            default=[],
            metavar="POOL:N@S+H[:cordon]",
            help="take N servers of POOL out of service S hours into the window for H hours, "
            "their running work stopped (:cordon: left to finish); S1,S2,... replays each "
            "start (when is the best time?); repeatable, a pool's windows taking its servers "
            "in order",
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
        seeds = _seeds(options["seed"])
        loads = _loads(options["load"])
        faults = _faults(options["faults"])
        pools = [_change(text) for text in options["nodes"]]
        quotas = [_quota(text) for text in options["quota"]]
        starts = [_maintenance(text) for text in options["maintenance"]]
        # Every pool's sizes by every load, with and without faults, at every start of the
        # maintenance windows: one replay each.
        per_pool = [[(pool, n) for n in counts] for pool, counts in pools]
        cases: list[Case] = [
            ([NodeChange(pool, n) for pool, n in sizes if n], load, replayed, list(windows))
            for sizes in product(*per_pool)
            for load in loads
            for replayed in faults
            for windows in product(*starts)
        ]
        start, end = whatif.window_ending(timezone.now(), hours)
        base = whatif.history_workload(start, end)
        if len(cases) > 1 or len(seeds) > 1:
            self._sweep(base, cases, quotas, names, seeds)
            return
        [(changes, load, with_faults, windows)] = cases
        [seed] = seeds
        try:
            history = whatif.changed(
                base, changes, quotas, load=load, seed=seed, faults=with_faults, windows=windows
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
        self.stdout.write(_faults_line(history.faults) + "\n")
        for m in windows:
            self.stdout.write(f"Replayed with maintenance: {_window_label(m)}\n")
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

        results = whatif.replay(history, names, seed=seed, progress=progress)
        self.stdout.write(llm_tables(results))
        self.stdout.write(_live_note())
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
        held = ", ".join(f"{r.policy} {r.summary['mean_allocated_window']:.1f}" for r in results)
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

    def _sweep(
        self,
        base: whatif.History,
        cases: list[Case],
        quotas: list[Quota],
        names: list[str],
        seeds: list[int],
    ) -> None:
        """Replays each case under each seed and prints them as one table, then what
        really happened."""
        if not base.workload.nodes:
            raise CommandError("no nodes in any resource pool: nothing to replay on")
        if not base.workload.jobs:
            self.stdout.write("No job ran in this window.")
            return
        rows = []
        for changes, load, replayed, windows in cases:
            runs = []
            for seed in seeds:
                try:
                    history = whatif.changed(
                        base,
                        changes,
                        quotas,
                        load=load,
                        seed=seed,
                        faults=replayed,
                        windows=windows,
                    )
                except ScenarioError as exc:
                    raise CommandError(str(exc)) from exc
                runs.append(whatif.replay(history, names, seed=seed))
            label = ", ".join(f"{c.pool} {c.nodes:+d}" for c in changes) or "as it is"
            if load != 1.0:
                label += f", work x{load:g}"
            if not replayed:
                label += ", no outages"
            for m in windows:
                label += f", {_window_label(m)}"
            rows.append((label, history.workload.capacity_milli // 1000, runs))
        w = base.workload
        each = f" under {len(seeds)} seeds each (the means)" if len(seeds) > 1 else ""
        self.stdout.write(
            f"## What-if: {len(rows)} replays{each} of {len(w.jobs)} jobs (submitted in "
            f"{base.start:%Y-%m-%d %H:%M} - {base.end:%Y-%m-%d %H:%M} UTC or running when it "
            f"began); {base.never_started} never started and are not replayed\n"
        )
        self.stdout.write(_faults_line({**base.faults, "replayed": None}) + "\n")
        for q in quotas:
            self.stdout.write(
                f"Every replay with {q.tenant}'s quota of {q.accelerator_model} in {q.pool} at "
                f"{q.guarantee} guaranteed + {q.borrow_limit} to borrow\n"
            )
        self.stdout.write(sweep_table(rows) + "\n")
        self.stdout.write(_live_note())
        real = ", ".join(
            f"{label} {stats.mean / 60:.1f} m"
            for label, stats in base.actual_waits.items()
            if stats.count
        )
        self.stdout.write(
            f"\nAs it happened, on {w.capacity_milli // 1000} accelerators: "
            f"{100 * base.actual_allocation:.1f}% allocated on average "
            f"({base.actual_allocation * w.capacity_milli / 1000:.1f} GPUs), "
            f"{base.actual_late} jobs past their maximum wait; mean wait by size: {real}\n"
        )


def _faults_line(faults: dict[str, Any]) -> str:
    """The window's node outages, and whether the replay has them (None: some do)."""
    how = {True: "replayed", False: "left out: every node healthy", None: "replayed unless "
           "the row says no outages"}[faults.get("replayed")]  # fmt: skip
    return (
        f"Node outages in the window (health incidents that cordoned a node): "
        f"{faults.get('outages', 0)}, {faults.get('drained', 0)} of them drained, "
        f"{faults.get('node_hours', 0.0):.1f} node-hours; {how}"
    )


def _faults(text: str) -> list[bool]:
    """``replay``, ``none`` or both, as whether each replay has the window's outages."""
    modes = [m.strip() for m in text.split(",")]
    if (
        not modes
        or any(m not in ("replay", "none") for m in modes)
        or len(set(modes)) != len(modes)
    ):
        raise CommandError(f"--faults {text}: expected replay, none or replay,none")
    return [m == "replay" for m in modes]


def _window_label(m: Maintenance) -> str:
    how = "drained" if m.drain else "cordoned"
    return f"{m.pool} {m.nodes} nodes {how} from hour {m.start / 3600:g} for {m.hours:g} h"


def _maintenance(text: str) -> list[Maintenance]:
    """``POOL:N@S+H[:cordon]`` (``S`` may be ``S1,S2,...``) as one window per start."""
    body, cordon, mode = text.partition(":cordon")
    name, _, rest = body.rpartition(":")
    count, _, when = rest.partition("@")
    starts, _, hours = when.partition("+")
    try:
        nodes, length = int(count), float(hours)
        at = [float(x) for x in starts.split(",")]
    except ValueError:
        nodes, length, at = 0, 0.0, []
    starts_ok = bool(at) and min(at) >= 0 and len(set(at)) == len(at)
    if not name or mode or nodes < 1 or length <= 0 or not starts_ok:
        raise CommandError(
            f"--maintenance {text}: expected POOL:N@S+H or POOL:N@S+H:cordon, N servers from S "
            "hours into the window for H hours (S1,S2,...: several starts)"
        )
    pool = _pool(name, text, "--maintenance")
    return [Maintenance(pool, nodes, start * 3600, length, not cordon) for start in at]


def _live_note() -> str:
    return (
        f"\nThe product's scheduler runs ZS_SCHEDULER_POLICY={settings.SCHEDULER_POLICY}, "
        f"which is {whatif.live_policy()} here\n"
    )


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


def _change(text: str) -> tuple[str, list[int]]:
    """``POOL=N`` (or ``POOL=N1,N2,...``) as the pool's key and the node counts to add."""
    name, sep, counts = text.rpartition("=")
    try:
        nodes = [int(c) for c in counts.split(",")]
    except ValueError:
        nodes = []
    one_zero = nodes == [0]  # a single change must change something; a list may hold 0
    if not sep or not name or not nodes or one_zero or len(set(nodes)) != len(nodes):
        raise CommandError(
            f"--nodes {text}: expected POOL=N with N a non-zero whole number, or POOL=N1,N2,... "
            "with different whole numbers"
        )
    return _pool(name, text, "--nodes"), nodes


def _seeds(text: str) -> list[int]:
    """``S``, ``S1,S2,...`` or ``A-B`` as seeds."""
    first, dash, last = text.partition("-")
    try:
        if dash:
            seeds = list(range(int(first), int(last) + 1))
        else:
            seeds = [int(s) for s in text.split(",")]
    except ValueError:
        seeds = []
    if not seeds or min(seeds) < 0 or len(set(seeds)) != len(seeds) or len(seeds) > 100:
        raise CommandError(
            f"--seed {text}: expected a whole number from 0, S1,S2,... or A-B (at most 100)"
        )
    return seeds


def _loads(text: str) -> list[float]:
    """``F`` (or ``F1,F2,...``) as load factors."""
    try:
        loads = [float(f) for f in text.split(",")]
    except ValueError:
        loads = []
    if not loads or not all(0.1 <= f <= MAX_LOAD for f in loads) or len(set(loads)) != len(loads):
        raise CommandError(
            f"--load {text}: expected a factor from 0.1 to {MAX_LOAD:g}, or different factors "
            "separated by commas"
        )
    return loads


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
