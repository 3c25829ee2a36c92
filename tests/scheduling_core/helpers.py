"""Small builders so each test states its cluster in a few lines."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from apps.scheduling.core import (
    ClusterSnapshot,
    Decisions,
    DeviceShare,
    Node,
    NodeAllocation,
    PendingJob,
    PendingReason,
    Placement,
    Policy,
    Quota,
    ReplicaGroup,
    RunningJob,
    Tier,
    TopologyMode,
    TopologyRequirement,
    schedule,
)
from apps.scheduling.core.synthetic import reference_nodes

NOW = datetime(2025, 3, 1, 12, 0, 0)


def ago(minutes: float) -> datetime:
    return NOW - timedelta(minutes=minutes)


def nodes(count: int, **kw: Any) -> list[Node]:
    """Reference nodes; tests use small leaves (2 nodes per leaf, 2 leaves per SU)."""
    kw.setdefault("nodes_per_leaf", 2)
    kw.setdefault("leaves_per_su", 2)
    return reference_nodes(count, **kw)


def whole(replicas: int, per: int, name: str = "worker", **kw: Any) -> ReplicaGroup:
    return ReplicaGroup(name=name, replicas=replicas, accelerators=per, **kw)


def share(replicas: int, milli: int, name: str = "infer", **kw: Any) -> ReplicaGroup:
    return ReplicaGroup(name=name, replicas=replicas, accelerator_milli=milli, **kw)


def job(
    job_id: str,
    *groups: ReplicaGroup,
    tenant: str = "t1",
    pool: str = "train",
    priority: int = 4,
    waited: float = 0,
    topology: TopologyMode = TopologyMode.NONE,
    max_tier: Tier = Tier.SPINE,
    max_wait: timedelta | None = None,
) -> PendingJob:
    return PendingJob(
        job_id=job_id,
        tenant=tenant,
        pool=pool,
        priority=priority,
        groups=groups,
        submit_time=ago(waited),
        topology=TopologyRequirement(topology, max_tier),
        max_wait=max_wait,
    )


def running(
    job_id: str,
    where: dict[str, Sequence[int]],
    *,
    tenant: str = "t1",
    pool: str = "train",
    priority: int = 4,
    started: float = 60,
    preemptible: bool = True,
    shares: dict[str, Sequence[tuple[int, int]]] | None = None,
) -> RunningJob:
    allocs = [NodeAllocation(n, tuple(d)) for n, d in where.items()]
    for n, pairs in (shares or {}).items():
        allocs.append(NodeAllocation(n, (), tuple(DeviceShare(d, m) for d, m in pairs)))
    return RunningJob(
        job_id=job_id,
        tenant=tenant,
        pool=pool,
        priority=priority,
        started_at=ago(started),
        allocations=tuple(allocs),
        preemptible=preemptible,
    )


def quota(tenant: str, guarantee: int, borrow: int = 0, model: str = "A800") -> Quota:
    return Quota(tenant, "train", model, guarantee, borrow)


def snap(
    node_list: Iterable[Node],
    run: Iterable[RunningJob] = (),
    quotas: Iterable[Quota] | None = None,
    **kw: Any,
) -> ClusterSnapshot:
    return ClusterSnapshot(
        nodes=tuple(node_list), running=tuple(run), quotas=tuple(quotas or ()), **kw
    )


def run(
    snapshot: ClusterSnapshot,
    queue: Sequence[PendingJob],
    now: datetime = NOW,
    **policy: Any,
) -> Decisions:
    """Schedule with quotas off unless the test passes quotas (most tests are not about C3)."""
    policy.setdefault("quotas", bool(snapshot.quotas))
    return schedule(snapshot, queue, Policy(**policy), now)


def placed(d: Decisions) -> dict[str, Placement]:
    return {p.job_id: p for p in d.placements}


def pending(d: Decisions) -> dict[str, PendingReason]:
    return {p.job_id: p for p in d.pending}


def where(p: Placement) -> list[tuple[str, tuple[int, ...]]]:
    return [(r.node_id, r.devices) for r in p.replicas]


def victims(d: Decisions) -> list[str]:
    return [p.victim_job_id for p in d.preemptions]
