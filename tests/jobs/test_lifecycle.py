"""A job's whole life on the simulated cluster: queued -> admitted -> dispatching -> running ->
succeeded, plus cancel, failure with retries, preemption, and the 'why pending' answers."""

from __future__ import annotations

import pytest

from apps.audit.models import AuditEntry
from apps.jobs.models import Allocation, Job, JobEvent, OutboxEntry
from apps.tenancy.models import Role
from tests.conftest import World
from tests.jobs.conftest import Cluster, tick, training_body

pytestmark = pytest.mark.django_db


def submit(client, tenant="tenant-a", **overrides):
    response = client.post(f"/api/v1/tenants/{tenant}/jobs/", overrides, format="json")
    assert response.status_code == 201, response.json()
    return response.json()


def states(job_id: int) -> list[str]:
    return [e.to_state for e in JobEvent.objects.filter(job_id=job_id).order_by("id")]


def test_training_job_runs_to_success(world: World, client_for, cluster: Cluster) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    job = submit(client, **training_body(cluster.pool))
    assert job["state"] == "queued" and job["requested_devices"] == 16
    tick(cluster)
    row = Job.objects.get(pk=job["id"])
    assert row.state == "dispatching"
    nodes = {a.node.leaf_switch for a in Allocation.objects.filter(job=row).select_related("node")}
    assert nodes == {"leaf0"} or nodes == {"leaf1"}  # soft leaf topology honoured: one leaf
    assert cluster.backend.job_ids() == {row.pk}
    tick(cluster, 6)
    assert Job.objects.get(pk=row.pk).state == "running"
    tick(cluster, 61)
    row.refresh_from_db()
    assert row.state == "succeeded" and row.finished_at is not None
    assert not Allocation.objects.filter(job=row).exists()
    assert states(row.pk) == ["queued", "admitted", "dispatching", "running", "succeeded"]
    assert AuditEntry.objects.filter(object_type="jobs.job", action="create").count() == 1


def test_cancel_running_job_deletes_its_workload(world, client_for, cluster) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    job = submit(client, **training_body(cluster.pool))
    tick(cluster, 0)
    tick(cluster, 6)
    response = client.post(f"/api/v1/tenants/tenant-a/jobs/{job['id']}/cancel/")
    assert response.status_code == 200 and response.json()["state"] == "cancelled"
    tick(cluster)
    assert cluster.backend.job_ids() == set()
    assert not Allocation.objects.exists()
    assert OutboxEntry.objects.filter(job_id=job["id"], action="delete", state="done").count() == 1


def test_failed_job_restarts_then_fails_after_its_retry_budget(world, client_for, cluster):
    client = client_for(world.user("a", Role.MEMBER))
    body = training_body(cluster.pool, env={"ZS_SIM_FAIL": "1", "ZS_SIM_DURATION_S": "10"})
    job = submit(client, max_retries=1, **body)
    for _ in range(8):
        tick(cluster, 20)
    row = Job.objects.get(pk=job["id"])
    assert row.state == "failed"
    assert row.failures == 1 and row.attempt == 1
    assert states(row.pk).count("restarting") == 1
    assert states(row.pk)[-1] == "failed"
    assert JobEvent.objects.filter(job=row, reason="RetriesExhausted").count() == 1
    assert cluster.backend.job_ids() == set() or row.pk in cluster.backend.job_ids()


def test_quota_limits_admission_and_pending_reason_says_why(world, client_for, cluster):
    client = client_for(world.user("a", Role.MEMBER))
    # tenant-a may hold 16 + 8 = 24 GPUs: the second 16-GPU job must wait on quota.
    first = submit(client, **training_body(cluster.pool, name="one"))
    second = submit(client, **training_body(cluster.pool, name="two"))
    tick(cluster)
    assert Job.objects.get(pk=first["id"]).state == "dispatching"
    waiting = client.get(f"/api/v1/tenants/tenant-a/jobs/{second['id']}/").json()
    assert waiting["state"] == "queued"
    assert waiting["pending_code"] == "quota"
    assert "over its limit of 24" in waiting["pending_message"]
    # The same reason as phrases, for the dashboard to say in the reader's language.
    [clause] = waiting["pending_detail"]
    assert clause["key"] == "overQuota"
    assert clause["args"]["tenant"] == "tenant-a" and clause["args"]["limit"] == "24"
    assert waiting["queue_position"] == 1


def test_high_priority_job_preempts_low_priority_work(world, client_for, cluster):
    member = client_for(world.user("b", Role.MEMBER))
    admin = client_for(world.user("b", Role.TENANT_ADMIN))
    low = [
        submit(member, "tenant-b", **training_body(cluster.pool, name=f"low{i}", priority=5,
               replica_groups=[{"name": "w", "replicas": 1, "accelerators": 8}]))
        for i in range(4)
    ]  # fmt: skip
    tick(cluster)
    tick(cluster, 6)
    assert Job.objects.filter(state="running").count() == 4  # the whole 32-GPU pool
    high = submit(admin, "tenant-b", **training_body(cluster.pool, name="urgent", priority=1,
                  replica_groups=[{"name": "w", "replicas": 1, "accelerators": 8}]))  # fmt: skip
    tick(cluster)
    victims = Job.objects.filter(pk__in=[j["id"] for j in low], events__reason="Preempted")
    assert victims.count() == 1
    for _ in range(3):
        tick(cluster, 6)
    assert Job.objects.get(pk=high["id"]).state == "running"
    victim = victims.get()
    assert victim.state == "queued" and victim.priority == 5 and victim.attempt == 1
    # The scheduler's reason in English, and as its phrase for the dashboard.
    preempted = JobEvent.objects.get(job=victim, reason="Preempted")
    assert preempted.message.startswith(f"preempted by job {high['id']} (P1, tenant 'tenant-b')")
    assert preempted.message_key == "preemptedBy"
    assert preempted.message_args["victimPriority"] == 5
    requeued = JobEvent.objects.get(job=victim, reason="Requeued")
    assert requeued.message == "attempt 1 starts from the beginning (no complete checkpoint yet)"
