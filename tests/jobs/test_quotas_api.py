"""Quota editing: guarantees can never add up to more than the pool has; tenants read their own."""

from __future__ import annotations

import pytest

from apps.audit.models import AuditEntry
from apps.jobs.models import Job
from apps.quotas.models import Quota
from apps.quotas.tasks import sync_queues
from apps.tenancy.models import Role
from tests.conftest import World
from tests.jobs.conftest import Cluster

pytestmark = pytest.mark.django_db


def test_guarantees_cannot_exceed_pool_capacity(world: World, client_for, cluster: Cluster):
    admin = client_for(world.platform_admin)
    quota = Quota.objects.get(tenant=world.tenant_a)
    # Pool has 32 GPUs; tenant-b holds a guarantee of 16, so tenant-a may have at most 16.
    response = admin.patch(f"/api/v1/quotas/{quota.pk}/", {"guarantee": 17}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"]["guarantee"] == [
        f"Guarantees in {cluster.pool.name} for A800 would total 33, but the pool has 32 "
        "(16 left to guarantee)."
    ]
    quota.refresh_from_db()
    assert quota.guarantee == 16
    ok = admin.patch(f"/api/v1/quotas/{quota.pk}/", {"guarantee": 12, "borrow_limit": 20})
    assert ok.status_code == 200, ok.json()
    entry = AuditEntry.objects.get(object_type="quotas.quota", action="update")
    assert entry.before is not None and entry.after is not None
    assert (entry.before["guarantee"], entry.after["guarantee"]) == (16, 12)


def test_unknown_model_and_duplicate_quota_are_400(world: World, client_for, cluster: Cluster):
    admin = client_for(world.platform_admin)
    body = {"tenant": "tenant-a", "pool": cluster.pool.pk, "accelerator_model": "H100",
            "guarantee": 1}  # fmt: skip
    response = admin.post("/api/v1/quotas/", body, format="json")
    assert response.status_code == 400
    assert "accelerator_model" in response.json()["errors"]
    body["accelerator_model"] = "A800"
    assert admin.post("/api/v1/quotas/", body, format="json").status_code == 400
    assert Quota.objects.count() == 2


def test_tenants_read_only_their_own_quotas(world: World, client_for, cluster: Cluster):
    member = client_for(world.user("a", Role.MEMBER))
    rows = member.get("/api/v1/tenants/tenant-a/quotas/").json()
    assert [(q["tenant"], q["guarantee"], q["used"]) for q in rows] == [("tenant-a", 16, 0.0)]
    assert member.get("/api/v1/quotas/").status_code == 403
    assert member.get("/api/v1/tenants/tenant-b/quotas/").status_code == 404
    quota = Quota.objects.get(tenant=world.tenant_a)
    denied = client_for(world.user("a", Role.TENANT_ADMIN)).patch(
        f"/api/v1/quotas/{quota.pk}/", {"guarantee": 1}, format="json"
    )
    assert denied.status_code == 403
    quota.refresh_from_db()
    assert quota.guarantee == 16


def test_quotas_become_cluster_queues(world: World, cluster: Cluster):
    assert sync_queues() == 2
    name = f"zs-tenant-a-{cluster.pool.name}"
    assert cluster.backend.queues[name] == ({"nvidia.com/gpu": 16}, {"nvidia.com/gpu": 24})


def test_invalid_job_specs_are_400_with_field_errors(world: World, client_for, cluster: Cluster):
    from tests.jobs.conftest import training_body

    client = client_for(world.user("a", Role.MEMBER))
    cases: list[tuple[dict[str, object], str]] = [
        ({"accelerator_model": "H100"}, "accelerator_model"),
        ({"image": "Not An Image!"}, "image"),
        ({"replica_groups": [{"name": "w", "replicas": 5, "accelerators": 8}]}, "replica_groups"),
        ({"replica_groups": [{"name": "w", "accelerators": 9}]}, "replica_groups"),
        ({"replica_groups": []}, "replica_groups"),
        ({"priority": 1}, "priority"),
        ({"priority": 9}, "priority"),
        ({"env": {"1BAD": "x"}}, "env"),
        ({"kind": "notebook"}, "replica_groups"),
        ({"topology": {"mode": "strict"}}, "topology"),
        ({"pool": 999999}, "pool"),
    ]
    for override, field in cases:
        body = {**training_body(cluster.pool), **override}
        response = client.post("/api/v1/tenants/tenant-a/jobs/", body, format="json")
        assert response.status_code == 400, (override, response.content)
        assert field in response.json()["errors"], (override, response.json())
    assert not Job.objects.filter(tenant=world.tenant_a).exists()
