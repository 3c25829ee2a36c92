"""What-if replay: the cluster's own recent history under another scheduling policy.

The jobs that were admitted in a window are replayed through the simulator
(``apps.scheduling.sim``) on the cluster's nodes and quotas as they are now, or with some
pools grown or shrunk, some quotas set anew and more or less work arriving (``changed``:
the capacity, quota and load questions): each job arrives when it was submitted (work
already running when the window opened: at its start, with the run time it had left) and
runs for as long as it held its devices (admission to finish); jobs still running at the
end of the window, notebooks and services included, run until the window ends. Jobs that
never started (cancelled or still queued) are left out, since their run time is unknown,
and counted. A pipeline step (a job that started after others, ``Job.after``) joins the
replay's queue when the steps before it complete in the replay, not when they did; its
wait, real or replayed, runs from then (``released_at``), as its max wait does. The same
core, policies and measures as the benchmarks (``bench/sched_sim.py``) are used, so "ours"
here is the product's scheduler with the simulator's settings. Unlike the benchmarks'
default, it is told only what the product's loop knows of run times: each job's declared
runtime limit (``max_runtime_s``), none for jobs that declared none.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext, gettext_noop

from apps.accounts.models import User
from apps.clusters.models import Node
from apps.jobs.models import Job
from apps.scheduling import core
from apps.scheduling.models import WhatIfRun, WhatIfState
from apps.scheduling.sim import SimResult, Simulator
from apps.scheduling.sim import policies as pol
from apps.scheduling.sim.engine import ProgressFn
from apps.scheduling.sim.metrics import WaitStats, wait_stats
from apps.scheduling.sim.scenario import (
    Maintenance,
    NodeChange,
    ScenarioError,
    guarantee_problems,
    largest_domains,
    maintenance,
    quota_key,
    requota,
    resize,
    scale_load,
)
from apps.scheduling.sim.workload import SIZE_CLASSES, SimJob, Workload, size_class
from apps.scheduling.snapshot import core_node, core_quotas, pool_keys, replica_groups, topology
from apps.scheduling.whatif_faults import summary as faults_summary
from apps.scheduling.whatif_faults import window_outages
from apps.tenancy.models import Tenant

logger = logging.getLogger(__name__)
POLICIES = pol.NAMES

POOL_GONE = gettext_noop("resource pool {pool} no longer exists")


@dataclass(frozen=True)
class History:
    """A window of the cluster's history as a simulator workload, and what really happened."""

    workload: Workload
    start: datetime
    end: datetime
    never_started: int  # submitted in the window, never admitted: not replayed
    # size class -> submission (a pipeline step: release) to admission, as it happened
    actual_waits: dict[str, WaitStats]
    actual_allocation: float  # mean share of the accelerators held in the window, 0..1
    actual_late: int  # jobs submitted in the window and admitted past their maximum wait
    actual_tenant_use: dict[str, float]  # tenant -> mean devices held in the window
    # (seconds from the window's start, share of the accelerators held, jobs waiting) at
    # the replay's sample times (``sample_times``)
    actual_series: list[tuple[float, float, int]]
    # Pools grown or shrunk and quotas set for the replay (``changed``); the real measures
    # above are of the cluster as it was. Each node change: {"pool": its key, "nodes": +-n,
    # "accelerators": +-n}; each quota change: {"tenant", "pool", "accelerator_model",
    # "guarantee", "borrow_limit", "was_guarantee", "was_borrow_limit"} (was_*: None for a
    # quota the tenant did not have).
    node_changes: list[dict[str, Any]] = field(default_factory=list)
    quota_changes: list[dict[str, Any]] = field(default_factory=list)
    # The ids of the jobs that were running when the window opened: the cluster's state,
    # which a load change leaves alone.
    carried: frozenset[str] = frozenset()
    # A load change (``changed``): {"factor", "jobs_added", "jobs_dropped"}; None: none.
    load_change: dict[str, Any] | None = None
    # The window's node outages (``whatif_faults.summary``): {"outages", "drained",
    # "node_hours", "replayed", "spans"}; replayed unless ``changed(faults=False)`` left
    # them out.
    faults: dict[str, Any] = field(default_factory=dict)
    # Maintenance windows added (``changed``): {"pool" (its key), "nodes", "start_h",
    # "hours", "drain"}.
    maintenance: list[dict[str, Any]] = field(default_factory=list)


