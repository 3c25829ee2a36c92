"""Job logs: simulated output, the collector that copies it into the database, and the API."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from apps.clusters.backends.simcurves import training_point
from apps.jobs import logs
from apps.jobs.models import Job, JobLogFollow, JobLogLine
from apps.tenancy.models import Role
from tests.conftest import World
from tests.jobs.conftest import Cluster, tick, training_body
from tests.jobs.test_lifecycle import submit

pytestmark = pytest.mark.django_db


def _logs(client: Any, job_id: int, tenant: str = "tenant-a", **params: Any) -> Any:
    return client.get(f"/api/v1/tenants/{tenant}/jobs/{job_id}/logs/", params)


def test_running_job_output_is_collected_once_and_served(
    world: World, client_for, cluster: Cluster
):
    client = client_for(world.user("a", Role.MEMBER))
    job = submit(client, **training_body(cluster.pool))
    tick(cluster, 0)
    tick(cluster, 6)  # started at t=5
    assert Job.objects.get(pk=job["id"]).state == "running"
    cluster.clock.advance(25)  # progress lines at t=15 and t=25 for each of 2 replicas
    assert logs.collect() == 0  # nobody reads it: the running job is not followed
    assert _logs(client, job["id"]).json()["lines"] == []  # a reader: followed from now on
    assert logs.collect() == 2 * 4  # pull + start + 2 progress lines per replica
    assert logs.collect() == 0  # nothing new: no duplicates

    body = _logs(client, job["id"]).json()
    assert body["source"] == "simulated" and body["truncated"] is False
    texts = [line["text"] for line in body["lines"]]
    assert len(texts) == 8 and all(t.startswith("[simulated]") for t in texts)
    assert [line["ts"] for line in body["lines"]] == sorted(line["ts"] for line in body["lines"])
    assert {line["replica"] for line in body["lines"]} == {
        f"zs-train-{job['id']}-worker-0",
        f"zs-train-{job['id']}-worker-1",
    }
    # The log tells the curve's story: the step the chart has at that time, the same loss.
    loss = training_point(job["id"], 16, 40)["loss"]
    assert f"step 40 loss {loss:.4f}" in texts[-1]

    cluster.clock.advance(10)
    assert logs.collect() == 2  # only the new progress line of each replica (still followed)
    tail = _logs(client, job["id"], tail=3).json()
    assert tail["truncated"] is True and len(tail["lines"]) == 3
    assert "step 60 " in tail["lines"][-1]["text"]
    since = _logs(client, job["id"], since=body["lines"][-1]["ts"]).json()
    assert len(since["lines"]) == 2

    JobLogFollow.objects.update(until=timezone.now() - timedelta(seconds=1))  # reader gone
    cluster.clock.advance(10)
    assert logs.collect() == 0


def test_failed_attempt_keeps_its_last_lines(world: World, client_for, cluster: Cluster):
    client = client_for(world.user("a", Role.MEMBER))
    job = submit(client, **training_body(cluster.pool, env={"ZS_SIM_FAIL": "1"}, max_retries=0))
    tick(cluster, 0)
    tick(cluster, 6)
    tick(cluster, 61)  # ends failed at t=65; the relay deletes its objects
    row = Job.objects.get(pk=job["id"])
    assert row.state == "failed"
    assert cluster.backend.job_ids() == set()  # the pods are gone ...
    texts = list(JobLogLine.objects.filter(job=row).values_list("text", flat=True))
    assert texts[-1] == "[simulated] process exited with code 1"  # ... their output is not


def test_logs_are_tenant_scoped_and_validated(world: World, client_for, cluster: Cluster):
    job = submit(client_for(world.user("a", Role.MEMBER)), **training_body(cluster.pool))
    other = client_for(world.user("b", Role.TENANT_ADMIN))
    assert _logs(other, job["id"]).status_code == 404
    assert _logs(other, job["id"], tenant="tenant-b").status_code == 404
    viewer = client_for(world.user("a", Role.VIEWER))
    assert _logs(viewer, job["id"]).status_code == 200
    bad = _logs(viewer, job["id"], tail=0, since="yesterday")
    assert bad.status_code == 400
    assert set(bad.json()["errors"]) == {"tail", "since"}
