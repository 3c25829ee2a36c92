"""Restarts and deletes of one notebook home racing on PostgreSQL: one home never gets two
active notebooks, and never a notebook mounting files that are being deleted. Real threads,
real connections, real row locks (apps/jobs/homes.py locks the home job's row)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection
from django.utils import timezone

from apps.jobs import homes
from apps.jobs.models import Job, JobKind, JobState
from apps.jobs.services import submit_job
from apps.tenancy.models import Role
from tests.conftest import World
from tests.factories import make_pool

pytestmark = pytest.mark.django_db(transaction=True)

RUNS = 20
THREADS = 8


def _stopped_notebook(world: World) -> Job:
    owner = world.user("a", Role.MEMBER)
    job = submit_job(
        tenant=world.tenant_a, owner=owner, name="explore", kind=JobKind.NOTEBOOK,
        pool=make_pool(), priority=4,
        spec={"image": "quay.io/jupyter/base-notebook:latest", "accelerator_models": [],
              "replica_groups": [{"name": "notebook", "replicas": 1, "accelerators": 0}],
              "notebook": {"flavor": "jupyter", "storage_gib": 5}},
    )  # fmt: skip
    Job.objects.filter(pk=job.pk).update(
        state=JobState.CANCELLED, started_at=timezone.now(), finished_at=timezone.now()
    )
    job.refresh_from_db()
    return job


def _race(job: Job, actions: list[str], executor: ThreadPoolExecutor) -> list[str]:
    barrier = threading.Barrier(len(actions))
    owner = job.owner
    assert owner is not None

    def act(action: str) -> str:
        try:
            barrier.wait()
            if action == "restart":
                homes.restart_notebook(job=job, actor=owner)
            else:
                homes.delete_home(job=job, actor=owner)
            return f"{action}:ok"
        except homes.HomeConflict:
            return f"{action}:refused"
        finally:
            connection.close()

    futures = [executor.submit(act, action) for action in actions]
    return sorted(f.result(timeout=60) for f in futures)


def test_racing_restarts_start_one_notebook(world: World) -> None:
    with ThreadPoolExecutor(THREADS) as executor:
        for _ in range(RUNS):
            job = _stopped_notebook(world)
            outcomes = _race(job, ["restart"] * THREADS, executor)
            assert outcomes == ["restart:ok"] + ["restart:refused"] * (THREADS - 1)
            assert homes.sharing(job.pk).exclude(pk=job.pk).count() == 1


def test_a_restart_racing_a_delete_never_mounts_deleted_files(world: World) -> None:
    with ThreadPoolExecutor(THREADS) as executor:
        for _ in range(RUNS):
            job = _stopped_notebook(world)
            outcomes = _race(job, ["restart", "delete"] * (THREADS // 2), executor)
            restarted = homes.sharing(job.pk).exclude(pk=job.pk)
            if Job.objects.get(pk=job.pk).home_deleted_at is not None:
                # Deleted first: every restart after it was refused (the files are gone).
                assert not restarted.exists() and "restart:ok" not in outcomes
            else:
                # Restarted first: the restart holds the home, so every delete was refused.
                assert restarted.count() == 1 and outcomes.count("restart:ok") == 1
                assert "delete:ok" not in outcomes