def _limit_left(job: Job, began: datetime, ran_until: datetime | None) -> float | None:
    """What is left of the job's runtime limit when its replay starts at ``began`` (work
    running when the window opened has used some), never less than the run it bounds (the
    governance sweep stops a job up to one pass after its limit)."""
    if not job.max_runtime_s or job.admitted_at is None:
        return None
    left = (job.admitted_at - began).total_seconds() + job.max_runtime_s
    ran = 0.0 if ran_until is None else (ran_until - began).total_seconds()
    return max(left, ran, 1.0)


SAMPLES = 200
"""Samples of a replay's allocation and queue over its window (and of what happened)."""


def _replayed_befores(
    rows: list[Job], start: datetime, end: datetime
) -> dict[int, tuple[str, ...]]:
    """For each job submitted in the window, the jobs it started after that the replay runs
    too (admitted ones among ``rows``), in id order. Work already running at the window's start
    started long ago: it waits for nothing."""
    replayed = {j.pk for j in rows if j.admitted_at is not None}
    out: dict[int, list[str]] = {}
    pairs = (
        Job.after.through.objects.filter(
            from_job__submitted_at__gte=start, from_job__submitted_at__lt=end
        )
        .order_by("from_job_id", "to_job_id")
        .values_list("from_job_id", "to_job_id")
    )
    for job_id, before_id in pairs:
        if before_id in replayed:
            out.setdefault(job_id, []).append(str(before_id))
    return {k: tuple(v) for k, v in out.items()}


def sample_times(horizon: float) -> list[float]:
    """When a replay of ``horizon`` seconds samples: from the window's start, every
    ``sample_interval(horizon)`` seconds, before its end (at the end, work still running
    has stopped being counted)."""
    step = sample_interval(horizon)
    return [i * step for i in range(math.ceil(horizon / step))]


def sample_interval(horizon: float) -> float:
    return max(horizon, 3600.0) / SAMPLES


def actual_series(
    held: list[tuple[float, float, int]],
    waited: list[tuple[float, float]],
    horizon: float,
    capacity_milli: int,
) -> list[tuple[float, float, int]]:
    """What happened at each sample time: the share of ``capacity_milli`` that the
    ``held`` spans (from, until, milli-devices) cover, and how many ``waited`` spans
    (submitted, admitted) are open; times in seconds from the window's start."""
    events: list[tuple[float, int, int]] = []  # time, milli change, waiting change
    for began, until, milli in held:
        if until > began:
            events += [(began, milli, 0), (until, -milli, 0)]
    for submitted, admitted in waited:
        if admitted > submitted:
            events += [(submitted, 0, 1), (admitted, 0, -1)]
    events.sort()
    out: list[tuple[float, float, int]] = []
    i = milli = waiting = 0
    for t in sample_times(horizon):
        while i < len(events) and events[i][0] <= t:
            milli += events[i][1]
            waiting += events[i][2]
            i += 1
        out.append((t, milli / capacity_milli if capacity_milli else 0.0, waiting))
    return out


def domain_sizes(nodes: tuple[core.Node, ...]) -> dict[str, int]:
    """The workload's leaf and SU sizes: the measures count a multi-node job as one that
    fits a leaf (an SU) by the cluster's own largest, not by the benchmarks' reference
    topology (0: no topology recorded, so no job counts)."""
    per_leaf, per_su = largest_domains(nodes)
    return {"nodes_per_leaf": per_leaf, "nodes_per_su": per_su}


