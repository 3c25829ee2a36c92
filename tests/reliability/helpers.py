"""Small builders shared by the reliability tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from django.db import connection

from apps.clusters.models import ResourcePool
from apps.jobs.models import Job, JobKind, OutboxEntry
from apps.jobs.services import submit_job
from apps.quotas.models import Quota
from apps.scheduling.loop import run_cycle
from apps.tenancy.models import Role
from tests.conftest import World
from tests.factories import make_node, make_pool

T = TypeVar("T")
SPEC = {
    "image": "pytorch:2.5",
    "accelerator_models": ["A800"],
    "replica_groups": [{"name": "w", "replicas": 1, "accelerators": 1}],
}


def make_capacity(world: World, gpus: int, name: str = "rel") -> ResourcePool:
    """A pool of ``gpus`` A800s (8 per node) that tenant a may fill entirely."""
    pool = make_pool(name=name)
    for i in range((gpus + 7) // 8):
        make_node(pool=pool, name=f"{name}{i:03d}", leaf_switch=f"leaf{i // 4}")
    Quota.objects.create(tenant=world.tenant_a, pool=pool, accelerator_model="A800",
                         guarantee=gpus)  # fmt: skip
    return pool


def admit_jobs(world: World, jobs: int) -> ResourcePool:
    """``jobs`` one-GPU jobs of tenant a, admitted, each with a pending apply in the outbox."""
    pool = make_capacity(world, jobs)
    for i in range(jobs):
        submit_job(tenant=world.tenant_a, owner=world.user("a", Role.MEMBER), name=f"j{i}",
                   kind=JobKind.TRAINING, pool=pool, priority=4, spec=SPEC)  # fmt: skip
    run_cycle()
    assert Job.objects.filter(state="admitted").count() == jobs
    assert OutboxEntry.objects.filter(state="pending").count() == jobs
    return pool


def closing(fn: Callable[[], T]) -> Callable[[], T]:
    """``fn`` for ``asyncio.to_thread``: the worker thread's database connection is closed after
    it, so no session outlives the test (the test database could not be dropped)."""

    def run() -> T:
        try:
            return fn()
        finally:
            connection.close()

    return run
