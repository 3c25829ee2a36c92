"""Synthetic clusters with the reference topology, for tests, benchmarks and the simulator.

Reference: 8 devices per server, 32 servers per leaf switch, 4 leaves per Scalable Unit,
one spine. Node ids sort in topology order ("n00000" is in leaf 0 of SU 0).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from .model import Node, NodeAllocation, ReplicaGroup, RunningJob

NODES_PER_LEAF = 32
LEAVES_PER_SU = 4


def reference_nodes(
    count: int,
    *,
    pool: str = "train",
    model: str = "A800",
    vendor: str = "nvidia",
    arch: str = "x86_64",
    devices: int = 8,
    nodes_per_leaf: int = NODES_PER_LEAF,
    leaves_per_su: int = LEAVES_PER_SU,
    spine: str = "spine-0",
    prefix: str = "n",
    cpu_milli: int = 128_000,
    memory_mib: int = 1_024_000,
) -> list[Node]:
    nodes: list[Node] = []
    for i in range(count):
        leaf = i // nodes_per_leaf
        su = leaf // leaves_per_su
        nodes.append(
            Node(
                node_id=f"{prefix}{i:05d}",
                pool=pool,
                accelerator_model=model,
                accelerator_vendor=vendor,
                accelerator_count=devices,
                cpu_milli=cpu_milli,
                memory_mib=memory_mib,
                arch=arch,
                scalable_unit=f"{prefix}su{su}",
                leaf_switch=f"{prefix}leaf{leaf}",
                spine=spine,
            )
        )
    return nodes


def running_job(
    job_id: str,
    placements: Iterable[tuple[str, Iterable[int]]],
    *,
    tenant: str = "t1",
    pool: str = "train",
    priority: int = 4,
    started_at: datetime,
    preemptible: bool = True,
) -> RunningJob:
    """A running job from ``[(node_id, device indices)]``."""
    return RunningJob(
        job_id=job_id,
        tenant=tenant,
        pool=pool,
        priority=priority,
        started_at=started_at,
        allocations=tuple(NodeAllocation(n, tuple(d)) for n, d in placements),
        preemptible=preemptible,
    )


def gpus(replicas: int, per_replica: int, *, name: str = "worker") -> ReplicaGroup:
    return ReplicaGroup(name=name, replicas=replicas, accelerators=per_replica)