def current_nodes(pool_keys: dict[int, str]) -> tuple[core.Node, ...]:
    """Every node in a pool (hot spares held back) as a healthy, schedulable machine:
    today's cordons and faults say nothing about the past (the window's own outages are
    replayed from its incidents, ``whatif_faults``), and the question is what the policy
    does with this cluster."""
    return tuple(
        replace(core_node(n, pool_keys, set()), healthy=True, cordoned=False)
        for n in Node.objects.filter(pool__isnull=False, is_spare=False).order_by("pk")
    )


def scenario_problems(
    stored_nodes: list[dict[str, int]],
    stored_quotas: list[dict[str, Any]],
    stored_windows: list[dict[str, Any]] | None = None,
) -> dict[str, list[str]]:
    """What would make a run with these (stored) changes fail, checked before it is
    queued, by the field to blame: under ``quota_changes`` a pool or quota change that
    cannot be made, or the guarantees of a pool's model adding up to more than the
    replayed pool has; under ``maintenance`` windows asking a pool, as resized, for more
    servers than it has. The nodes and quotas are read once for all of them."""
    if not stored_nodes and not stored_quotas and not stored_windows:
        return {}  # the cluster as it is: nothing to load
    keys = pool_keys()
    try:
        nodes = resize(current_nodes(keys), pool_changes(stored_nodes, keys))
        changes = quota_changes(stored_quotas, keys)
        quotas = requota(core_quotas(keys), changes)
    except ScenarioError as exc:
        return {"quota_changes": [said(exc)]}
    problems = guarantee_problems(nodes, quotas, changes)
    if problems:
        return {"quota_changes": [said(p) for p in problems]}
    try:
        maintenance(nodes, maintenance_windows(stored_windows or [], keys))
    except ScenarioError as exc:
        return {"maintenance": [said(exc)]}
    return {}


def said(problem: ScenarioError) -> str:
    """A scenario's problem in the reader's language (the request's); the simulator wrote it
    in English."""
    return gettext(problem.template).format(**problem.values)


