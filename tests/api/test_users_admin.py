"""Platform admins manage users: create with a first password, edit, deactivate (which ends
sign-in and API tokens), set a new password; nobody else reaches these endpoints, and no admin
can lock themselves out."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from rest_framework.test import APIClient

from apps.accounts import services
from apps.accounts.models import User
from apps.audit.models import AuditEntry
from apps.tenancy.models import Role
from tests.conftest import World
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db
USERS = "/api/v1/users/"
FIRST = "a-first-password-of-length"

Client = Callable[[User | None], APIClient]


def test_an_admin_creates_a_user_who_can_then_sign_in(world: World, client_for: Client) -> None:
    response = client_for(world.platform_admin).post(
        USERS,
        {
            "username": "erin",
            "display_name": "Erin",
            "email": "erin@lab.example",
            "password": FIRST,
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert "password" not in body
    assert body["is_active"] and not body["is_platform_admin"] and body["memberships"] == []
    erin = User.objects.get(username="erin")
    assert erin.check_password(FIRST)
    entry = AuditEntry.objects.get(object_type="accounts.user", action="create")
    assert entry.actor == world.platform_admin and entry.after is not None
    assert entry.after["password"] == "<redacted>"
    login = APIClient().post(
        "/api/v1/auth/login/", {"username": "erin", "password": FIRST}, format="json"
    )
    assert login.status_code == 200


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"username": "a-member", "password": FIRST}, "username"),  # taken
        ({"username": "bad name!", "password": FIRST}, "username"),
        ({"username": "erin"}, "password"),
        ({"username": "erin", "password": "short"}, "password"),
        ({"username": "erin", "password": FIRST, "email": "nope"}, "email"),
    ],
)
def test_a_refused_user_says_which_field(
    world: World, client_for: Client, body: dict[str, str], field: str
) -> None:
    before = User.objects.count()
    response = client_for(world.platform_admin).post(USERS, body, format="json")
    assert response.status_code == 400
    assert field in response.json()["errors"]
    assert User.objects.count() == before


def test_the_list_names_each_user_s_tenants_and_searches(world: World, client_for: Client) -> None:
    admin = client_for(world.platform_admin)
    found = admin.get(USERS, {"search": "a-member"}).json()["results"]
    assert [u["username"] for u in found] == ["a-member"]
    assert found[0]["memberships"] == [{"tenant": "tenant-a", "role": "member"}]
    everyone = admin.get(USERS, {"page_size": 3})
    names = [u["username"] for u in everyone.json()["results"]]
    assert names == sorted(names) and len(names) == 3 and everyone.json()["next"]
    User.objects.filter(username="b-viewer").update(is_active=False)
    inactive = admin.get(USERS, {"is_active": "false"}).json()["results"]
    assert [u["username"] for u in inactive] == ["b-viewer"]


def test_deactivating_a_user_ends_their_session_and_tokens(
    world: World, client_for: Client
) -> None:
    member = world.user("a", Role.MEMBER)
    _, plaintext = services.create_token(user=member, name="ci")
    token = APIClient(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    session = APIClient()
    session.login(username="a-member", password=PASSWORD)
    assert token.get("/api/v1/auth/session/").status_code == 200
    assert session.get("/api/v1/auth/session/").status_code == 200

    admin = client_for(world.platform_admin)
    off = admin.patch(f"{USERS}{member.pk}/", {"is_active": False}, format="json")
    assert off.status_code == 200 and off.json()["is_active"] is False
    assert token.get("/api/v1/auth/session/").status_code == 401
    assert session.get("/api/v1/auth/session/").status_code in (401, 403)
    on = admin.patch(f"{USERS}{member.pk}/", {"is_active": True}, format="json")
    assert on.status_code == 200
    assert token.get("/api/v1/auth/session/").status_code == 200


def test_an_edit_cannot_rename_or_set_a_password(world: World, client_for: Client) -> None:
    member = world.user("a", Role.MEMBER)
    response = client_for(world.platform_admin).patch(
        f"{USERS}{member.pk}/",
        {"username": "renamed", "password": "x", "display_name": "Ada", "is_platform_admin": True},
        format="json",
    )
    assert response.status_code == 200
    member.refresh_from_db()
    assert (member.username, member.display_name, member.is_platform_admin) == (
        "a-member",
        "Ada",
        True,
    )
    assert member.check_password(PASSWORD)


def test_no_admin_locks_themselves_out(world: World, client_for: Client) -> None:
    me = world.platform_admin
    admin = client_for(me)
    off = admin.patch(f"{USERS}{me.pk}/", {"is_active": False}, format="json")
    assert off.status_code == 400 and list(off.json()["errors"]) == ["is_active"]
    demoted = admin.patch(f"{USERS}{me.pk}/", {"is_platform_admin": False}, format="json")
    assert demoted.status_code == 400 and list(demoted.json()["errors"]) == ["is_platform_admin"]
    me.refresh_from_db()
    assert me.is_active and me.is_platform_admin


def test_an_admin_sets_a_new_password_and_the_user_s_sessions_end(
    world: World, client_for: Client
) -> None:
    member = world.user("a", Role.MEMBER)
    session = APIClient()
    session.login(username="a-member", password=PASSWORD)
    admin = client_for(world.platform_admin)
    short = admin.post(f"{USERS}{member.pk}/password/", {"password": "short"}, format="json")
    assert short.status_code == 400 and list(short.json()["errors"]) == ["password"]
    done = admin.post(f"{USERS}{member.pk}/password/", {"password": FIRST}, format="json")
    assert done.status_code == 204
    member.refresh_from_db()
    assert member.check_password(FIRST)
    assert session.get("/api/v1/auth/session/").status_code in (401, 403)
    entry = AuditEntry.objects.get(object_type="accounts.user", object_id=str(member.pk))
    assert entry.actor == world.platform_admin and entry.after is not None
    assert entry.after["password"] == "<redacted: changed>"


@pytest.mark.parametrize("role", list(Role))
def test_no_one_but_a_platform_admin_reaches_users(
    world: World, client_for: Client, role: Role
) -> None:
    client = client_for(world.user("a", role))
    target = world.user("b", Role.MEMBER)
    assert client.get(USERS).status_code == 403
    assert client.get(f"{USERS}{target.pk}/").status_code == 403
    assert (
        client.post(USERS, {"username": "x", "password": FIRST}, format="json").status_code == 403
    )
    assert (
        client.patch(f"{USERS}{target.pk}/", {"is_active": False}, format="json").status_code == 403
    )
    assert (
        client.post(f"{USERS}{target.pk}/password/", {"password": FIRST}, format="json").status_code
        == 403
    )
    target.refresh_from_db()
    assert target.is_active and target.check_password(PASSWORD)
    assert client_for(None).get(USERS).status_code == 401
    assert client_for(world.platform_admin).delete(f"{USERS}{target.pk}/").status_code == 405
