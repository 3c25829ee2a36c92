"""Small builders for simulator tests."""

from __future__ import annotations

from apps.scheduling.core import Node, Pool, Quota, ReplicaGroup, TopologyRequirement
from apps.scheduling.core.synthetic import reference_nodes
from apps.scheduling.sim.workload import NO_TOPOLOGY, NodeFailure, SimJob, Workload


def nodes(count: int, **kw: object) -> list[Node]:
    kw.setdefault("nodes_per_leaf", 2)
    kw.setdefault("leaves_per_su", 2)
    return reference_nodes(count, **kw)  # type: ignore[arg-type]


def job(
    job_id: str,
    submit: float,
    gpus: int = 1,
    *,
    replicas: int = 1,
    milli: int = 0,
    duration: float | None = 100.0,
    tenant: str = "t1",
    priority: int = 4,
    ckpt: float | None = None,
    restart: float = 0.0,
    topology: TopologyRequirement = NO_TOPOLOGY,
    max_wait: float | None = None,
    cpu: int = 0,
) -> SimJob:
    group = ReplicaGroup(
        "w", replicas, accelerators=0 if milli else gpus, accelerator_milli=milli, cpu_milli=cpu
    )
    return SimJob(
        job_id=job_id,
        submit=submit,
        tenant=tenant,
        pool="train",
        priority=priority,
        groups=(group,),
        duration=duration,
        topology=topology,
        checkpoint_interval=ckpt,
        restart_cost=restart,
        max_wait=max_wait,
    )


def workload(
    jobs: list[SimJob],
    node_count: int = 2,
    *,
    quotas: tuple[Quota, ...] = (),
    failures: tuple[NodeFailure, ...] = (),
    one_shot: bool = False,
    horizon: float | None = None,
    **kw: object,
) -> Workload:
    return Workload(
        name="test",
        nodes=tuple(nodes(node_count, **kw)),
        jobs=tuple(sorted(jobs, key=lambda j: j.submit)),
        quotas=quotas,
        pools=(Pool("train"),),
        failures=failures,
        one_shot=one_shot,
        horizon=horizon,
    )
