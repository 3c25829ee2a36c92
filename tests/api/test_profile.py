"""A person's own profile (name, email address, language) and password."""

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

NEW_PASSWORD = "a-much-longer-passphrase-7"


def signed_in(username: str) -> tuple[APIClient, str]:
    client = APIClient(enforce_csrf_checks=True)
    client.get("/api/v1/auth/session/")
    response = client.post(
        "/api/v1/auth/login/",
        {"username": username, "password": PASSWORD},
        format="json",
        HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value,
    )
    assert response.status_code == 200, response.content
    return client, client.cookies["csrftoken"].value


def test_a_member_edits_their_own_profile_and_the_session_says_it(
    world: World, client_for: Callable[[User | None], APIClient]
) -> None:
    member = world.user("a", Role.MEMBER)
    client = client_for(member)
    assert client.get("/api/v1/auth/profile/").json() == {
        "username": "a-member",
        "display_name": member.display_name,
        "email": member.email,
        "language": "",
    }
    response = client.patch(
        "/api/v1/auth/profile/",
        {"display_name": "Ada M.", "email": "ada@example.org", "language": "zh"},
        format="json",
    )
    assert response.status_code == 200, response.content
    member.refresh_from_db()
    assert (member.display_name, member.email, member.language) == (
        "Ada M.",
        "ada@example.org",
        "zh",
    )
    user = client.get("/api/v1/auth/session/").json()["user"]
    assert (user["email"], user["language"]) == ("ada@example.org", "zh")
    entry = AuditEntry.objects.get(object_type="accounts.user", object_id=str(member.pk))
    assert entry.actor == member and entry.tenant is None
    assert entry.before is not None and entry.after is not None
    assert (entry.before["language"], entry.after["language"]) == ("", "zh")
    assert entry.after["password"] == "<redacted>"
    # Saving what is already there writes no second entry.
    client.patch("/api/v1/auth/profile/", {"language": "zh"}, format="json")
    assert AuditEntry.objects.filter(object_type="accounts.user").count() == 1


def test_only_the_profile_s_own_fields_change(
    world: World, client_for: Callable[[User | None], APIClient]
) -> None:
    member = world.user("a", Role.MEMBER)
    response = client_for(member).patch(
        "/api/v1/auth/profile/",
        {"username": "root2", "is_platform_admin": True, "display_name": "M"},
        format="json",
    )
    assert response.status_code == 200
    member.refresh_from_db()
    assert (member.username, member.is_platform_admin) == ("a-member", False)
    assert member.display_name == "M"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"email": "not-an-address"}, "email"),
        ({"language": "fr"}, "language"),
        ({"display_name": "x" * 151}, "display_name"),
    ],
)
def test_bad_profile_values_are_400_with_the_field(
    world: World, client_for: Callable[[User | None], APIClient], body: dict[str, str], field: str
) -> None:
    member = world.user("a", Role.MEMBER)
    response = client_for(member).patch("/api/v1/auth/profile/", body, format="json")
    assert response.status_code == 400
    assert list(response.json()["errors"]) == [field]
    member.refresh_from_db()
    assert member.language == "" and member.email != "not-an-address"


def test_signed_out_has_no_profile() -> None:
    assert APIClient().get("/api/v1/auth/profile/").status_code == 401
    assert APIClient().patch("/api/v1/auth/profile/", {"language": "zh"}).status_code == 401


def test_a_read_only_token_reads_the_profile_but_cannot_change_it(world: World) -> None:
    member = world.user("a", Role.MEMBER)
    _, plaintext = services.create_token(user=member, name="ro", read_only=True)
    client = APIClient(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    assert client.get("/api/v1/auth/profile/").status_code == 200
    refused = client.patch("/api/v1/auth/profile/", {"language": "zh"}, format="json")
    assert refused.status_code == 403


def test_changing_the_password_keeps_this_session_and_ends_the_others(world: World) -> None:
    client, csrf = signed_in("a-member")
    other, _ = signed_in("a-member")
    response = client.post(
        "/api/v1/auth/password/",
        {"current_password": PASSWORD, "new_password": NEW_PASSWORD},
        format="json",
        HTTP_X_CSRFTOKEN=csrf,
    )
    assert response.status_code == 204, response.content
    assert client.get("/api/v1/auth/session/").status_code == 200
    assert other.get("/api/v1/auth/session/").status_code == 401
    member = User.objects.get(username="a-member")
    assert member.check_password(NEW_PASSWORD)
    entry = AuditEntry.objects.get(object_type="accounts.user", object_id=str(member.pk))
    assert entry.before is not None and entry.after is not None
    assert (entry.before["password"], entry.after["password"]) == (
        "<redacted>",
        "<redacted: changed>",
    )


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"current_password": "wrong", "new_password": NEW_PASSWORD}, "current_password"),
        ({"current_password": PASSWORD, "new_password": "short"}, "new_password"),
        ({"current_password": PASSWORD, "new_password": "password123"}, "new_password"),
        ({"current_password": PASSWORD}, "new_password"),
    ],
)
def test_a_refused_password_change_says_which_field_and_changes_nothing(
    world: World, body: dict[str, str], field: str
) -> None:
    client, csrf = signed_in("a-member")
    response = client.post("/api/v1/auth/password/", body, format="json", HTTP_X_CSRFTOKEN=csrf)
    assert response.status_code == 400
    assert list(response.json()["errors"]) == [field]
    assert User.objects.get(username="a-member").check_password(PASSWORD)
    assert not AuditEntry.objects.filter(object_type="accounts.user").exists()


def test_the_password_is_not_changed_with_an_api_token(world: World) -> None:
    member = world.user("a", Role.MEMBER)
    _, plaintext = services.create_token(user=member, name="full")
    response = APIClient(HTTP_AUTHORIZATION=f"Bearer {plaintext}").post(
        "/api/v1/auth/password/",
        {"current_password": PASSWORD, "new_password": NEW_PASSWORD},
        format="json",
    )
    assert response.status_code in (401, 403)
    assert User.objects.get(username="a-member").check_password(PASSWORD)


@pytest.mark.parametrize(
    ("language", "short", "common"),
    [
        (
            "en",
            "This password is too short: use at least 8 characters.",
            "This password is too common; choose another.",
        ),
        ("zh", "密码太短：至少需要 8 个字符。", "这个密码太常见，请换一个。"),  # noqa: RUF001
    ],
)
def test_the_password_rules_are_said_in_the_reader_s_language(
    world: World, language: str, short: str, common: str
) -> None:
    client, csrf = signed_in("a-member")
    client.cookies["zs_lang"] = language
    said = []
    for new in ("short", "password"):
        response = client.post(
            "/api/v1/auth/password/",
            {"current_password": PASSWORD, "new_password": new},
            format="json",
            HTTP_X_CSRFTOKEN=csrf,
        )
        said.append(response.json()["errors"]["new_password"])
    assert said == [[short], [common]]
