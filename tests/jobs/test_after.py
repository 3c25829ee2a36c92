"""Jobs that start after others: the whole path on the simulated cluster (submit, wait with a
reason, released when the jobs before succeed, cancelled when one fails), the API's checks,
and the queue's time limit, which runs only once the job is let in."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from apps.governance.models import QueueFlag
from apps.governance.services import sweep
from apps.jobs import after
from apps.jobs.models import Job, JobEvent, JobState
from apps.jobs.services import transition
from apps.scheduling import apply, core, forecast
from apps.scheduling.core.text import Items, say
from apps.tenancy.models import Role
from tests.conftest import World
from tests.jobs.conftest import Cluster, notebook_body, tick, training_body

pytestmark = pytest.mark.django_db
ONE_NODE = [{"name": "worker", "replicas": 1, "accelerators": 8}]


def _submit(client: Any, cluster: Cluster, name: str, **overrides: Any) -> Any:
    body = training_body(cluster.pool, name=name, replica_groups=ONE_NODE,
                         topology={"mode": "none"}, **overrides)  # fmt: skip
    return client.post("/api/v1/tenants/tenant-a/jobs/", body, format="json")


def _job(client: Any, cluster: Cluster, name: str, **overrides: Any) -> Job:
    response = _submit(client, cluster, name, **overrides)
    assert response.status_code == 201, response.json()
    return Job.objects.get(pk=response.json()["id"])


def _state(job: Job) -> str:
    return Job.objects.get(pk=job.pk).state


def test_a_pipeline_runs_in_order(world: World, cluster: Cluster, client_for) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    prep = _job(client, cluster, "prep", env={"ZS_SIM_DURATION_S": "60"}, max_runtime_s=3600)
    train = _job(client, cluster, "train", after=[prep.pk], env={"ZS_SIM_DURATION_S": "60"})
    evaluate = _job(client, cluster, "eval", after=[train.pk, prep.pk])
    assert (train.waiting_for_jobs, evaluate.waiting_for_jobs) == (True, True)
    tick(cluster)
    tick(cluster, 10)  # past the simulated start-up
    # The pool has room for all three, but only prep runs.
    assert [_state(j) for j in (prep, train, evaluate)] == ["running", "queued", "queued"]
    waiting = Job.objects.get(pk=evaluate.pk)
    assert waiting.pending_code == "after"
    # Not competing for room, so no place in the queue ("position 1" would say it is next).
    assert Job.objects.get(pk=train.pk).queue_position is None
    assert waiting.queue_position is None
    assert waiting.pending_message == f"starts after job(s) {prep.pk}, {train.pk} succeed"
    assert waiting.pending_detail == [
        {"key": "afterJobs", "args": {"jobs": {"items": [str(prep.pk), str(train.pk)]}}}
    ]
    # The forecast starts train when prep reaches its declared end (1 h from its admission);
    # eval follows train, which declares no limit, so it has no estimate.
    forecast.refresh(timezone.now())
    admitted = Job.objects.get(pk=prep.pk).admitted_at
    assert admitted is not None
    assert Job.objects.get(pk=train.pk).expected_start_at == admitted + timedelta(hours=1)
    assert Job.objects.get(pk=evaluate.pk).expected_start_at is None

    cluster.clock.advance(120)
    tick(cluster)  # prep succeeds (read back after the cycle)
    assert (_state(prep), _state(train)) == ("succeeded", "queued")
    tick(cluster)
    assert _state(train) == "dispatching"  # let in and placed in the same cycle
    train_row = Job.objects.get(pk=train.pk)
    assert train_row.released_at is not None and not train_row.waiting_for_jobs
    assert JobEvent.objects.filter(job=train, reason="Released", message_key="afterMet").exists()
    waiting = Job.objects.get(pk=evaluate.pk)  # still waits, now for train alone
    assert waiting.pending_message == f"starts after job(s) {train.pk} succeed"

    cluster.clock.advance(120)
    tick(cluster)
    tick(cluster)
    assert [_state(j) for j in (prep, train, evaluate)] == [
        "succeeded", "succeeded", "dispatching",
    ]  # fmt: skip
    body = client.get(f"/api/v1/tenants/tenant-a/jobs/{evaluate.pk}/").json()
    assert body["after_jobs"] == [
        {"id": prep.pk, "name": "prep", "state": "succeeded"},
        {"id": train.pk, "name": "train", "state": "succeeded"},
    ]
    assert body["waiting_for_jobs"] is False and body["released_at"] is not None
    assert body["next_jobs"] == []
    # And the other way: what starts after prep, in the list too (one query for all).
    rows = client.get("/api/v1/tenants/tenant-a/jobs/").json()["results"]
    next_jobs = {row["id"]: row["next_jobs"] for row in rows}
    assert next_jobs[prep.pk] == [
        {"id": train.pk, "name": "train", "state": "succeeded"},
        {"id": evaluate.pk, "name": "eval", "state": "dispatching"},
    ]
    assert next_jobs[train.pk] == [{"id": evaluate.pk, "name": "eval", "state": "dispatching"}]


def test_a_failure_cancels_what_comes_after(world: World, cluster: Cluster, client_for) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    prep = _job(client, cluster, "prep", env={"ZS_SIM_FAIL": "1", "ZS_SIM_DURATION_S": "30"},
                max_retries=0)  # fmt: skip
    train = _job(client, cluster, "train", after=[prep.pk])
    evaluate = _job(client, cluster, "eval", after=[train.pk])
    tick(cluster)
    cluster.clock.advance(60)
    tick(cluster)
    assert _state(prep) == "failed"
    tick(cluster)  # train is cancelled; eval, which starts after train, the cycle after
    tick(cluster)
    assert [_state(j) for j in (train, evaluate)] == ["cancelled", "cancelled"]
    events = {
        e.job_id: e
        for e in JobEvent.objects.filter(reason="DependencyFailed", job__in=[train, evaluate])
    }
    assert events[train.pk].message == (
        f"job #{prep.pk} (prep) failed, so this job, which starts after it, never will"
    )
    assert events[train.pk].message_key == "afterFailed"
    assert events[evaluate.pk].message_key == "afterCancelled"
    assert events[evaluate.pk].message_args == {"job": train.pk, "name": "train"}


def test_a_job_named_after_one_that_fails_later_is_still_cancelled(
    world: World, cluster: Cluster, client_for
) -> None:
    """The check is the cycle's, not the failure's: a job submitted while the one before it
    was ending (accepted, then that one failed) is cancelled, never left waiting."""
    client = client_for(world.user("a", Role.MEMBER))
    prep = _job(client, cluster, "prep")
    train = _job(client, cluster, "train", after=[prep.pk])
    transition(prep, JobState.CANCELLED, reason="Cancelled")
    assert after.settle(timezone.now()) == after.Settled(released=0, cancelled=1, waiting=0)
    assert _state(train) == "cancelled"


def test_the_api_refuses_what_could_never_start(world: World, cluster: Cluster, client_for) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    other = client_for(world.user("b", Role.MEMBER))
    theirs = other.post(
        "/api/v1/tenants/tenant-b/jobs/", training_body(cluster.pool, name="theirs"), format="json"
    ).json()["id"]
    notebook = client.post("/api/v1/tenants/tenant-a/jobs/", notebook_body(cluster),
                           format="json").json()["id"]  # fmt: skip
    failed = _job(client, cluster, "broken")
    transition(failed, JobState.FAILED, reason="Failed")
    missing = failed.pk + 1000
    response = _submit(client, cluster, "next", after=[theirs, missing, notebook, failed.pk])
    assert response.status_code == 400, response.json()
    assert response.json()["errors"]["after"] == [
        f"No job #{theirs} in this tenant.",  # the same words as for one that does not exist
        f"No job #{missing} in this tenant.",
        f"Job #{notebook} is not a training job: only a training job ends by succeeding, so "
        "nothing can start after it.",
        f"Job #{failed.pk} (broken) is failed: a job after it would never start.",
    ]
    too_many = _submit(client, cluster, "next", after=list(range(1, after.MAX_AFTER + 2)))
    assert too_many.status_code == 400 and "after" in too_many.json()["errors"]
    assert not Job.objects.filter(name="next").exists()
    # Chinese for a Chinese reader, like the API's other sentences.
    client.cookies["zs_lang"] = "zh"
    zh = _submit(client, cluster, "next", after=[missing])
    assert zh.json()["errors"]["after"] == [f"该租户中没有作业 #{missing}。"]
    client.cookies["zs_lang"] = "en"

    # Repeated ids count once; a job whose predecessors all succeeded already just queues.
    done = _job(client, cluster, "done")
    transition(done, JobState.ADMITTED, reason="Admitted")
    transition(done, JobState.DISPATCHING, reason="Dispatching")
    transition(done, JobState.SUCCEEDED, reason="Succeeded")
    job = _job(client, cluster, "next", after=[done.pk, done.pk])
    assert list(job.after.values_list("pk", flat=True)) == [done.pk]
    assert not job.waiting_for_jobs


def test_the_max_wait_runs_from_the_release(world: World, cluster: Cluster, client_for) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    prep = _job(client, cluster, "prep")
    train = _job(client, cluster, "train", after=[prep.pk], max_wait_s=600)
    Job.objects.filter(pk=train.pk).update(state_changed_at=timezone.now() - timedelta(hours=2))
    sweep()
    assert not QueueFlag.objects.filter(job=train).exists()  # waiting for prep is not queueing
    transition(prep, JobState.ADMITTED, reason="Admitted")
    transition(prep, JobState.DISPATCHING, reason="Dispatching")
    transition(prep, JobState.SUCCEEDED, reason="Succeeded")
    after.settle(timezone.now() - timedelta(minutes=5))
    sweep()
    assert not QueueFlag.objects.filter(job=train).exists()  # 5 of its 10 minutes
    Job.objects.filter(pk=train.pk).update(released_at=timezone.now() - timedelta(minutes=11))
    sweep()
    assert QueueFlag.objects.filter(job=train).exists()


def test_the_queue_s_places_skip_jobs_waiting_for_others(
    world: World, cluster: Cluster, client_for
) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    jobs = [_job(client, cluster, name) for name in ("a", "b", "c", "d")]
    codes = [core.PendingCode.AFTER, core.PendingCode.CAPACITY, core.PendingCode.AFTER,
             core.PendingCode.CAPACITY]  # fmt: skip
    text = say("afterJobs", jobs=Items(("1",)))
    pending = tuple(
        core.PendingReason(str(j.pk), c, text) for j, c in zip(jobs, codes, strict=True)
    )
    apply._record_pending(core.Decisions((), (), (), pending, core.Fragmentation(8, 0, 0, 0, 0)))
    places = [Job.objects.get(pk=j.pk).queue_position for j in jobs]
    assert places == [None, 1, None, 2]