def history_workload(start: datetime, end: datetime, keys: dict[int, str] | None = None) -> History:
    """The jobs submitted in ``[start, end)``, and those already running at ``start``, on
    the current nodes and quotas, with the window's node outages; ``keys``: pool id -> key,
    when the caller has read them (``snapshot.pool_keys``)."""
    if end <= start:
        raise ValueError("the window must end after it starts")
    keys = pool_keys() if keys is None else keys
    nodes = current_nodes(keys)
    horizon = (end - start).total_seconds()
    jobs: list[SimJob] = []
    carried: set[str] = set()
    waits: dict[str, list[float]] = {label: [] for label, _, _ in SIZE_CLASSES}
    never = 0
    late = 0
    held: dict[str, float] = {}  # tenant -> milli-device-seconds held inside the window
    spans: list[tuple[float, float, int]] = []  # seconds from start: began, until, milli
    queued: list[tuple[float, float]] = []  # seconds from start: submitted, admitted
    # Work that was running when the window opened arrives at its start with the run time
    # it had left; the rest arrives when it was submitted.
    rows = list(
        Job.objects.filter(
            Q(submitted_at__gte=start, submitted_at__lt=end)
            | Q(
                Q(finished_at__isnull=True) | Q(finished_at__gt=start),
                submitted_at__lt=start,
                admitted_at__lt=start,
            )
        )
        .select_related("tenant")
        .order_by("submitted_at", "pk")
    )
    befores = _replayed_befores(rows, start, end)
    for job in rows:
        if job.admitted_at is None:
            never += 1
            continue
        began = max(job.admitted_at, start)
        ran_until = job.finished_at if job.finished_at and job.finished_at <= end else None
        after = befores.get(job.pk, ())
        joined = job.released_at or job.submitted_at  # a pipeline step: when it was let in
        # Steps before it that are replayed decide when it joins; with none, it joins when
        # it did (the steps were done before the window, or never replayed).
        queued_at = job.submitted_at if after else joined
        sim_job = SimJob(
            job_id=str(job.pk),
            submit=max((queued_at - start).total_seconds(), 0.0),
            tenant=job.tenant.slug,
            pool=keys[job.pool_id],
            priority=job.priority,
            groups=replica_groups(job.spec),
            duration=(None if ran_until is None else max((ran_until - began).total_seconds(), 1.0)),
            topology=topology(job.spec),
            kind=job.kind,
            max_wait=float(job.max_wait_s) if job.max_wait_s else None,
            runtime_limit=_limit_left(job, began, ran_until),
            after=after,
        )
        jobs.append(sim_job)
        if job.submitted_at < start:
            carried.add(sim_job.job_id)
        until = min(job.finished_at or end, end)
        span = max((until - began).total_seconds(), 0.0)
        held[sim_job.tenant] = held.get(sim_job.tenant, 0.0) + sim_job.milli * span
        at = (began - start).total_seconds()
        spans.append((at, at + span, sim_job.milli))
        if job.submitted_at >= start:
            wait = max((job.admitted_at - joined).total_seconds(), 0.0)
            waits[size_class(sim_job.gpus)].append(wait)
            at = (joined - start).total_seconds()
            queued.append((at, at + wait))
            if job.max_wait_s and wait > job.max_wait_s:
                late += 1
    outages = window_outages(start, end, {n.node_id for n in nodes})
    workload = Workload(
        name="history",
        nodes=nodes,
        jobs=tuple(jobs),
        quotas=core_quotas(keys),
        pools=tuple(core.Pool(pool_id=k) for k in keys.values()),
        failures=tuple(o.failure() for o in outages),
        horizon=horizon,
        measure_until=horizon,
        exact_runtimes=False,
        meta={"window_h": horizon / 3600, **domain_sizes(nodes)},
    )
    actual = {label: wait_stats(values) for label, values in waits.items()}
    capacity = workload.capacity_milli * horizon
    allocation = sum(held.values()) / capacity if capacity else 0.0
    for quota in workload.quotas:  # tenants with a guarantee and no job: 0
        held.setdefault(quota.tenant, 0.0)
    use = {t: area / horizon / core.FULL_DEVICE_MILLI for t, area in sorted(held.items())}
    return History(
        workload,
        start,
        end,
        never,
        actual,
        actual_allocation=allocation,
        actual_late=late,
        actual_tenant_use=use,
        actual_series=actual_series(spans, queued, horizon, workload.capacity_milli),
        carried=frozenset(carried),
        faults=faults_summary(outages, replayed=True),
    )


def pool_changes(changes: list[dict[str, int]], keys: dict[int, str]) -> list[NodeChange]:
    """A run's stored node changes (``{"pool": pool id, "nodes": +-n}``) as the simulator's;
    ``keys``: pool id -> key (``snapshot.pool_keys``)."""
    out = []
    for change in changes:
        if change["pool"] not in keys:
            raise ScenarioError(POOL_GONE, pool=change["pool"])
        out.append(NodeChange(pool=keys[change["pool"]], nodes=int(change["nodes"])))
    return out


def maintenance_windows(stored: list[dict[str, Any]], keys: dict[int, str]) -> list[Maintenance]:
    """A run's stored maintenance windows (pool by id, start and length in hours)."""
    out = []
    for m in stored:
        if m["pool"] not in keys:
            raise ScenarioError(POOL_GONE, pool=m["pool"])
        out.append(
            Maintenance(
                pool=keys[m["pool"]],
                nodes=int(m["nodes"]),
                start=float(m["start_h"]) * 3600,
                hours=float(m["hours"]),
                drain=bool(m["drain"]),
            )
        )
    return out


