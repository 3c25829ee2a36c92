"""Who may cancel a job (its owner, tenant admins, platform admins), and a repeat cancel that
changes nothing records nothing."""

from __future__ import annotations

import pytest

from apps.audit.models import AuditEntry
from apps.jobs.models import Job
from apps.tenancy.models import Role
from tests.conftest import World
from tests.jobs.conftest import Cluster, training_body

pytestmark = pytest.mark.django_db
JOBS = "/api/v1/tenants/tenant-a/jobs/"


def _submit(client, cluster: Cluster, name: str, priority: int = 4) -> int:
    body = training_body(cluster.pool, name=name, priority=priority)
    response = client.post(JOBS, body, format="json")
    assert response.status_code == 201, response.json()
    return int(response.json()["id"])


def _cancel_entries(job: int) -> int:
    return AuditEntry.objects.filter(
        object_type="jobs.job", object_id=str(job), action="update"
    ).count()


def test_a_member_cannot_cancel_someone_elses_job(world: World, client_for, cluster) -> None:
    admin = client_for(world.user("a", Role.TENANT_ADMIN))
    job = _submit(admin, cluster, "p0-run", priority=0)
    bob = client_for(world.user("a", Role.MEMBER))
    response = bob.post(f"{JOBS}{job}/cancel/")
    assert response.status_code == 403
    assert response.json()["detail"] == "Only the job's owner or a tenant admin can cancel it."
    assert Job.objects.get(pk=job).state == "queued" and _cancel_entries(job) == 0
    assert client_for(world.user("a", Role.VIEWER)).post(f"{JOBS}{job}/cancel/").status_code == 403


@pytest.mark.parametrize("who", ["owner", "tenant_admin", "platform_admin"])
def test_owner_and_admins_cancel(world: World, client_for, cluster, who: str) -> None:
    owner = world.user("a", Role.MEMBER)
    job = _submit(client_for(owner), cluster, "sft")
    actor = {"owner": owner, "tenant_admin": world.user("a", Role.TENANT_ADMIN),
             "platform_admin": world.platform_admin}[who]  # fmt: skip
    response = client_for(actor).post(f"{JOBS}{job}/cancel/")
    assert response.status_code == 200 and response.json()["state"] == "cancelled"
    assert _cancel_entries(job) == 1


def test_a_second_cancel_records_no_empty_update(world: World, client_for, cluster) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    job = _submit(client, cluster, "sft")
    assert client.post(f"{JOBS}{job}/cancel/").status_code == 200
    entry = AuditEntry.objects.get(object_type="jobs.job", object_id=str(job), action="update")
    assert entry.before is not None and entry.after is not None
    assert (entry.before["state"], entry.after["state"]) == ("queued", "cancelled")
    again = client.post(f"{JOBS}{job}/cancel/")
    assert again.status_code == 200 and again.json()["state"] == "cancelled"
    assert _cancel_entries(job) == 1
