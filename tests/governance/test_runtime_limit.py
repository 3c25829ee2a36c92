"""Runtime limits (``max_runtime_s``): the API takes them, the scheduler plans with them, and
the governance sweep stops a job that has held its accelerators for that long."""

from __future__ import annotations

from datetime import timedelta

import pytest

from apps.governance.models import Notification
from apps.governance.services import sweep
from apps.jobs.models import Allocation, Job, OutboxEntry
from apps.runs.services import ensure_run_for_job, register_checkpoint
from apps.scheduling.snapshot import build
from apps.tenancy.models import Role
from tests.governance.conftest import HOUR, Wall, long_training, notebook, state, submit

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


def test_the_stop_notice_names_the_checkpoint_a_clone_resumes_from(
    world, client_for, wall: Wall
) -> None:
    owner = world.user("a", Role.MEMBER)
    client = client_for(owner)
    limited = submit(client, "tenant-a", long_training(wall.cluster, "one", 8, max_runtime_s=HOUR))
    wall.go(0)
    wall.go(60)
    run = ensure_run_for_job(Job.objects.get(pk=limited))
    register_checkpoint(run=run, step=300, path="s3://ckpt/one/step_300")
    register_checkpoint(run=run, step=400, path="s3://ckpt/one/step_400", rank=0, world_size=2)
    wall.go(HOUR + 1)
    assert sweep().timed_out == 1
    notice = Notification.objects.get(recipient=owner, kind="runtime_limit")
    assert "newest complete checkpoint: step 300 at s3://ckpt/one/step_300" in notice.body
    # The notice as notes: the checkpoint sentence holds where a clone resumes, nested.
    assert [n["key"] for n in notice.detail["body"]] == [
        "noticeRuntimeLimitBody",
        "noticeCheckpoint",
    ]
    checkpoint = notice.detail["body"][1]["args"]["checkpoint"]
    assert checkpoint["key"] == "checkpointNotAsked"
    assert checkpoint["args"]["where"] == {
        "key": "checkpointAt",
        "args": {"step": 300, "location": "s3://ckpt/one/step_300"},
    }


def test_the_owner_hears_of_the_stop_once_half_an_hour_ahead(world, client_for, wall) -> None:
    owner = world.user("a", Role.MEMBER)
    client = client_for(owner)
    job = submit(client, "tenant-a", long_training(wall.cluster, "one", 8, max_runtime_s=2 * HOUR))
    wall.go(0)
    wall.go(90 * 60 - 60)  # 31 min left
    assert sweep().runtime_warned == 0
    wall.go(90 * 60 + 60)  # 29 min left
    assert sweep().runtime_warned == 1
    assert sweep().runtime_warned == 0  # once per run
    event = Job.objects.get(pk=job).events.get(reason="RuntimeLimitSoon")
    stop_at = wall.at(2 * HOUR)
    assert event.message == f"stops at its runtime limit in 29 min ({stop_at:%Y-%m-%d %H:%M} UTC)"
    assert event.message_key == "runtimeLimitSoon"
    assert event.message_args["left"] == {"seconds": 29 * 60}
    notice = Notification.objects.get(recipient=owner, kind="runtime_limit_soon")
    assert "a clone resumes from its newest checkpoint. A checkpoint was requested" in notice.body
    run = ensure_run_for_job(Job.objects.get(pk=job))
    assert run.checkpoint_requested_at == wall.at(90 * 60 + 60)
    assert run.checkpoint_request_reason == f"runtime limit: stops at {stop_at:%Y-%m-%d %H:%M} UTC"
    wall.go(90 * 60 + 120)  # the job saves one when it hears of the request
    register_checkpoint(run=run, step=700, path="s3://ckpt/one/step_700")
    assert state(job) == "running"
    wall.go(2 * HOUR + 1)
    assert sweep().timed_out == 1 and state(job) == "failed"
    stopped = Notification.objects.get(recipient=owner, kind="runtime_limit")
    assert (
        f"checkpoint requested {wall.at(90 * 60 + 60):%Y-%m-%d %H:%M} UTC, saved at step 700; "
        "newest complete checkpoint: step 700 at s3://ckpt/one/step_700" in stopped.body
    )


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


def test_a_runtime_cap_bounds_declared_limits_and_fills_missing_ones(world, client_for, wall):
    policy = "/api/v1/tenants/tenant-a/governance/policy/"
    admin = client_for(world.user("a", Role.TENANT_ADMIN))
    member = client_for(world.user("a", Role.MEMBER))
    assert member.get(policy).json()["effective"]["max_runtime_s"] is None  # no cap by default
    assert admin.patch(policy, {"max_runtime_s": 4 * HOUR}, format="json").status_code == 200
    too_long = member.post(JOBS, long_training(wall.cluster, "x", 8, max_runtime_s=5 * HOUR),
                           format="json")  # fmt: skip
    assert too_long.status_code == 400
    assert too_long.json()["errors"] == {
        "max_runtime_s": ["At most 14400 s: the runtime cap of tenant 'tenant-a' (its governance "
                          "policy)."]
    }  # fmt: skip
    short = submit(member, "tenant-a", long_training(wall.cluster, "y", 8, max_runtime_s=HOUR))
    undeclared = submit(member, "tenant-a", long_training(wall.cluster, "z", 8))
    nb = submit(member, "tenant-a", notebook(wall.cluster))
    assert Job.objects.get(pk=short).max_runtime_s == HOUR
    assert Job.objects.get(pk=undeclared).max_runtime_s == 4 * HOUR
    assert Job.objects.get(pk=nb).max_runtime_s == 4 * HOUR
    # Another tenant is not bound by tenant-a's cap.
    other = client_for(world.user("b", Role.MEMBER))
    free = submit(other, "tenant-b", long_training(wall.cluster, "w", 8))
    assert Job.objects.get(pk=free).max_runtime_s is None
    # A platform default cap binds every tenant; a tenant may only tighten it.
    root = client_for(world.platform_admin)
    default = "/api/v1/governance/default-policy/"
    assert root.put(default, {"max_runtime_s": 2 * HOUR}, format="json").status_code == 200
    assert member.get(policy).json()["effective"]["max_runtime_s"] == 2 * HOUR
    for looser in (None, 3 * HOUR):
        bad = admin.patch(policy, {"max_runtime_s": looser}, format="json")
        assert bad.status_code == 400
        assert bad.json()["errors"] == {
            "max_runtime_s": ["Must be at most the platform default (7200)."]
        }
    assert Job.objects.get(pk=submit(other, "tenant-b", long_training(wall.cluster, "v", 8))
                           ).max_runtime_s == 2 * HOUR  # fmt: skip
    # A clone is held to the cap as it is now.
    copy = other.post(f"/api/v1/tenants/tenant-b/jobs/{free}/clone/")
    assert copy.status_code == 201 and copy.json()["max_runtime_s"] == 2 * HOUR