def quota_changes(changes: list[dict[str, Any]], keys: dict[int, str]) -> list[core.Quota]:
    """A run's stored quota changes (tenant by slug, pool by id) as the core's quotas."""
    slugs = set(Tenant.objects.values_list("slug", flat=True))
    out = []
    for c in changes:
        if c["pool"] not in keys:
            raise ScenarioError(POOL_GONE, pool=c["pool"])
        if c["tenant"] not in slugs:
            raise ScenarioError(
                gettext_noop("tenant {tenant} no longer exists"), tenant=c["tenant"]
            )
        out.append(
            core.Quota(
                tenant=c["tenant"],
                pool=keys[c["pool"]],
                accelerator_model=c["accelerator_model"],
                guarantee=int(c["guarantee"]),
                borrow_limit=int(c["borrow_limit"]),
            )
        )
    return out


def changed(
    history: History,
    nodes: list[NodeChange] | None = None,
    quotas: list[core.Quota] | None = None,
    *,
    load: float = 1.0,
    seed: int = 0,
    faults: bool = True,
    windows: list[Maintenance] | None = None,
) -> History:
    """The history on a cluster with some pools grown or shrunk (``sim.scenario.resize``),
    some quotas set anew (``requota``), ``load`` times the work arriving (``scale_load``,
    its copies drawn with ``seed``), unless ``faults`` no node outage (the question "what
    did our faults cost?") and maintenance ``windows`` (``sim.scenario.maintenance``: "when
    should we take these servers down?"); what really happened is kept as it was, on the
    real cluster. Raises ``ScenarioError`` for a change that cannot be made, quotas whose
    guarantees would exceed their pool included."""
    history = _resized(history, nodes or [], quotas or [], load=load, seed=seed, faults=faults)
    if not windows:
        return history
    w = history.workload
    if any(m.start >= (w.horizon or 0.0) for m in windows):
        raise ScenarioError(
            gettext_noop("a maintenance window starts after the replayed window ends")
        )
    added = maintenance(w.nodes, windows)
    made = [
        {"pool": m.pool, "nodes": m.nodes, "start_h": m.start / 3600, "hours": m.hours,
         "drain": m.drain}
        for m in windows
    ]  # fmt: skip
    return replace(history, workload=replace(w, failures=w.failures + added), maintenance=made)


def _resized(
    history: History,
    nodes: list[NodeChange],
    quotas: list[core.Quota],
    *,
    load: float,
    seed: int,
    faults: bool,
) -> History:
    """``changed`` but for the maintenance windows."""
    if not faults:
        history = replace(
            history,
            workload=replace(history.workload, failures=()),
            faults={**history.faults, "replayed": False},
        )
    if load != 1.0:
        jobs, made_load = scale_load(
            history.workload.jobs,
            load,
            seed=seed,
            horizon=history.workload.horizon or 0.0,
            carried=history.carried,
        )
        history = replace(
            history,
            workload=replace(history.workload, jobs=jobs),
            load_change={
                "factor": load,
                "jobs_added": made_load.added,
                "jobs_dropped": made_load.dropped,
            },
        )
    if not nodes and not quotas:
        return history
    w = history.workload
    after = resize(w.nodes, nodes)
    new_quotas = requota(w.quotas, quotas)
    problems = guarantee_problems(after, new_quotas, quotas)
    if problems:
        raise problems[0]  # the API checked them all before (scenario_problems)

    def devices(of: tuple[core.Node, ...], pool: str) -> int:
        return sum(n.accelerator_count for n in of if n.pool == pool)

    made = [
        {
            "pool": c.pool,
            "nodes": c.nodes,
            "accelerators": devices(after, c.pool) - devices(w.nodes, c.pool),
        }
        for c in nodes
    ]
    was = {quota_key(q): q for q in w.quotas}
    quota_made = []
    for q in quotas:
        old = was.get(quota_key(q))
        quota_made.append(
            {
                "tenant": q.tenant,
                "pool": q.pool,
                "accelerator_model": q.accelerator_model,
                "guarantee": q.guarantee,
                "borrow_limit": q.borrow_limit,
                "was_guarantee": None if old is None else old.guarantee,
                "was_borrow_limit": None if old is None else old.borrow_limit,
            }
        )
    workload = replace(w, nodes=after, quotas=new_quotas, meta={**w.meta, **domain_sizes(after)})
    return replace(history, workload=workload, node_changes=made, quota_changes=quota_made)


