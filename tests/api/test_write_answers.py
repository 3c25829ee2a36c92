"""What writes answer: the object as a read shows it, and a clear 409 (never a 500 or a
silent cascade) when a delete would take other objects with it.

Found by a deeper schemathesis run as a platform admin: a new cluster was answered without
its counts, an edited quota without ``used``, deleting a cluster its jobs' pools belong to
was a 500, and deleting a tenant failed on its own audit entry after cascading its jobs."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from apps.audit.models import AuditEntry
from apps.clusters.models import Cluster, ResourcePool
from apps.jobs.models import Job, JobKind, JobState
from apps.jobs.services import submit_job
from apps.quotas.models import Quota
from apps.tenancy.models import Role, Tenant
from tests.conftest import World
from tests.factories import make_node, make_pool, make_running

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]

SPEC = {
    "image": "registry.example.com/ml/train:1",
    "command": ["python", "train.py"],
    "replica_groups": [{"name": "worker", "replicas": 1, "accelerators": 2}],
    "accelerator_models": ["A800"],
}


def _job(world: World, tenant: Tenant, pool: ResourcePool) -> Job:
    label = "a" if tenant == world.tenant_a else "b"
    return submit_job(tenant=tenant, owner=world.user(label, Role.MEMBER), name="sft",
                      kind=JobKind.TRAINING, pool=pool, priority=4, spec=SPEC)  # fmt: skip


def test_a_new_cluster_is_answered_with_its_counts(world: World, client_for) -> None:
    client = client_for(world.platform_admin)
    created = client.post("/api/v1/clusters/", {"name": "east", "kind": "simulated"})
    assert created.status_code == 201, created.json()
    body = created.json()
    assert (body["pools"], body["nodes"], body["gpus"]) == (0, 0, 0)
    assert body == client.get(f"/api/v1/clusters/{body['id']}/").json()
    # Its audit entry belongs to no tenant, and the platform's audit log says so (the schema
    # had the tenant as a string that is never null).
    logged = client.get("/api/v1/audit/").json()["results"]
    assert [(e["object_type"], e["tenant"]) for e in logged] == [("clusters.cluster", None)]
    schema = yaml.safe_load((ROOT / "openapi" / "schema.yaml").read_text())
    assert schema["components"]["schemas"]["AuditEntry"]["properties"]["tenant"]["nullable"]


def test_a_quota_read_or_edited_alone_says_what_its_tenant_holds(world: World, client_for) -> None:
    pool = make_pool()
    make_node(pool=pool, accelerator_count=8, accelerator_model="A800")
    quota = Quota.objects.create(tenant=world.tenant_a, pool=pool, accelerator_model="A800",
                                 guarantee=4, borrow_limit=0)  # fmt: skip
    make_running(_job(world, world.tenant_a, pool))
    _job(world, world.tenant_b, pool)  # queued, and another tenant's: not counted
    client = client_for(world.platform_admin)
    url = f"/api/v1/quotas/{quota.pk}/"
    read = client.get(url).json()
    patched = client.patch(url, {"guarantee": 6}, format="json")
    assert patched.status_code == 200, patched.json()
    listed = client.get("/api/v1/quotas/").json()
    assert (read["used"], patched.json()["used"], listed[0]["used"]) == (2.0, 2.0, 2.0)
    assert patched.json()["guarantee"] == 6
    own = client_for(world.user("a", Role.VIEWER)).get(
        f"/api/v1/tenants/tenant-a/quotas/{quota.pk}/"
    )
    assert own.json()["used"] == 2.0


def test_a_cluster_whose_pools_hold_jobs_is_not_deleted(world: World, client_for) -> None:
    pool = make_pool()
    _job(world, world.tenant_a, pool)
    client = client_for(world.platform_admin)
    refused = client.delete(f"/api/v1/clusters/{pool.cluster_id}/")
    assert refused.status_code == 409
    assert refused.json() == {
        "detail": f"Cluster '{pool.cluster.name}' cannot be deleted: it is still in use by 1 "
        "job. Remove or move them first."
    }
    assert Cluster.objects.filter(pk=pool.cluster_id).exists()
    assert not AuditEntry.objects.filter(action="delete").exists()
    # The dashboard's reader in Chinese hears it in Chinese, the job counted in its words.
    client.cookies["zs_lang"] = "zh"
    refused = client.delete(f"/api/v1/clusters/{pool.cluster_id}/")
    assert refused.json()["detail"] == (
        f"集群“{pool.cluster.name}”无法删除：1 个作业仍在使用它。请先删除或移走它们。"  # noqa: RUF001
    )
    del client.cookies["zs_lang"]
    empty = make_pool()
    assert client.delete(f"/api/v1/clusters/{empty.cluster_id}/").status_code == 204
    assert not Cluster.objects.filter(pk=empty.cluster_id).exists()


def test_a_tenant_with_unfinished_work_is_not_deleted(world: World, client_for) -> None:
    pool = make_pool()
    make_node(pool=pool)
    running = _job(world, world.tenant_b, pool)
    make_running(running)
    finished = _job(world, world.tenant_b, pool)
    Job.objects.filter(pk=finished.pk).update(state=JobState.SUCCEEDED)
    client = client_for(world.platform_admin)
    refused = client.delete("/api/v1/tenants/tenant-b/")
    assert refused.status_code == 409
    assert "still has 1 unfinished job " in refused.json()["detail"]
    assert Job.objects.filter(tenant=world.tenant_b).count() == 2

    Job.objects.filter(pk=running.pk).update(state=JobState.CANCELLED)
    assert client.delete("/api/v1/tenants/tenant-b/").status_code == 204
    assert not Tenant.objects.filter(slug="tenant-b").exists()
    # The audit entry outlives the tenant: it names it but does not point at the gone row
    # (it did, and the delete failed when the transaction committed).
    entry = AuditEntry.objects.get(object_type="tenancy.tenant", action="delete")
    assert entry.before is not None
    assert (entry.tenant_id, entry.object_repr, entry.before["slug"]) == (
        None,
        "tenant-b",
        "tenant-b",
    )
    # Tenant a is untouched.
    assert client.get("/api/v1/tenants/tenant-a/").status_code == 200


def test_only_platform_admins_delete_tenants(world: World, client_for) -> None:
    admin_b = client_for(world.user("b", Role.TENANT_ADMIN))
    assert admin_b.delete("/api/v1/tenants/tenant-b/").status_code == 403
    assert Tenant.objects.filter(slug="tenant-b").exists()


def test_a_nul_character_in_a_form_or_multipart_body_is_a_400(world: World, client_for) -> None:
    """JSON bodies were already refused; a form's ``tenant=te%00nt`` reached the slug lookup
    and PostgreSQL, a 500."""
    pool = make_pool()
    make_node(pool=pool)
    client = client_for(world.platform_admin)
    form = f"tenant=te%00nt&pool={pool.pk}&accelerator_model=A800&guarantee=1"
    posted = client.post("/api/v1/quotas/", form, content_type="application/x-www-form-urlencoded")
    assert posted.status_code == 400, posted.content
    assert "NUL" in posted.json()["detail"]
    body = {"tenant": "tenant-a", "pool": pool.pk, "accelerator_model": "A8\x0000"}
    multipart = client.post("/api/v1/quotas/", body, format="multipart")
    assert multipart.status_code == 400 and "NUL" in multipart.json()["detail"]
    assert not Quota.objects.exists()
    # The same form without the NUL is accepted.
    fine = form.replace("te%00nt", "tenant-a")
    ok = client.post("/api/v1/quotas/", fine, content_type="application/x-www-form-urlencoded")
    assert ok.status_code == 201, ok.content


@pytest.mark.parametrize(
    "url",
    [
        "/api/v1/telemetry/history/?series=cluster&end=0001-01-01T00:00:00Z",
        "/api/v1/tenants/tenant-a/usage/?end=0001-01-05T00:00:00Z",
        "/api/v1/tenants/tenant-a/governance/efficiency/?end=0001-01-05T00:00:00Z",
    ],
)
def test_a_window_ending_near_year_one_is_a_400(world: World, client_for, url: str) -> None:
    """The default start (an hour or 30 days before the end) overflowed: a 500."""
    response = client_for(world.user("a", Role.TENANT_ADMIN)).get(url)
    assert response.status_code == 400, response.content
    assert response.json()["errors"]["end"] == ["Must be between 1970-01-01 and 9000-01-01."]


def test_a_quota_created_without_amounts_gets_the_defaults(world: World, client_for) -> None:
    """Guarantee and borrowing limit may be left out (the schema says so); it was a 500."""
    pool = make_pool()
    make_node(pool=pool)
    body = {"tenant": "tenant-a", "pool": pool.pk, "accelerator_model": "A800"}
    created = client_for(world.platform_admin).post("/api/v1/quotas/", body, format="json")
    assert created.status_code == 201, created.content
    body = created.json()
    assert (body["guarantee"], body["borrow_limit"], body["weight"], body["used"]) == (0, 0, 1, 0.0)


def test_an_unknown_api_path_is_a_json_404(world: World, client_for) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    for path in ("/api/v1/nothing-here/", "/api/v1/tenants/te%00nant/jobs/", "/api/v2/"):
        response = client.get(path)
        assert response.status_code == 404
        assert response.json() == {"detail": "Not found."}
