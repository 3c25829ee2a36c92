"""The embedded simulated cluster survives a process restart: running work is re-adopted."""

from __future__ import annotations

import pytest

from apps.clusters import registry
from apps.jobs.models import Job
from apps.jobs.relay import reconcile, relay
from apps.scheduling.loop import run_cycle
from apps.tenancy.models import Role
from tests.conftest import World
from tests.jobs.conftest import Cluster, training_body

pytestmark = pytest.mark.django_db


def test_running_jobs_are_readopted_after_restart(world: World, client_for, cluster: Cluster):
    client = client_for(world.user("a", Role.MEMBER))
    body = training_body(cluster.pool, env={"ZS_SIM_DURATION_S": "3600"})
    job_id = client.post("/api/v1/tenants/tenant-a/jobs/", body, format="json").json()["id"]
    run_cycle()
    relay()
    cluster.clock.advance(6)
    reconcile()
    assert Job.objects.get(pk=job_id).state == "running"

    registry.set_backend(None)  # the process restarts: a new simulated cluster from the DB
    fresh = registry.get_backend()
    assert fresh is not cluster.backend
    assert fresh.job_ids() == {job_id}  # type: ignore[attr-defined]
    statuses, _ = fresh.list_status()
    assert [(s.job_id, s.phase) for s in statuses] == [(job_id, "running")]
    reconcile(grace_s=0)
    job = Job.objects.get(pk=job_id)
    assert (job.state, job.failures) == ("running", 0)
