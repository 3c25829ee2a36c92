"""Build the core's input (a ClusterSnapshot and the pending queue) from the database.

Identifiers handed to the core: tenants by slug, pools by ``cluster/pool`` name, nodes and
jobs by primary key, so pending reasons read naturally ("tenant 'vision' ... pool
'sim-a800/a800-train'") and decisions map straight back to rows.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from apps.clusters.models import Device, Node, NodeHealth, ResourcePool
from apps.jobs.after import unmet
from apps.jobs.models import HOLDING, Allocation, Job, JobState
from apps.quotas.models import Quota
from apps.scheduling import core
from apps.scheduling.models import Hold

TIERS = {"leaf": core.Tier.LEAF, "su": core.Tier.SU, "spine": core.Tier.SPINE}


@dataclass(frozen=True)
class Inputs:
    snapshot: core.ClusterSnapshot
    queue: list[core.PendingJob]
    pool_keys: dict[int, str]  # pool pk -> core pool id
    pool_ids: dict[str, int]  # core pool id -> pool pk


def pool_key(pool: ResourcePool) -> str:
    return f"{pool.cluster.name}/{pool.name}"


def pool_keys() -> dict[int, str]:
    """Every pool's id -> its key."""
    return {p.pk: pool_key(p) for p in ResourcePool.objects.select_related("cluster")}


def replica_groups(spec: dict[str, Any]) -> tuple[core.ReplicaGroup, ...]:
    models = frozenset(spec.get("accelerator_models") or [])
    return tuple(
        core.ReplicaGroup(
            name=str(g["name"]),
            replicas=int(g.get("replicas", 1)),
            accelerators=int(g.get("accelerators", 0)),
            accelerator_milli=int(g.get("accelerator_milli", 0)),
            models=models,
            vendor=spec.get("accelerator_vendor") or None,
            arch=spec.get("arch") or None,
            cpu_milli=int(g.get("cpu_milli", 0)),
            memory_mib=int(g.get("memory_mib", 0)),
        )
        for g in spec.get("replica_groups", [])
    )


def topology(spec: dict[str, Any]) -> core.TopologyRequirement:
    topo = spec.get("topology") or {}
    mode = core.TopologyMode(topo.get("mode", "none"))
    return core.TopologyRequirement(
        mode=mode, max_tier=TIERS.get(topo.get("highest_tier", ""), core.Tier.SPINE)
    )


def pending_job(job: Job, tenant: str, pool: str, after: tuple[int, ...] = ()) -> core.PendingJob:
    """``after``: the jobs it starts after that have not succeeded yet. A job let in after
    them waits in the queue from then (``released_at``), not from its submission."""
    return core.PendingJob(
        job_id=str(job.pk),
        tenant=tenant,
        pool=pool,
        priority=job.priority,
        groups=replica_groups(job.spec),
        submit_time=job.released_at or job.submitted_at,
        topology=topology(job.spec),
        max_wait=timedelta(seconds=job.max_wait_s) if job.max_wait_s else None,
        expected_runtime=runtime_limit(job),
        after=tuple(str(a) for a in after),
    )


def runtime_limit(job: Job) -> timedelta | None:
    """The job's declared runtime limit, which the scheduler plans with (None: undeclared)."""
    return timedelta(seconds=job.max_runtime_s) if job.max_runtime_s else None


def running_job(
    job: Job, pool: str, allocations: tuple[core.NodeAllocation, ...]
) -> core.RunningJob:
    """A job that holds accelerators; with a runtime limit it is expected to end by its
    admission plus that limit (governance stops it then)."""
    started = job.admitted_at or job.submitted_at
    limit = runtime_limit(job)
    return core.RunningJob(
        job_id=str(job.pk),
        tenant=job.tenant.slug,
        pool=pool,
        priority=job.priority,
        started_at=started,
        allocations=allocations,
        expected_end=None if limit is None else started + limit,
    )


def core_node(n: Node, pool_keys: dict[int, str], broken: set[int]) -> core.Node:
    """The core's view of a node; ``broken``: indexes of its unhealthy devices."""
    return core.Node(
        node_id=str(n.pk),
        pool=pool_keys[n.pool_id or 0],
        accelerator_model=n.accelerator_model,
        accelerator_vendor=n.accelerator_vendor,
        accelerator_count=n.accelerator_count,
        free_devices=frozenset(set(range(n.accelerator_count)) - broken) if broken else None,
        cpu_milli=n.cpu_milli,
        memory_mib=n.memory_mib,
        arch=n.arch,
        labels={str(k): str(v) for k, v in (n.labels or {}).items()},
        healthy=n.health != NodeHealth.FAULTY,
        cordoned=n.cordoned,
        scalable_unit=n.scalable_unit,
        leaf_switch=n.leaf_switch,
        spine=n.spine,
    )


def core_quotas(pool_keys: dict[int, str]) -> tuple[core.Quota, ...]:
    return tuple(
        core.Quota(
            tenant=q.tenant.slug,
            pool=pool_keys[q.pool_id],
            accelerator_model=q.accelerator_model,
            guarantee=q.guarantee,
            borrow_limit=q.borrow_limit,
        )
        for q in Quota.objects.select_related("tenant")
    )


def build(now: datetime) -> Inputs:
    pools = {p.pk: p for p in ResourcePool.objects.select_related("cluster")}
    pool_keys = {pk: pool_key(p) for pk, p in pools.items()}
    broken: defaultdict[int, set[int]] = defaultdict(set)
    for node_id, index in Device.objects.exclude(health=NodeHealth.HEALTHY).values_list(
        "node_id", "index"
    ):
        broken[node_id].add(index)
    nodes = tuple(
        core_node(n, pool_keys, broken.get(n.pk, set()))
        for n in Node.objects.filter(pool__isnull=False, is_spare=False)
    )
    allocations: defaultdict[int, list[core.NodeAllocation]] = defaultdict(list)
    for a in Allocation.objects.all():
        allocations[a.job_id].append(
            core.NodeAllocation(
                node_id=str(a.node_id),
                devices=tuple(a.devices),
                shares=tuple(core.DeviceShare(int(d), int(m)) for d, m in a.shares),
                cpu_milli=a.cpu_milli,
                memory_mib=a.memory_mib,
            )
        )
    holding = Job.objects.filter(state__in=HOLDING).select_related("tenant")
    running = tuple(
        running_job(j, pool_keys[j.pool_id], tuple(allocations.get(j.pk, ()))) for j in holding
    )
    quotas = core_quotas(pool_keys)
    holds = tuple(
        core.Reservation(
            job_id=str(h.job_id),
            priority=h.priority,
            node_ids=tuple(str(n) for n in h.node_ids),
            expires_at=h.expires_at,
            reason=h.reason,
        )
        for h in Hold.objects.filter(expires_at__gt=now)
    )
    queued = list(Job.objects.filter(state=JobState.QUEUED).select_related("tenant"))
    waits = unmet([j.pk for j in queued if j.waiting_for_jobs])
    queue = [
        pending_job(j, j.tenant.slug, pool_keys[j.pool_id], tuple(waits.get(j.pk, ())))
        for j in queued
    ]
    snapshot = core.ClusterSnapshot(
        nodes=nodes,
        running=running,
        quotas=quotas,
        pools=tuple(core.Pool(pool_id=k) for k in pool_keys.values()),
        reservations=holds,
    )
    return Inputs(snapshot, queue, pool_keys, {v: k for k, v in pool_keys.items()})
