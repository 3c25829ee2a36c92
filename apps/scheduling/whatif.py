"""What-if replay: the cluster's own recent history under another scheduling policy.

The jobs that were admitted in a window are replayed through the simulator
(``apps.scheduling.sim``) on the cluster's nodes and quotas as they are now: each job arrives
when it was submitted (work already running when the window opened: at its start, with the
run time it had left) and runs for as long as it held its devices (admission to finish);
jobs still running at the end of the window, notebooks and services included, run until
the window ends. Jobs that never started (cancelled or still queued) are left out, since
their run time is unknown, and counted. The same core, policies and measures as the
benchmarks (``bench/sched_sim.py``) are used, so "ours" here is the product's scheduler with
the simulator's settings.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from django.db.models import Q

from apps.clusters.models import Node, ResourcePool
from apps.jobs.models import Job
from apps.scheduling import core
from apps.scheduling.sim import SimResult, Simulator
from apps.scheduling.sim import policies as pol
from apps.scheduling.sim.engine import ProgressFn
from apps.scheduling.sim.metrics import WaitStats, wait_stats
from apps.scheduling.sim.workload import SIZE_CLASSES, SimJob, Workload, size_class
from apps.scheduling.snapshot import core_node, core_quotas, pool_key, replica_groups, topology

POLICIES = ("ours", "volcano", "best-fit", "fifo-spread")


@dataclass(frozen=True)
class History:
    """A window of the cluster's history as a simulator workload, and what really happened."""

    workload: Workload
    start: datetime
    end: datetime
    never_started: int  # submitted in the window, never admitted: not replayed
    actual_waits: dict[str, WaitStats]  # size class -> submission to admission, as it happened


def history_workload(start: datetime, end: datetime) -> History:
    """The jobs submitted in ``[start, end)`` on the current nodes and quotas."""
    if end <= start:
        raise ValueError("the window must end after it starts")
    pool_keys = {p.pk: pool_key(p) for p in ResourcePool.objects.select_related("cluster")}
    # Every node as a healthy, schedulable machine: today's cordons and faults say nothing
    # about the past, and the question is what the policy does with this cluster.
    nodes = tuple(
        replace(core_node(n, pool_keys, set()), healthy=True, cordoned=False)
        for n in Node.objects.filter(pool__isnull=False, is_spare=False).order_by("pk")
    )
    horizon = (end - start).total_seconds()
    jobs: list[SimJob] = []
    waits: dict[str, list[float]] = {label: [] for label, _, _ in SIZE_CLASSES}
    never = 0
    # Work that was running when the window opened arrives at its start with the run time
    # it had left; the rest arrives when it was submitted.
    rows = (
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
    for job in rows:
        if job.admitted_at is None:
            never += 1
            continue
        began = max(job.admitted_at, start)
        ran_until = job.finished_at if job.finished_at and job.finished_at <= end else None
        sim_job = SimJob(
            job_id=str(job.pk),
            submit=max((job.submitted_at - start).total_seconds(), 0.0),
            tenant=job.tenant.slug,
            pool=pool_keys[job.pool_id],
            priority=job.priority,
            groups=replica_groups(job.spec),
            duration=(None if ran_until is None else max((ran_until - began).total_seconds(), 1.0)),
            topology=topology(job.spec),
            kind=job.kind,
            max_wait=float(job.max_wait_s) if job.max_wait_s else None,
        )
        jobs.append(sim_job)
        if job.submitted_at >= start:
            wait = (job.admitted_at - job.submitted_at).total_seconds()
            waits[size_class(sim_job.gpus)].append(wait)
    workload = Workload(
        name="history",
        nodes=nodes,
        jobs=tuple(jobs),
        quotas=core_quotas(pool_keys),
        pools=tuple(core.Pool(pool_id=k) for k in pool_keys.values()),
        horizon=horizon,
        measure_until=horizon,
        meta={"window_h": horizon / 3600},
    )
    actual = {label: wait_stats(values) for label, values in waits.items()}
    return History(workload, start, end, never, actual)


def policy_spec(name: str, workload: Workload) -> pol.PolicySpec:
    if name not in POLICIES:
        raise ValueError(f"unknown policy '{name}' (choose from {', '.join(POLICIES)})")
    if name == "ours":
        devices = sum(n.accelerator_count for n in workload.nodes)
        return pol.ours(quotas=bool(workload.quotas), devices=devices)
    baselines = {"volcano": pol.volcano, "best-fit": pol.best_fit, "fifo-spread": pol.fifo_spread}
    return baselines[name]()


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
            sample_interval=max(history.workload.horizon or 0.0, 3600.0) / 200,
        )
        results.append(sim.run())
    return results


def window_ending(end: datetime, hours: float) -> tuple[datetime, datetime]:
    return end - timedelta(hours=hours), end
