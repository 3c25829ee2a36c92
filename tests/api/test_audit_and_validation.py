"""Audit entries for API writes, and the JSON error shape for bad input."""

from __future__ import annotations

import pytest

from apps.audit.models import AuditEntry
from apps.tenancy.models import Project, Role
from tests.conftest import World
from tests.factories import make_project

pytestmark = pytest.mark.django_db


def test_update_is_audited_with_before_and_after(world: World, client_for) -> None:
    project = make_project(tenant=world.tenant_a, name="old-name", description="d")
    admin = world.user("a", Role.TENANT_ADMIN)
    response = client_for(admin).patch(
        f"/api/v1/tenants/tenant-a/projects/{project.pk}/", {"name": "new-name"}, format="json"
    )
    assert response.status_code == 200
    entry = AuditEntry.objects.get(object_type="tenancy.project", action="update")
    assert entry.actor == admin and entry.actor_name == "a-tenant_admin"
    assert entry.tenant == world.tenant_a and entry.object_id == str(project.pk)
    assert entry.before is not None and entry.after is not None
    assert (entry.before["name"], entry.after["name"]) == ("old-name", "new-name")
    assert entry.before["description"] == entry.after["description"] == "d"
    listed = client_for(admin).get("/api/v1/tenants/tenant-a/audit/").json()["results"]
    assert [e["id"] for e in listed] == [entry.pk]
    # Tenant B's admin sees none of A's audit trail.
    other = client_for(world.user("b", Role.TENANT_ADMIN)).get("/api/v1/tenants/tenant-b/audit/")
    assert other.json()["results"] == []


def test_a_patch_answers_every_field_when_the_creator_is_gone(world: World, client_for) -> None:
    """A user-name field read through a foreign key that is null (the user was deleted) is
    null in the answer to a PATCH too, not left out: DRF skips a field's default on partial
    updates, which the deep schemathesis run caught as a response that broke the schema."""
    project = make_project(tenant=world.tenant_a, name="orphan")
    assert project.created_by is None
    client = client_for(world.user("a", Role.TENANT_ADMIN))
    url = f"/api/v1/tenants/tenant-a/projects/{project.pk}/"
    for response in (client.patch(url, {}, format="json"), client.get(url)):
        assert response.status_code == 200
        body = response.json()
        assert set(body) == {"id", "name", "description", "created_by", "created_at"}
        assert body["created_by"] is None


def test_create_and_delete_are_audited(world: World, client_for) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    created = client.post("/api/v1/tenants/tenant-a/projects/", {"name": "p1"}, format="json")
    assert created.status_code == 201
    pk = created.json()["id"]
    assert client.delete(f"/api/v1/tenants/tenant-a/projects/{pk}/").status_code == 204
    entries = AuditEntry.objects.filter(object_id=str(pk)).order_by("id")
    assert [(e.action, e.before is None, e.after is None) for e in entries] == [
        ("create", True, False),
        ("delete", False, True),
    ]
    assert entries[1].before is not None and entries[1].before["name"] == "p1"


def test_audit_entries_are_append_only(world: World) -> None:
    entry = AuditEntry.objects.create(
        actor_name="x", action="create", object_type="t", object_id="1", object_repr="r"
    )
    entry.object_repr = "tampered"
    with pytest.raises(PermissionError):
        entry.save()
    with pytest.raises(PermissionError):
        entry.delete()
    entry.refresh_from_db()
    assert entry.object_repr == "r"


def test_token_secrets_never_reach_the_audit_log(world: World, client_for) -> None:
    response = client_for(world.user("a", Role.MEMBER)).post("/api/v1/tokens/", {"name": "x"})
    entry = AuditEntry.objects.get(object_type="accounts.apitoken")
    assert entry.after is not None and entry.after["digest"] == "<redacted>"
    assert response.json()["token"] not in str(entry.after)


@pytest.mark.parametrize(
    ("url", "body", "field"),
    [
        ("/api/v1/tenants/tenant-a/projects/", {}, "name"),
        ("/api/v1/tenants/tenant-a/projects/", {"name": "x" * 65}, "name"),
        ("/api/v1/tenants/tenant-a/projects/", {"name": ["not", "a", "string"]}, "name"),
        ("/api/v1/tenants/tenant-a/members/", {"username": "nobody", "role": "member"}, "username"),
        ("/api/v1/tenants/tenant-a/members/", {"username": "root", "role": "king"}, "role"),
        ("/api/v1/tenants/tenant-a/members/", {"username": "a-member"}, "username"),
        ("/api/v1/tenants/", {"slug": "Bad Slug!", "name": "x"}, "slug"),
        ("/api/v1/tenants/", {"slug": "tenant-a", "name": "dup"}, "slug"),
        ("/api/v1/tokens/", {"name": "t", "ttl_days": 0}, "ttl_days"),
        ("/api/v1/tokens/", {"name": "t", "ttl_days": "soon"}, "ttl_days"),
        ("/api/v1/clusters/", {"name": "c", "kind": "mainframe"}, "kind"),
    ],
)
def test_invalid_input_is_400_with_field_errors(world: World, client_for, url, body, field):
    before = (Project.objects.count(), AuditEntry.objects.count())
    response = client_for(world.platform_admin).post(url, body, format="json")
    assert response.status_code == 400, response.content
    data = response.json()
    assert data["detail"] == "Invalid input."
    assert field in data["errors"], data
    assert all(isinstance(m, str) for m in data["errors"][field])
    assert (Project.objects.count(), AuditEntry.objects.count()) == before


def test_duplicate_project_name_is_400(world: World, client_for) -> None:
    make_project(tenant=world.tenant_a, name="same")
    response = client_for(world.user("a", Role.MEMBER)).post(
        "/api/v1/tenants/tenant-a/projects/", {"name": "same"}, format="json"
    )
    assert response.status_code == 400
    assert "name" in response.json()["errors"]


def test_malformed_json_is_400_not_500(world: World, client_for) -> None:
    response = client_for(world.user("a", Role.MEMBER)).generic(
        "POST", "/api/v1/tenants/tenant-a/projects/", "{not json", content_type="application/json"
    )
    assert response.status_code == 400
    assert "detail" in response.json()
