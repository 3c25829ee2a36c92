"""Runtime limits (``max_runtime_s``): the API takes them, the scheduler plans with them, and
the governance sweep stops a job that has held its accelerators for that long."""

from __future__ import annotations

from datetime import timedelta

import pytest

from apps.governance.models import Notification
from apps.governance.services import sweep
from apps.jobs.models import Allocation, Job, OutboxEntry
from apps.scheduling.snapshot import build
from apps.tenancy.models import Role
from tests.governance.conftest import HOUR, Wall, long_training, state, submit

pytestmark = pytest.mark.django_db
JOBS = "/api/v1/tenants/tenant-a/jobs/"


def test_a_job_is_stopped_once_it_has_held_its_gpus_for_its_runtime_limit(
    world, client_for, wall: Wall
) -> None:
    owner = world.user("a", Role.MEMBER)
    client = client_for(owner)
    limited = submit(client, "tenant-a", long_training(wall.cluster, "one", 16, max_runtime_s=HOUR))
    waiting = submit(client, "tenant-a", long_training(wall.cluster, "two", 16))
    wall.go(0)
    wall.go(60)
    admitted_at = Job.objects.get(pk=limited).admitted_at
    assert admitted_at == wall.at(0)
    assert state(limited) == "running" and state(waiting) == "queued"  # tenant-a's limit: 24
    wall.go(HOUR - 1)
    assert sweep().timed_out == 0 and state(limited) == "running"
    wall.go(HOUR + 1)
    assert sweep().timed_out == 1
    job = Job.objects.get(pk=limited)
    assert job.state == "failed"
    assert job.state_reason == (
        "stopped at its runtime limit (held its accelerators 1 h 00 min, limit 1 h 00 min)"
    )
    assert job.events.filter(reason="RuntimeLimit", to_state="failed").count() == 1
    assert OutboxEntry.objects.filter(job=job, action="delete").exists()
    assert not Allocation.objects.filter(job=job).exists()
    notice = Notification.objects.get(recipient=owner, kind="runtime_limit")
    assert "held its accelerators 1 h 00 min" in notice.body
    assert "no complete checkpoint registered" in notice.body
    assert sweep().timed_out == 0  # level-triggered: nothing left to stop
    wall.go(HOUR + 120)  # the freed quota and devices go to the queued job
    assert state(waiting) in ("dispatching", "running")


def test_jobs_without_a_limit_are_never_stopped_for_runtime(world, client_for, wall) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    job = submit(client, "tenant-a", long_training(wall.cluster, "one", 8))
    wall.go(0)
    wall.go(90 * 24 * HOUR)
    assert sweep().timed_out == 0 and state(job) == "running"


def test_the_scheduler_plans_with_the_declared_runtime(world, client_for, wall) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    limited = submit(client, "tenant-a", long_training(wall.cluster, "one", 8, max_runtime_s=7200))
    open_ended = submit(client, "tenant-a", long_training(wall.cluster, "two", 8))
    queued = submit(client, "tenant-a", long_training(wall.cluster, "three", 16,
                                                      max_runtime_s=600))  # fmt: skip
    wall.go(0)
    inputs = build(wall.at(30))
    running = {j.job_id: j for j in inputs.snapshot.running}
    assert running[str(limited)].expected_end == wall.at(0) + timedelta(seconds=7200)
    assert running[str(open_ended)].expected_end is None
    pending = {j.job_id: j for j in inputs.queue}
    assert pending[str(queued)].expected_runtime == timedelta(seconds=600)


def test_the_limit_is_validated_kept_by_a_clone_and_shown(world, client_for, wall) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    for bad in (0, 59, 90 * 86400 + 1, "soon"):
        response = client.post(JOBS, long_training(wall.cluster, "x", 8, max_runtime_s=bad),
                               format="json")  # fmt: skip
        assert response.status_code == 400, bad
        assert list(response.json()["errors"]) == ["max_runtime_s"]
    assert not Job.objects.exists()
    job = submit(client, "tenant-a", long_training(wall.cluster, "x", 8, max_runtime_s=5400))
    assert client.get(f"{JOBS}{job}/").json()["max_runtime_s"] == 5400
    copy = client.post(f"{JOBS}{job}/clone/")
    assert copy.status_code == 201 and copy.json()["max_runtime_s"] == 5400
    unlimited = submit(client, "tenant-a", long_training(wall.cluster, "y", 8))
    assert client.get(f"{JOBS}{unlimited}/").json()["max_runtime_s"] is None
