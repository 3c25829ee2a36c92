"""Tenant isolation and role enforcement across every tenant-scoped endpoint."""

from __future__ import annotations

import pytest

from apps.audit.models import AuditEntry
from apps.tenancy.models import Membership, Project, Role
from tests.conftest import World
from tests.factories import make_project

pytestmark = pytest.mark.django_db


def _b_objects(world: World) -> dict[str, int]:
    """One real object of tenant B per tenant-scoped collection (ids a member of A might try)."""
    project = make_project(tenant=world.tenant_b, name="b-secret")
    audit = AuditEntry.objects.create(
        tenant=world.tenant_b,
        actor=world.user("b", Role.TENANT_ADMIN),
        actor_name="b-tenant_admin",
        action="create",
        object_type="tenancy.project",
        object_id=str(project.pk),
        object_repr="b-secret",
    )
    member = Membership.objects.get(tenant=world.tenant_b, user=world.user("b", Role.MEMBER))
    return {"projects": project.pk, "members": member.pk, "audit": audit.pk}


@pytest.mark.parametrize("role", list(Role))
def test_member_of_a_gets_404_for_every_b_object(world: World, client_for, role: Role) -> None:
    ids = _b_objects(world)
    client = client_for(world.user("a", role))
    for collection, pk in ids.items():
        # Through tenant B's URL: the tenant itself is invisible.
        for method in ("get", "patch", "put", "delete"):
            url = f"/api/v1/tenants/tenant-b/{collection}/{pk}/"
            response = getattr(client, method)(url, {}, format="json")
            assert response.status_code == 404, (method, url, response.status_code)
        # Through tenant A's URL with B's id: scoping filters it out.
        url = f"/api/v1/tenants/tenant-a/{collection}/{pk}/"
        readable = collection != "audit" or role == Role.TENANT_ADMIN
        assert client.get(url).status_code == (404 if readable else 403), url
        for method in ("patch", "delete"):
            response = getattr(client, method)(url, {}, format="json")
            assert response.status_code in (403, 404), (method, url, response.status_code)
        assert client.get(f"/api/v1/tenants/tenant-b/{collection}/").status_code == 404
    assert client.get("/api/v1/tenants/tenant-b/").status_code == 404
    # Nothing of B changed.
    assert Project.objects.filter(pk=ids["projects"], name="b-secret").exists()
    assert Membership.objects.filter(pk=ids["members"]).exists()


def test_lists_never_contain_other_tenants_rows(world: World, client_for) -> None:
    make_project(tenant=world.tenant_a, name="a-visible")
    make_project(tenant=world.tenant_b, name="b-hidden")
    client = client_for(world.user("a", Role.MEMBER))
    names = [p["name"] for p in client.get("/api/v1/tenants/tenant-a/projects/").data["results"]]
    assert names == ["a-visible"]
    slugs = [t["slug"] for t in client.get("/api/v1/tenants/").data["results"]]
    assert slugs == ["tenant-a"]


def test_platform_admin_sees_every_tenant(world: World, client_for) -> None:
    client = client_for(world.platform_admin)
    slugs = sorted(t["slug"] for t in client.get("/api/v1/tenants/").data["results"])
    assert slugs == ["tenant-a", "tenant-b"]
    assert client.get("/api/v1/tenants/tenant-b/projects/").status_code == 200


WRITES = [
    ("post", "/api/v1/tenants/tenant-a/projects/", {"name": "new"}),
    ("patch", "/api/v1/tenants/tenant-a/projects/{project}/", {"name": "renamed"}),
    ("put", "/api/v1/tenants/tenant-a/projects/{project}/", {"name": "renamed"}),
    ("delete", "/api/v1/tenants/tenant-a/projects/{project}/", None),
    ("post", "/api/v1/tenants/tenant-a/members/", {"username": "root", "role": "member"}),
    ("patch", "/api/v1/tenants/tenant-a/members/{member}/", {"role": "tenant_admin"}),
    ("delete", "/api/v1/tenants/tenant-a/members/{member}/", None),
    ("post", "/api/v1/tenants/", {"slug": "new-tenant", "name": "New"}),
    ("patch", "/api/v1/tenants/tenant-a/", {"name": "Renamed"}),
    ("delete", "/api/v1/tenants/tenant-a/", None),
    ("post", "/api/v1/clusters/", {"name": "c", "kind": "simulated"}),
]


@pytest.mark.parametrize(("method", "template", "body"), WRITES)
def test_viewer_gets_403_on_every_write(world: World, client_for, method, template, body) -> None:
    project = make_project(tenant=world.tenant_a, name="keep")
    viewer = world.user("a", Role.VIEWER)
    member = Membership.objects.get(user=viewer)
    url = template.format(project=project.pk, member=member.pk)
    before = (Project.objects.count(), Membership.objects.count(), AuditEntry.objects.count())

    response = getattr(client_for(viewer), method)(url, body, format="json")

    assert response.status_code == 403, response.data
    assert response.json()["detail"]
    after = (Project.objects.count(), Membership.objects.count(), AuditEntry.objects.count())
    assert after == before
    project.refresh_from_db()
    member.refresh_from_db()
    assert (project.name, member.role) == ("keep", Role.VIEWER)


def test_member_cannot_manage_members_but_tenant_admin_can(world: World, client_for) -> None:
    body = {"username": "root", "role": "viewer"}
    url = "/api/v1/tenants/tenant-a/members/"
    assert client_for(world.user("a", Role.MEMBER)).post(url, body).status_code == 403
    response = client_for(world.user("a", Role.TENANT_ADMIN)).post(url, body, format="json")
    assert response.status_code == 201
    assert Membership.objects.get(tenant=world.tenant_a, user=world.platform_admin).role == "viewer"


def test_anonymous_gets_401(world: World, client_for) -> None:
    client = client_for(None)
    for url in ("/api/v1/tenants/", "/api/v1/overview/", "/api/v1/tenants/tenant-a/projects/"):
        assert client.get(url).status_code == 401


def test_tenant_audit_is_for_tenant_admins(world: World, client_for) -> None:
    url = "/api/v1/tenants/tenant-a/audit/"
    assert client_for(world.user("a", Role.MEMBER)).get(url).status_code == 403
    assert client_for(world.user("a", Role.TENANT_ADMIN)).get(url).status_code == 200
    assert client_for(world.user("a", Role.TENANT_ADMIN)).get("/api/v1/audit/").status_code == 403
    assert client_for(world.platform_admin).get("/api/v1/audit/").status_code == 200
