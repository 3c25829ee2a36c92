"""Sweeps on PostgreSQL under races: several scheduler loops advancing the same sweep at once
start each free slot once, and a cancel racing them leaves nothing running. Real threads,
real connections, real row locks."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection
from django.utils import timezone

from apps.jobs.models import Job, JobState
from apps.sweeps import services
from apps.sweeps.api.serializers import SweepSerializer
from apps.sweeps.models import Sweep
from apps.tenancy.models import Role
from tests.conftest import World
from tests.factories import make_node, make_pool

pytestmark = pytest.mark.django_db(transaction=True)
RUNS = 10
LOOPS = 4


def _sweep(world: World, pool_id: int, name: str) -> Sweep:
    body = {
        "name": name,
        "method": "grid",
        "parameters": {"lr": [1, 2, 3, 4, 5, 6]},
        "parallel": 2,
        "template": {
            "pool": pool_id,
            "image": "pytorch:2.5",
            "args": ["--lr={{lr}}"],
            "replica_groups": [{"name": "w", "replicas": 1, "accelerators": 1}],
        },
    }
    submitter = services.Submitter(world.tenant_a, Role.MEMBER)
    serializer = SweepSerializer(data=body, context={"view": submitter})
    serializer.is_valid(raise_exception=True)
    sweep = serializer.save(tenant=world.tenant_a, owner=world.user("a", Role.MEMBER))
    services.fill_slots(sweep, timezone.now())
    # Both first trials end: two slots are free for whichever loop comes first.
    Job.objects.filter(trial__sweep=sweep).update(state=JobState.SUCCEEDED)
    return sweep


def _live(sweep: Sweep) -> int:
    return Job.objects.filter(trial__sweep=sweep).exclude(state__in=services.JOB_ENDED).count()


def test_loops_advancing_one_sweep_at_once_start_each_slot_once(world: World) -> None:
    pool = make_pool(name="race")
    make_node(pool=pool, name="n0", accelerator_count=8)

    def advance(barrier: threading.Barrier) -> int:
        try:
            barrier.wait()
            return services.advance()
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=LOOPS) as executor:
        for run in range(RUNS):
            sweep = _sweep(world, pool.pk, f"race-{run}")
            barrier = threading.Barrier(LOOPS)
            made = [f.result(timeout=60) for f in [executor.submit(advance, barrier)
                                                   for _ in range(LOOPS)]]  # fmt: skip
            assert sum(made) == 2, f"run {run}: {made}"
            assert _live(sweep) == 2
            assert Job.objects.filter(trial__sweep=sweep).count() == 4
            Sweep.objects.filter(pk=sweep.pk).update(state="cancelled")  # out of later runs


def test_a_cancel_racing_the_loops_leaves_nothing_running(world: World) -> None:
    pool = make_pool(name="race")
    make_node(pool=pool, name="n0", accelerator_count=8)
    owner = world.user("a", Role.MEMBER)

    def advance(barrier: threading.Barrier) -> None:
        try:
            barrier.wait()
            services.advance()
        finally:
            connection.close()

    def cancel(barrier: threading.Barrier, sweep: Sweep) -> None:
        try:
            barrier.wait()
            services.cancel(sweep, owner)
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=LOOPS + 1) as executor:
        for run in range(RUNS):
            sweep = _sweep(world, pool.pk, f"cancel-{run}")
            barrier = threading.Barrier(LOOPS + 1)
            futures = [executor.submit(advance, barrier) for _ in range(LOOPS)]
            futures.append(executor.submit(cancel, barrier, sweep))
            for future in futures:
                future.result(timeout=60)
            assert Sweep.objects.get(pk=sweep.pk).state == "cancelled"
            assert _live(sweep) == 0, f"run {run}"