def live_policy() -> str | None:
    """The policy here that the product's scheduler runs (``ZS_SCHEDULER_POLICY``)."""
    return pol.LIVE.get(settings.SCHEDULER_POLICY)


def policy_spec(name: str, workload: Workload) -> pol.PolicySpec:
    devices = sum(n.accelerator_count for n in workload.nodes)
    return pol.spec_for(name, quotas=bool(workload.quotas), devices=devices)


def replay(
    history: History,
    names: list[str],
    *,
    seed: int = 0,
    progress: ProgressFn | None = None,
) -> list[SimResult]:
    """Runs the history once per policy (cycles at most every 60 s of virtual time, as
    the product's scheduler loop)."""
    specs = [policy_spec(n, history.workload) for n in names]  # every name checked first
    results = []
    for spec in specs:
        sim = Simulator(
            history.workload,
            spec,
            seed=seed,
            progress=progress,
            cycle_interval=60.0,
            sample_interval=sample_interval(history.workload.horizon or 0.0),
        )
        results.append(sim.run())
    return results


def window_ending(end: datetime, hours: float) -> tuple[datetime, datetime]:
    return end - timedelta(hours=hours), end


# ------------------------------------------------------------------ runs over the API


MAX_HOURS = 90 * 24.0


def _waits(stats: WaitStats) -> dict[str, float | int]:
    return {"count": stats.count, "mean_s": stats.mean, "p95_s": stats.p95, "p99_s": stats.p99}


def _series(result: SimResult, horizon: float) -> list[dict[str, float | int]]:
    """The replay's samples at ``sample_times(horizon)``. The simulator stops sampling
    once nothing is left to happen (only work that runs to the end), so the last sample
    stands for the rest of the window: nothing changes after it."""
    times = sample_times(horizon)
    samples = [x for x in result.samples if x["t"] < horizon] or [{"alloc": 0.0, "waiting": 0.0}]
    out: list[dict[str, float | int]] = []
    for i, t in enumerate(times):
        x = samples[min(i, len(samples) - 1)]
        out.append({"t_h": t / 3600, "allocation": x["alloc"], "waiting": int(x["waiting"])})
    return out


def result_of(history: History, results: list[SimResult]) -> dict[str, Any]:
    """What a run stores: the workload's size, the real waits and each policy's measures."""
    w = history.workload
    policies = []
    for r in results:
        s = r.summary
        policies.append(
            {
                "policy": r.policy,
                "title": r.label,
                "keeps_quotas": policy_spec(r.policy, w).policy.quotas,
                "allocation": s["alloc_window"],
                "mean_allocated_gpus": s["mean_allocated_window"],
                "mean_free_gpus": s["mean_free_window"],
                "mean_fragmented_gpus": s["mean_fragmented_window"],
                "completed": s["completed"],
                "one_leaf": list(s["one_leaf"]),
                "one_su": list(s["one_su"]),
                "preemptions": s["preemptions"],
                "preempted_gpu_hours": s["preempt_lost_gpu_h"],
                "late_jobs": s["late_jobs"],
                "not_started": s["never_started"],
                "large_longest_wait_s": s["large_longest_wait"],
                "large_over_2x": s["large_over_2x_expectation"],
                "large_checked": s["large_checked"],
                "tenants": [
                    {
                        "tenant": t["tenant"],
                        "guarantee_gpus": t["guarantee"],
                        "mean_used_gpus": t["mean_used"],
                        "short_when_demanding": t["short_when_demanding"],
                    }
                    for t in r.tenants
                ],
                "waits": {
                    label: _waits(s[f"wait_{label}"])
                    for label, _, _ in SIZE_CLASSES
                    if s[f"wait_{label}"].count
                },
                "series": _series(r, w.horizon or 0.0),
                "cycles": r.cycles,
                "cpu_s": r.wall_s,
            }
        )
    return {
        "live_policy": live_policy(),
        "jobs": len(w.jobs),
        "never_started": history.never_started,
        "nodes": len(w.nodes),
        "accelerators": w.capacity_milli // 1000,
        "capacity_changes": history.node_changes,
        "quota_changes": history.quota_changes,
        "load_change": history.load_change,
        "faults": history.faults,
        "maintenance": history.maintenance,
        "actual_waits": {
            label: _waits(stats) for label, stats in history.actual_waits.items() if stats.count
        },
        "actual_allocation": history.actual_allocation,
        "actual_late_jobs": history.actual_late,
        "actual_tenant_use": history.actual_tenant_use,
        "actual_series": [
            {"t_h": t / 3600, "allocation": a, "waiting": n} for t, a, n in history.actual_series
        ],
        "policies": policies,
    }


