"""A clone is a new submission: it meets the rules a new job meets, for the caller who clones."""

from __future__ import annotations

import pytest

from apps.clusters.models import Node
from apps.jobs.models import Job
from apps.tenancy.models import Role
from tests.conftest import World
from tests.jobs.conftest import Cluster, training_body

pytestmark = pytest.mark.django_db


def submit(client, body: dict[str, object]) -> int:
    response = client.post("/api/v1/tenants/tenant-a/jobs/", body, format="json")
    assert response.status_code == 201, response.json()
    return int(response.json()["id"])


def clone(client, job: int):
    return client.post(f"/api/v1/tenants/tenant-a/jobs/{job}/clone/")


def test_a_member_cannot_clone_a_high_priority_job_into_the_queue(
    world: World, client_for, cluster: Cluster
) -> None:
    admin = client_for(world.user("a", Role.TENANT_ADMIN))
    member = client_for(world.user("a", Role.MEMBER))
    urgent = submit(admin, training_body(cluster.pool, name="urgent", priority=1))
    before = Job.objects.count()

    refused = clone(member, urgent)
    assert refused.status_code == 400
    assert refused.json()["errors"]["priority"] == [
        "P1 may preempt other work; only tenant admins can submit P0-P2. "
        "Submit a copy at P3 or lower instead."
    ]
    assert Job.objects.count() == before  # nothing was queued

    copy = clone(admin, urgent)  # the tenant admin may
    assert copy.status_code == 201 and copy.json()["priority"] == 1
    routine = submit(member, training_body(cluster.pool, name="routine", priority=4))
    mine = clone(member, routine)
    assert mine.status_code == 201 and mine.json()["owner"] == "a-member"


def test_a_clone_is_checked_against_the_pool_as_it_is_now(
    world: World, client_for, cluster: Cluster
) -> None:
    member = client_for(world.user("a", Role.MEMBER))
    big = submit(member, training_body(cluster.pool, name="big", replica_groups=[
        {"name": "w", "replicas": 4, "accelerators": 8}]))  # fmt: skip
    Node.objects.filter(name="n3").delete()  # a server left the pool since

    refused = clone(member, big)
    assert refused.status_code == 400
    assert refused.json()["errors"]["replica_groups"] == [
        "The job asks for 32 accelerators; pool train has 24."
    ]
