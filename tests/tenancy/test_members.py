"""Members: adding by username, the last tenant admin, and what removal does to access."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from apps.accounts.services import create_token
from apps.audit.models import AuditEntry
from apps.tenancy.models import Membership, Role
from tests.factories import make_membership, make_user

pytestmark = pytest.mark.django_db
URL = "/api/v1/tenants/tenant-a/members/"


@pytest.mark.parametrize(
    ("username", "message"),
    [
        ("ghost", "No user named ghost."),
        ("  ghost ", "No user named ghost."),
        ("", "A username is required."),
        ("   ", "A username is required."),
        (None, "A username is required."),
    ],
)
def test_unknown_or_empty_username_says_so_plainly(world, client_for, username, message) -> None:
    admin = client_for(world.user("a", Role.TENANT_ADMIN))
    response = admin.post(URL, {"username": username, "role": "member"}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"] == {"username": [message]}


def test_a_username_with_spaces_around_it_is_added(world, client_for) -> None:
    carol = make_user("carol")
    admin = client_for(world.user("a", Role.TENANT_ADMIN))
    response = admin.post(URL, {"username": " carol ", "role": "viewer"}, format="json")
    assert response.status_code == 201, response.json()
    assert response.json()["username"] == "carol"
    assert Membership.objects.get(tenant=world.tenant_a, user=carol).role == Role.VIEWER


def test_the_last_tenant_admin_can_neither_step_down_nor_leave(world, client_for) -> None:
    alice = world.user("a", Role.TENANT_ADMIN)
    mine = Membership.objects.get(tenant=world.tenant_a, user=alice)
    client = client_for(alice)
    before = AuditEntry.objects.count()
    for role in ("viewer", "member"):
        response = client.patch(f"{URL}{mine.pk}/", {"role": role}, format="json")
        assert response.status_code == 409
        assert "only tenant admin of tenant-a" in response.json()["detail"]
    removed = client.delete(f"{URL}{mine.pk}/")
    assert removed.status_code == 409 and "cannot be removed" in removed.json()["detail"]
    # A platform admin cannot leave the tenant without one either.
    root = client_for(world.platform_admin)
    assert root.patch(f"{URL}{mine.pk}/", {"role": "viewer"}, format="json").status_code == 409
    mine.refresh_from_db()
    assert mine.role == Role.TENANT_ADMIN and AuditEntry.objects.count() == before
    # Staying admin is fine (a no-op PATCH of the role).
    assert (
        client.patch(f"{URL}{mine.pk}/", {"role": "tenant_admin"}, format="json").status_code == 200
    )
    # With a second admin, the first may step down.
    bob = Membership.objects.get(tenant=world.tenant_a, user=world.user("a", Role.MEMBER))
    assert (
        client.patch(f"{URL}{bob.pk}/", {"role": "tenant_admin"}, format="json").status_code == 200
    )
    assert client.patch(f"{URL}{mine.pk}/", {"role": "member"}, format="json").status_code == 200
    mine.refresh_from_db()
    assert mine.role == Role.MEMBER


def test_removing_a_member_ends_their_tokens_access_to_the_tenant(world, client_for) -> None:
    """Tokens belong to users, not tenants: each request checks the membership, so a removed
    member's token stops reaching the tenant (404, as for any tenant one is not in) while it
    still works wherever they remain a member."""
    bob = world.user("a", Role.MEMBER)
    make_membership(tenant=world.tenant_b, user=bob, role=Role.VIEWER)
    _token, plaintext = create_token(user=bob, name="ci")
    token = APIClient()
    token.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    jobs = "/api/v1/tenants/tenant-a/jobs/"
    assert token.get(jobs).status_code == 200
    membership = Membership.objects.get(tenant=world.tenant_a, user=bob)
    admin = client_for(world.user("a", Role.TENANT_ADMIN))
    assert admin.delete(f"{URL}{membership.pk}/").status_code == 204
    for url in (jobs, "/api/v1/tenants/tenant-a/", "/api/v1/tenants/tenant-a/projects/"):
        assert token.get(url).status_code == 404, url
    assert token.post("/api/v1/tenants/tenant-a/projects/", {"name": "x"}).status_code == 404
    assert token.get("/api/v1/tenants/tenant-b/jobs/").status_code == 200