def request_run(
    *,
    hours: float,
    policies: list[str],
    seed: int,
    actor: User,
    node_changes: list[dict[str, int]] | None = None,
    quota_changes: list[dict[str, Any]] | None = None,
    load_factor: float = 1.0,
    replay_faults: bool = True,
    maintenance: list[dict[str, Any]] | None = None,
) -> WhatIfRun:
    """Records a run and has a worker execute it once the transaction commits."""
    run = WhatIfRun.objects.create(
        hours=hours,
        policies=policies,
        seed=seed,
        node_changes=node_changes or [],
        quota_changes=quota_changes or [],
        load_factor=load_factor,
        replay_faults=replay_faults,
        maintenance=maintenance or [],
        requested_by=actor,
    )

    def start() -> None:
        from apps.scheduling.tasks import whatif_replay

        whatif_replay.delay(run.pk)

    transaction.on_commit(start)
    return run


def execute(run_id: int) -> WhatIfRun:
    """Replays the window ending now under the run's policies, saving progress as it goes;
    a run that already finished is left alone."""
    run = WhatIfRun.objects.get(pk=run_id)
    if run.state in (WhatIfState.DONE, WhatIfState.FAILED):
        return run
    start, end = window_ending(timezone.now(), run.hours)
    WhatIfRun.objects.filter(pk=run.pk).update(
        state=WhatIfState.RUNNING, window_start=start, window_end=end, progress=0.0
    )
    names = list(run.policies)
    saved = {"at": -1.0}

    def progress_of(index: int) -> ProgressFn:
        def report(share: float, message: str) -> None:
            done = (index + share) / len(names)
            if done - saved["at"] >= 0.05:  # a row update per 5%, not per event
                saved["at"] = done
                WhatIfRun.objects.filter(pk=run.pk).update(progress=min(done, 0.99))

        return report

    try:
        keys = pool_keys()
        history = changed(
            history_workload(start, end, keys),
            pool_changes(run.node_changes, keys),
            quota_changes(run.quota_changes, keys),
            load=run.load_factor,
            seed=run.seed,
            faults=run.replay_faults,
            windows=maintenance_windows(run.maintenance, keys),
        )
        results = [
            replay(history, [name], seed=run.seed, progress=progress_of(i))[0]
            for i, name in enumerate(names)
        ]
    except Exception as exc:  # recorded on the run, which a person reads
        logger.exception("what-if run %s failed", run.pk)
        WhatIfRun.objects.filter(pk=run.pk).update(
            state=WhatIfState.FAILED, message=str(exc)[:500], finished_at=timezone.now()
        )
        return WhatIfRun.objects.get(pk=run.pk)
    WhatIfRun.objects.filter(pk=run.pk).update(
        state=WhatIfState.DONE,
        progress=1.0,
        result=result_of(history, results),
        message="" if history.workload.jobs else "No job ran in this window.",
        finished_at=timezone.now(),
    )
    return WhatIfRun.objects.get(pk=run.pk)
