"""Read-only fields on one's own objects: a body that sets tenant, owner, state or usage is
accepted only for its writable fields; the server's values stand."""

from __future__ import annotations

from typing import Any

import pytest

from apps.jobs.models import Job
from apps.quotas.models import Quota
from apps.tenancy.models import Role
from tests.conftest import World
from tests.jobs.conftest import Cluster, training_body

pytestmark = pytest.mark.django_db


def test_job_submit_cannot_set_tenant_owner_state_or_usage(
    world: World, client_for: Any, cluster: Cluster
) -> None:
    member = world.user("a", Role.MEMBER)
    other = world.user("a", Role.TENANT_ADMIN)
    client = client_for(member)
    url = "/api/v1/tenants/tenant-a/jobs/"
    # tenant is not a job field at all: refused, nothing created
    moved = client.post(url, {**training_body(cluster.pool), "tenant": "tenant-b"}, format="json")
    assert moved.status_code == 400 and "tenant" in moved.json()["errors"]
    assert not Job.objects.exists()
    forged = {
        "owner": other.username,
        "state": "running",
        "state_reason": "forged",
        "attempt": 7,
        "failures": 3,
        "requested_devices": 1,
        "requested_milli": 1,
        "started_at": "2026-01-01T00:00:00Z",
        "queue_position": 1,
    }
    response = client.post(url, {**training_body(cluster.pool), **forged}, format="json")
    assert response.status_code == 201, response.json()
    job = Job.objects.get(pk=response.json()["id"])
    assert job.tenant == world.tenant_a and job.owner == member
    assert job.state == "queued" and job.state_reason != "forged"
    assert (job.attempt, job.failures, job.started_at) == (0, 0, None)
    assert job.requested_devices == 16  # from the replica groups, not the body


def test_quota_used_is_not_writable(world: World, client_for: Any, cluster: Cluster) -> None:
    quota = Quota.objects.get(tenant=world.tenant_a)
    admin = client_for(world.platform_admin)
    response = admin.patch(
        f"/api/v1/quotas/{quota.pk}/", {"used": 999, "updated_at": "2020-01-01T00:00:00Z"}
    )
    assert response.status_code == 200, response.json()
    listed = admin.get("/api/v1/quotas/").json()
    assert [q["used"] for q in listed if q["id"] == quota.pk] == [0]
    quota.refresh_from_db()
    assert str(quota.updated_at.year) != "2020"
