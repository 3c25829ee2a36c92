"""Admission races on PostgreSQL: many submissions and several scheduler loops at once must
never over-admit devices or quota. Real threads, real connections, real row locks."""

from __future__ import annotations

import os
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection

from apps.clusters.models import ResourcePool
from apps.jobs.models import HOLDING, Allocation, Job, JobKind
from apps.jobs.services import submit_job
from apps.quotas.models import Quota
from apps.scheduling.loop import run_cycle
from apps.tenancy.models import Role
from tests.conftest import World
from tests.factories import make_node, make_pool

pytestmark = pytest.mark.django_db(transaction=True)

RUNS = int(os.environ.get("ZS_RACE_RUNS", "100"))
SUBMITTERS = 50
LOOPS = 4


def _spec(devices: int) -> dict[str, object]:
    return {
        "image": "pytorch:2.5",
        "replica_groups": [{"name": "w", "replicas": 1, "accelerators": devices}],
        "accelerator_models": ["A800"],
    }


def _race_once(
    world: World, pool: ResourcePool, barrier: threading.Barrier, executor: ThreadPoolExecutor
) -> None:
    users = [world.user("a", r) for r in (Role.MEMBER, Role.TENANT_ADMIN)] + [
        world.user("b", r) for r in (Role.MEMBER, Role.TENANT_ADMIN)
    ]

    def submit(i: int) -> None:
        barrier.wait()
        user = users[i % len(users)]
        tenant = world.tenant_a if i % 4 < 2 else world.tenant_b
        submit_job(tenant=tenant, owner=user, name=f"r{i}", kind=JobKind.TRAINING, pool=pool,
                   priority=4, spec=_spec(1))  # fmt: skip

    def loop() -> None:
        barrier.wait()
        for _ in range(2):
            run_cycle()

    # Long-lived worker threads keep their database connections between runs, so a run
    # measures the race, not connection set-up; the barrier releases all 54 at once.
    futures = [executor.submit(submit, i) for i in range(SUBMITTERS)]
    futures += [executor.submit(loop) for _ in range(LOOPS)]
    for future in futures:
        future.result(timeout=60)
    run_cycle()  # settle: whatever still fits is admitted now


def test_fifty_submissions_race_for_the_last_eight_gpus(world: World) -> None:
    pool = make_pool(name="race")
    make_node(pool=pool, name="busy", accelerator_count=8)
    make_node(pool=pool, name="free", accelerator_count=8)
    Quota.objects.create(tenant=world.tenant_a, pool=pool, accelerator_model="A800", guarantee=8)
    Quota.objects.create(tenant=world.tenant_b, pool=pool, accelerator_model="A800", guarantee=8,
                         borrow_limit=8)  # fmt: skip
    # Tenant B already runs an 8-GPU job: 8 GPUs are left.
    submit_job(tenant=world.tenant_b, owner=world.user("b", Role.MEMBER), name="big",
               kind=JobKind.TRAINING, pool=pool, priority=3, spec=_spec(8))  # fmt: skip
    run_cycle()
    big = Job.objects.get(name="big")
    assert big.state == "admitted"

    over_admissions = 0
    admitted_counts: Counter[int] = Counter()
    executor = ThreadPoolExecutor(max_workers=SUBMITTERS + LOOPS)
    for _run in range(RUNS):
        barrier = threading.Barrier(SUBMITTERS + LOOPS)
        _race_once(world, pool, barrier, executor)
        holding = Job.objects.filter(state__in=HOLDING).exclude(pk=big.pk)
        devices = Counter(
            (a.node_id, d) for a in Allocation.objects.filter(job__state__in=HOLDING)
            for d in a.devices
        )  # fmt: skip
        if max(devices.values()) > 1 or sum(devices.values()) > 16:
            over_admissions += 1
        usage = Counter(j.tenant_id for j in holding)
        if usage[world.tenant_a.pk] > 8 or usage[world.tenant_b.pk] + 8 > 16:
            over_admissions += 1
        admitted_counts[holding.count()] += 1
        Job.objects.exclude(pk=big.pk).delete()
    closing = threading.Barrier(SUBMITTERS + LOOPS)

    def close() -> None:
        closing.wait()  # every worker thread closes its own connection
        connection.close()

    for future in [executor.submit(close) for _ in range(SUBMITTERS + LOOPS)]:
        future.result(timeout=30)
    executor.shutdown()

    assert over_admissions == 0
    # Exactly what fits: the 8 free GPUs, every run.
    assert admitted_counts == Counter({8: RUNS})
