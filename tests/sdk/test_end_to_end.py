"""The SDK against the real API on a live server: a job's token, metrics, checkpoints."""

from __future__ import annotations

import time

import numpy as np
import pytest
import zhisuan
from zhisuan import checkpoint as ck

from apps.jobs import workload
from apps.jobs.models import Job, JobState
from apps.runs.models import Checkpoint, CheckpointState, MetricKey, MetricPoint, Run
from apps.runs.selectors import newest_complete_checkpoint
from apps.runs.services import request_checkpoint
from apps.tenancy.models import Role
from tests.factories import make_node, make_pool
from tests.sdk.conftest import present

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("sdk_env")]


def _running_job_env(world, live_server, monkeypatch) -> Job:
    """A running training job, with this process's environment set to what the platform
    gives its pod (pointing at the live server)."""
    pool = make_pool(name="train")
    make_node(pool=pool, name="n0")
    job = Job.objects.create(
        tenant=world.tenant_a, owner=world.user("a", Role.MEMBER), name="llama", kind="training",
        pool=pool, state=JobState.RUNNING,
        spec={"image": "pytorch:2", "replica_groups": [{"name": "w", "replicas": 1}]},
    )  # fmt: skip
    env = dict(workload.build(job).replica_groups[0].env)
    env["ZS_API_URL"] = live_server.url
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return job


def test_a_job_reports_metrics_and_checkpoints_through_the_sdk(
    world, live_server, monkeypatch, tmp_path
):
    job = _running_job_env(world, live_server, monkeypatch)

    run = zhisuan.init(config={"lr": 3e-4})
    for step in range(1, 301):
        zhisuan.log(step, loss=10.0 / step, lr=3e-4)
    assert run.flush(20), run.stats
    # the same steps again (a restarted attempt re-logging) store nothing new
    for step in range(1, 301):
        zhisuan.log(step, loss=99.0)
    assert run.flush(20)

    saver = ck.Checkpointer(str(tmp_path), rank=0, world_size=1)
    saver.save({"w": np.arange(1000, dtype=np.float32), "step": 300}, 300)
    saver.wait()
    zhisuan.finish(timeout_s=10)

    db_run = Run.objects.get(job=job)
    assert db_run.config == {"lr": 3e-4}
    loss = MetricKey.objects.get(run=db_run, name="loss")
    assert (loss.count, loss.first_step, loss.last_step, loss.last_value) == (300, 1, 300, 10 / 300)
    assert MetricPoint.objects.filter(key=loss).count() == 300
    assert run.stats.dropped_rejected == 0
    ckpt = Checkpoint.objects.get(run=db_run)
    assert ckpt.state == CheckpointState.COMPLETE and ckpt.step == 300
    assert newest_complete_checkpoint(job) == ckpt
    # a restart of this job resumes from it
    restarted = dict(workload.build(job).replica_groups[0].env)
    assert restarted["ZS_RESUME_FROM"] == str(ck.step_dir(tmp_path, 300).resolve())
    monkeypatch.setenv("ZS_RESUME_FROM", restarted["ZS_RESUME_FROM"])
    assert present(ck.resume()).state["step"] == 300


def test_the_sdk_hears_a_checkpoint_request_once_until_a_checkpoint_serves_it(
    world, live_server, monkeypatch, tmp_path
):
    job = _running_job_env(world, live_server, monkeypatch)
    run = zhisuan.init()
    zhisuan.log(1, loss=1.0)
    assert run.flush(20)
    assert not zhisuan.checkpoint_requested()

    request_checkpoint(run=Run.objects.get(job=job), reason="idle GPUs: stops at 12:00 UTC")
    assert not zhisuan.checkpoint_requested()  # heard only with the next metrics answer
    zhisuan.log(2, loss=0.9)
    assert run.flush(20)
    assert run.checkpoint_request_reason == "idle GPUs: stops at 12:00 UTC"
    assert zhisuan.checkpoint_requested()
    zhisuan.log(3, loss=0.8)
    assert run.flush(20)
    assert not zhisuan.checkpoint_requested()  # once per request, though still pending

    saver = ck.Checkpointer(str(tmp_path), rank=0, world_size=1)
    saver.save({"step": 3}, 3)
    saver.wait()
    zhisuan.log(4, loss=0.7)
    assert run.flush(20)
    assert run.checkpoint_request_reason == "" and not zhisuan.checkpoint_requested()
    zhisuan.finish(timeout_s=10)


def test_a_run_that_logs_nothing_still_hears_a_checkpoint_request(
    world, live_server, monkeypatch, tmp_path
):
    job = _running_job_env(world, live_server, monkeypatch)
    monkeypatch.setenv("ZS_CHECKPOINT_POLL_S", "0.2")
    run = zhisuan.init()
    request_checkpoint(run=Run.objects.get(job=job), reason="runtime limit at 12:00 UTC")
    deadline = time.monotonic() + 15
    while not zhisuan.checkpoint_requested():  # no metrics are logged: the SDK asks
        assert time.monotonic() < deadline, "the request was never heard"
        time.sleep(0.05)
    assert run.checkpoint_request_reason == "runtime limit at 12:00 UTC"
    assert not zhisuan.checkpoint_requested()  # once per request
    zhisuan.finish(timeout_s=10)
