"""Checkpoint registry, job tokens, and the env a (re)started training job gets."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from apps.jobs import workload
from apps.jobs.models import Job, JobState
from apps.jobs.relay import resume_note
from apps.runs.authentication import job_token
from apps.runs.models import Checkpoint, CheckpointState, MetricPoint, Run
from apps.runs.selectors import checkpoint_request, newest_complete_checkpoint
from apps.runs.services import ensure_run_for_job, register_checkpoint, request_checkpoint
from apps.tenancy.models import Role
from tests.factories import make_node, make_pool
from tests.runs.conftest import batch, metrics_url

pytestmark = pytest.mark.django_db


@pytest.fixture
def job(world) -> Job:
    pool = make_pool(name="train")
    make_node(pool=pool, name="n0")
    return Job.objects.create(
        tenant=world.tenant_a,
        owner=world.user("a", Role.MEMBER),
        name="llama",
        kind="training",
        pool=pool,
        spec={
            "image": "pytorch:2",
            "env": {"ZS_RUN_ID": "spoofed", "NCCL_DEBUG": "WARN"},
            "replica_groups": [{"name": "worker", "replicas": 2, "accelerators": 8}],
        },
        state=JobState.RUNNING,
    )


def _env(job: Job) -> dict[str, str]:
    return dict(workload.build(job).replica_groups[0].env)


def test_shards_make_a_checkpoint_complete_only_when_all_ranks_registered(job):
    run = ensure_run_for_job(job)
    c = register_checkpoint(run=run, step=100, path="/ckpt/step_100", rank=1, world_size=2,
                            size_bytes=10)  # fmt: skip
    assert c.state == CheckpointState.INCOMPLETE and c.shards_done == 1
    assert newest_complete_checkpoint(job) is None
    again = register_checkpoint(run=run, step=100, path="/ckpt/step_100", rank=1, world_size=2,
                                size_bytes=10)  # fmt: skip
    assert again.shards_done == 1  # idempotent per rank
    done = register_checkpoint(run=run, step=100, path="/ckpt/step_100", rank=0, world_size=2,
                               size_bytes=5)  # fmt: skip
    assert (done.state, done.shards_done, done.size_bytes) == (CheckpointState.COMPLETE, 2, 15)
    assert done.completed_at is not None
    # a newer but incomplete checkpoint is never used
    register_checkpoint(run=run, step=200, path="/ckpt/step_200", rank=0, world_size=2)
    assert newest_complete_checkpoint(job) == done


def test_restarted_job_env_carries_identity_and_newest_complete_checkpoint(job):
    env = _env(job)
    run = Run.objects.get(job=job)
    assert env["ZS_RUN_ID"] == str(run.pk)  # the platform's value wins over the user's
    assert env["ZS_JOB_ID"] == str(job.pk) and env["ZS_TENANT"] == "tenant-a"
    assert env["ZS_TOKEN"] == job_token(job) and env["NCCL_DEBUG"] == "WARN"
    assert "ZS_RESUME_FROM" not in env
    register_checkpoint(run=run, step=50, path="/ckpt/step_50")
    register_checkpoint(run=run, step=90, path="/ckpt/step_90", rank=0, world_size=2)
    env = _env(job)
    assert env["ZS_RESUME_FROM"] == "/ckpt/step_50" and env["ZS_RESUME_STEP"] == "50"
    assert Run.objects.filter(job=job).count() == 1  # one run per job, across attempts


def test_the_requeue_note_says_what_the_next_attempt_starts_from(job):
    """Only training resumes from a checkpoint; notebooks and services are told otherwise."""
    job.attempt = 2
    assert (
        resume_note(job).text == "attempt 2 starts from the beginning (no complete checkpoint yet)"
    )
    run = ensure_run_for_job(job)
    register_checkpoint(run=run, step=50, path="/ckpt/step_50")
    register_checkpoint(run=run, step=90, path="/ckpt/step_90", rank=0, world_size=2)
    assert resume_note(job).text == "attempt 2 resumes from the checkpoint at step 50"
    job.kind = "notebook"
    assert "checkpoint" not in resume_note(job).text
    assert resume_note(job).text.endswith("files in its home folder are kept")
    job.kind = "inference"
    assert resume_note(job).text == "attempt 2 starts new replicas"


def test_notebooks_get_no_job_identity(job):
    job.kind = "notebook"
    job.spec = {
        **job.spec,
        "notebook": {"flavor": "jupyter", "storage_gib": 10},
        "replica_groups": [{"name": "main", "replicas": 1, "accelerators": 1}],
    }
    job.save()
    assert "ZS_TOKEN" not in _env(job)


def _bearer(token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def test_job_token_reaches_only_its_own_run(world, job, runs):
    run = ensure_run_for_job(job)
    client = _bearer(job_token(job))
    ok = client.post(metrics_url(run), batch(range(5), loss=1.0), format="json")
    assert ok.status_code == 200, ok.json()
    ckpt = client.post(
        f"/api/v1/tenants/tenant-a/runs/{run.pk}/checkpoints/",
        {"step": 5, "path": "/ckpt/step_5", "rank": 0, "world_size": 1, "shard_bytes": 3},
        format="json",
    )
    assert ckpt.status_code == 201 and ckpt.json()["state"] == "complete"
    listed = client.get("/api/v1/tenants/tenant-a/runs/").json()["results"]
    assert [r["id"] for r in listed] == [run.pk]
    # another run of the same tenant (same owner's tenant) is invisible to the job token
    assert (
        client.post(metrics_url(runs.a), batch(range(5), loss=1.0), format="json").status_code
        == 404
    )
    # ... and so is the rest of the API
    assert client.get("/api/v1/tenants/tenant-a/jobs/").status_code == 401
    assert (
        client.post("/api/v1/tenants/tenant-a/runs/", {"name": "x"}, format="json").status_code
        == 403
    )
    assert MetricPoint.objects.count() == 5


def test_forged_and_expired_job_tokens_are_refused(job):
    run = ensure_run_for_job(job)
    forged = job_token(job)[:-4] + "0000"
    assert _bearer(forged).get(metrics_url(run)).status_code == 401
    other = f"zsj_{job.pk + 1}_{job_token(job).rsplit('_', 1)[1]}"
    assert _bearer(other).get(metrics_url(run)).status_code == 401
    Job.objects.filter(pk=job.pk).update(
        state=JobState.SUCCEEDED, finished_at=timezone.now() - timedelta(minutes=10)
    )
    assert _bearer(job_token(job)).get(metrics_url(run)).status_code == 200  # grace period
    Job.objects.filter(pk=job.pk).update(finished_at=timezone.now() - timedelta(hours=2))
    assert _bearer(job_token(job)).get(metrics_url(run)).status_code == 401


def test_checkpoint_conflicts_are_400(world, job, client_for):
    run = ensure_run_for_job(job)
    client = client_for(world.user("a", Role.MEMBER))
    url = f"/api/v1/tenants/tenant-a/runs/{run.pk}/checkpoints/"
    assert (
        client.post(url, {"step": 1, "path": "/c/1", "world_size": 2}, format="json").status_code
        == 201
    )
    clash = client.post(url, {"step": 1, "path": "/c/1", "rank": 1, "world_size": 4}, format="json")
    assert clash.status_code == 400 and "step" in clash.json()["errors"]
    bad = client.post(url, {"step": 2, "path": "/c/2", "rank": 2, "world_size": 2}, format="json")
    assert bad.status_code == 400 and "rank" in bad.json()["errors"]
    listed = client.get(url, {"state": "incomplete"}).json()
    assert [(c["step"], c["shards_done"], c["shards"]) for c in listed] == [(1, 1, 2)]
    assert Checkpoint.objects.count() == 1
    # an unknown state is a 400, not an empty list that reads as "no checkpoints"
    unknown = client.get(url, {"state": "done"})
    assert unknown.status_code == 400
    assert unknown.json()["errors"] == {"state": ["One of incomplete, complete, not 'done'."]}


def test_simulated_training_jobs_report_curves_and_checkpoints(job, settings):
    from apps.runs.models import MetricKey
    from apps.runs.simulate import simulate_training_metrics

    settings.CLUSTER_BACKEND = "simulated"
    Job.objects.filter(pk=job.pk).update(started_at=timezone.now() - timedelta(seconds=300))
    t = timezone.now()
    assert simulate_training_metrics(t, force=True) == 50 * 5
    for _ in range(12):
        simulate_training_metrics(t, force=True)
    run = Run.objects.get(job=job)
    loss = MetricKey.objects.get(run=run, name="loss")
    assert loss.last_step == 600 and loss.count == 601  # 300 s x 2 steps/s, then caught up
    series = MetricPoint.objects.filter(key=loss).order_by("step").values_list("value", flat=True)
    values = list(series)
    assert values[0] > 8 and values[-1] < values[0] - 3  # decaying
    assert simulate_training_metrics(t, force=True) == 0  # nothing new at the same time
    ckpt = newest_complete_checkpoint(job)
    assert ckpt is not None and ckpt.step == 500 and ckpt.path.startswith("sim://")
    # Asked for a checkpoint, the simulated job saves one at its next step.
    assert request_checkpoint(run=run, reason="test")
    run.refresh_from_db()
    simulate_training_metrics(t + timedelta(seconds=1), force=True)
    asked = checkpoint_request(run)
    assert asked is not None and asked.served_by is not None and asked.served_by.step == 602
    assert newest_complete_checkpoint(job).step == 602  # type: ignore[union-attr]
    settings.CLUSTER_BACKEND = "kubernetes"
    assert simulate_training_metrics(t + timedelta(seconds=60), force=True) == 0


def test_the_simulator_steps_aside_when_the_jobs_own_process_reports(job, settings):
    from apps.runs.models import MetricKey
    from apps.runs.simulate import simulate_training_metrics

    settings.CLUSTER_BACKEND = "simulated"
    Job.objects.filter(pk=job.pk).update(started_at=timezone.now() - timedelta(seconds=60))
    t = timezone.now()
    assert simulate_training_metrics(t, force=True) > 0
    run = Run.objects.get(job=job)
    assert run.simulated  # labelled: these curves are made up
    assert MetricKey.objects.get(run=run, name="loss").last_step == 49

    # The SDK, run from outside for this job, reports steps the simulator already wrote.
    sent = _bearer(job_token(job)).post(
        metrics_url(run), batch(range(3), loss=100.0), format="json"
    )
    assert sent.status_code == 200 and sent.json()["stored"] == 3, sent.json()
    run.refresh_from_db()
    assert not run.simulated
    assert list(MetricKey.objects.filter(run=run).values_list("name", flat=True)) == ["loss"]
    values = MetricPoint.objects.filter(key__run=run).order_by("step").values_list("value", "step")
    assert list(values) == [(100.0, 0), (101.0, 1), (102.0, 2)]  # its own numbers, not ours
    assert simulate_training_metrics(t + timedelta(seconds=30), force=True) == 0


def test_a_jobs_run_ends_with_its_job(job):
    from apps.jobs.services import transition
    from apps.runs.models import RunState

    run = ensure_run_for_job(job)
    assert run.state == RunState.RUNNING
    transition(job, JobState.RESTARTING, reason="NodeFailed")
    run.refresh_from_db()
    assert run.state == RunState.RUNNING  # it will resume: the same run goes on
    transition(job, JobState.CANCELLED, reason="Cancelled")
    run.refresh_from_db()
    assert run.state == RunState.CANCELLED


@pytest.mark.parametrize(("job_end", "run_end"), [("succeeded", "finished"), ("failed", "failed")])
def test_a_finished_or_failed_job_finishes_or_fails_its_run(job, job_end, run_end):
    from apps.jobs.services import transition

    run = ensure_run_for_job(job)
    transition(job, JobState(job_end), reason="Exited")
    run.refresh_from_db()
    assert run.state == run_end
