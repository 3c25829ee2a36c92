"""Telemetry test data: a small cluster with one running job per tenant."""

from __future__ import annotations

from dataclasses import dataclass

from apps.clusters.models import Node
from apps.jobs.models import Allocation, Job, JobKind, JobState
from apps.tenancy.models import Role
from tests.conftest import World
from tests.factories import make_node, make_pool


@dataclass
class Cluster:
    nodes: list[Node]
    job_a: Job
    job_b: Job


def running_job(world: World, tenant: str, node: Node, devices: list[int]) -> Job:
    """A job already running on ``devices`` of ``node`` (state and allocation as the
    reconciler leaves them)."""
    owner = world.user(tenant, Role.MEMBER)
    assert node.pool is not None
    job = Job.objects.create(
        tenant=world.tenant_a if tenant == "a" else world.tenant_b,
        owner=owner,
        name=f"train-{tenant}",
        kind=JobKind.TRAINING,
        pool=node.pool,
        spec={},
        requested_devices=len(devices),
        state=JobState.RUNNING,
    )
    Allocation.objects.create(
        job=job, node=node, replica_group="worker", replica_index=0, devices=devices
    )
    return job


def make_cluster(world: World, nodes: int = 2) -> Cluster:
    pool = make_pool()
    made = [make_node(pool=pool, name=f"gpu-{i:02d}") for i in range(nodes)]
    return Cluster(
        nodes=made,
        job_a=running_job(world, "a", made[0], [0, 1, 2, 3]),
        job_b=running_job(world, "b", made[1], [0, 1]),
    )
