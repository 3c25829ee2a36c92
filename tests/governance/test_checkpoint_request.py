"""Checkpoint requests: a person (or the idle sweep, or the runtime limit) asks a running
training job to save a checkpoint; the job hears of it in the answer to its metrics batches
and a checkpoint completed after the request serves it."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from apps.jobs.models import Job
from apps.runs.authentication import job_token
from apps.runs.services import ensure_run_for_job
from apps.tenancy.models import Role
from tests.conftest import World
from tests.governance.conftest import Wall, long_training, notebook, state, submit

pytestmark = pytest.mark.django_db
JOBS = "/api/v1/tenants/tenant-a/jobs"


def _job_client(job: Job) -> APIClient:
    """What the SDK inside the job uses: the job's own token."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {job_token(job)}")
    return client


def test_a_request_reaches_the_job_and_a_later_checkpoint_serves_it(
    world: World, client_for, wall: Wall
) -> None:
    member = client_for(world.user("a", Role.MEMBER))
    job_id = submit(member, "tenant-a", long_training(wall.cluster, "sft", 8))
    wall.go(0)
    wall.go(60)
    assert state(job_id) == "running"
    job = Job.objects.get(pk=job_id)
    run = ensure_run_for_job(job)
    sdk = _job_client(job)
    metrics = f"/api/v1/tenants/tenant-a/runs/{run.pk}/metrics/"
    checkpoints = f"/api/v1/tenants/tenant-a/runs/{run.pk}/checkpoints/"

    def send(step: int) -> dict[str, object]:
        answer = sdk.post(metrics, {"points": [{"step": step, "values": {"loss": 1.0}}]},
                          format="json")  # fmt: skip
        assert answer.status_code == 200, answer.json()
        return dict(answer.json())

    assert send(1)["checkpoint_requested_at"] is None
    before = member.get(f"{JOBS}/{job_id}/checkpoint/").json()
    assert before["requested_at"] is None and before["pending"] is False

    wall.go(120)
    asked = member.post(f"{JOBS}/{job_id}/checkpoint/", {"reason": " before a rebase "},
                        format="json")  # fmt: skip
    assert asked.status_code == 200, asked.json()
    body = asked.json()
    assert body["pending"] is True and body["reason"] == "a-member: before a rebase"
    requested_at = body["requested_at"]
    heard = send(2)
    assert heard["checkpoint_requested_at"] == requested_at
    assert heard["checkpoint_request_reason"] == "a-member: before a rebase"
    event = job.events.get(reason="CheckpointRequested")
    assert event.message == "a-member: before a rebase"

    wall.go(180)  # asking again while one is pending changes nothing
    again = member.post(f"{JOBS}/{job_id}/checkpoint/", {}, format="json").json()
    assert again["requested_at"] == requested_at and again["reason"] == body["reason"]
    assert job.events.filter(reason="CheckpointRequested").count() == 1

    # Rank 1 of 2 is durable: not complete yet, so the request is still pending.
    shard = {"step": 40, "path": "s3://ck/40", "world_size": 2, "shard_bytes": 1}
    assert sdk.post(checkpoints, {**shard, "rank": 1}, format="json").status_code == 201
    assert send(3)["checkpoint_requested_at"] == requested_at
    assert sdk.post(checkpoints, {**shard, "rank": 0}, format="json").status_code == 201
    served = send(4)
    assert served["checkpoint_requested_at"] is None and served["checkpoint_request_reason"] == ""
    after = member.get(f"{JOBS}/{job_id}/checkpoint/").json()
    assert after["pending"] is False and after["served_step"] == 40
    assert after["requested_at"] == requested_at
    assert (after["newest_step"], after["newest_path"]) == (40, "s3://ck/40")

    wall.go(240)  # a new request after the served one is new
    fresh = member.post(f"{JOBS}/{job_id}/checkpoint/", {}, format="json").json()
    assert fresh["pending"] is True and fresh["requested_at"] != requested_at
    assert fresh["reason"] == "a-member: asked on the dashboard"
    assert send(5)["checkpoint_requested_at"] == fresh["requested_at"]


def test_only_running_training_jobs_of_the_tenant_take_a_request(
    world: World, client_for, wall: Wall
) -> None:
    member = client_for(world.user("a", Role.MEMBER))
    big = submit(member, "tenant-a", long_training(wall.cluster, "big", 8))
    nb = submit(member, "tenant-a", notebook(wall.cluster))
    queued = submit(member, "tenant-a", long_training(wall.cluster, "waits", 24))
    wall.go(0)
    wall.go(60)
    assert (state(big), state(nb), state(queued)) == ("running", "running", "queued")

    refused = member.post(f"{JOBS}/{nb}/checkpoint/", {}, format="json")
    assert refused.status_code == 400
    assert refused.json()["errors"] == {"kind": ["A notebook job saves no checkpoints."]}
    waiting = member.post(f"{JOBS}/{queued}/checkpoint/", {}, format="json")
    assert waiting.status_code == 409 and "only a running job" in waiting.json()["detail"]
    long_reason = member.post(f"{JOBS}/{big}/checkpoint/", {"reason": "x" * 201}, format="json")
    assert long_reason.status_code == 400 and "reason" in long_reason.json()["errors"]

    viewer = client_for(world.user("a", Role.VIEWER))
    assert viewer.get(f"{JOBS}/{big}/checkpoint/").status_code == 200
    assert viewer.post(f"{JOBS}/{big}/checkpoint/", {}, format="json").status_code == 403
    other = client_for(world.user("b", Role.TENANT_ADMIN))
    assert other.post(f"{JOBS}/{big}/checkpoint/", {}, format="json").status_code == 404
    assert not Job.objects.get(pk=big).events.filter(reason="CheckpointRequested").exists()
