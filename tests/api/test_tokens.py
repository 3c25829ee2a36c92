"""Personal API tokens: shown once, hashed at rest, expiring and revocable."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest
import yaml
from django.utils import timezone
from rest_framework.test import APIClient

from apps.accounts.models import ApiToken
from apps.accounts.services import create_token
from apps.tenancy.models import Project, Role
from tests.conftest import World

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


def bearer(token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def test_token_is_shown_once_and_stored_hashed(world: World, client_for) -> None:
    user = world.user("a", Role.MEMBER)
    response = client_for(user).post("/api/v1/tokens/", {"name": "ci", "ttl_days": 7})
    assert response.status_code == 201
    plaintext = response.json()["token"]
    row = ApiToken.objects.get(pk=response.json()["id"])
    assert plaintext.startswith(f"zs_{row.prefix}_")
    secret = plaintext.split("_", 2)[2]
    assert secret not in row.digest and len(row.digest) == 64
    assert (row.expires_at - timezone.now()).days in (6, 7)
    listed = client_for(user).get("/api/v1/tokens/").json()["results"]
    assert [t["id"] for t in listed] == [row.pk]
    assert "token" not in listed[0] and "digest" not in listed[0]
    assert bearer(plaintext).get("/api/v1/tenants/").status_code == 200


def test_revoked_token_gets_401(world: World, client_for) -> None:
    user = world.user("a", Role.MEMBER)
    token, plaintext = create_token(user=user, name="t")
    assert bearer(plaintext).get("/api/v1/overview/").status_code == 200
    assert client_for(user).delete(f"/api/v1/tokens/{token.pk}/").status_code == 204
    response = bearer(plaintext).get("/api/v1/overview/")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Bearer"
    token.refresh_from_db()
    assert token.revoked_at is not None


def test_expired_token_gets_401(world: World) -> None:
    token, plaintext = create_token(user=world.user("a", Role.MEMBER), name="t")
    ApiToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert bearer(plaintext).get("/api/v1/overview/").status_code == 401


@pytest.mark.parametrize("bad", ["zs_nope", "garbage", "zs_abc_def", ""])
def test_malformed_or_unknown_token_gets_401(world: World, bad: str) -> None:
    _token, plaintext = create_token(user=world.user("a", Role.MEMBER), name="t")
    prefix = plaintext.split("_")[1]
    for candidate in (bad, f"zs_{prefix}_wrongsecret"):
        if candidate:
            assert bearer(candidate).get("/api/v1/overview/").status_code == 401


def test_a_user_cannot_see_or_revoke_another_users_token(world: World, client_for) -> None:
    token, _ = create_token(user=world.user("b", Role.MEMBER), name="theirs")
    client = client_for(world.user("a", Role.MEMBER))
    assert client.get(f"/api/v1/tokens/{token.pk}/").status_code == 404
    assert client.delete(f"/api/v1/tokens/{token.pk}/").status_code == 404
    token.refresh_from_db()
    assert token.revoked_at is None


def test_token_carries_the_owners_role(world: World) -> None:
    _token, plaintext = create_token(user=world.user("a", Role.VIEWER), name="t")
    client = bearer(plaintext)
    assert client.get("/api/v1/tenants/tenant-a/projects/").status_code == 200
    assert client.post("/api/v1/tenants/tenant-a/projects/", {"name": "x"}).status_code == 403
    assert client.get("/api/v1/tenants/tenant-b/projects/").status_code == 404


def test_a_read_only_token_reads_and_changes_nothing(world: World, client_for) -> None:
    admin = world.user("a", Role.TENANT_ADMIN)
    made = client_for(admin).post(
        "/api/v1/tokens/", {"name": "grafana", "ttl_days": 30, "read_only": True}, format="json"
    )
    assert made.status_code == 201, made.json()
    assert made.json()["read_only"] is True
    client = bearer(made.json()["token"])
    assert client.get("/api/v1/tenants/tenant-a/projects/").status_code == 200
    assert client.get("/api/v1/tokens/").json()["results"][0]["read_only"] is True
    refused = client.post("/api/v1/tenants/tenant-a/projects/", {"name": "x"}, format="json")
    assert refused.status_code == 403
    assert "read-only" in refused.json()["detail"]
    # Not even its own revocation: that is a change too (the owner's session may).
    token = ApiToken.objects.get(pk=made.json()["id"])
    assert client.delete(f"/api/v1/tokens/{token.pk}/").status_code == 403
    assert client.get("/api/v1/tenants/tenant-b/projects/").status_code == 404  # still isolated
    token.refresh_from_db()
    assert token.revoked_at is None
    assert not Project.objects.filter(name="x").exists()
    # A token that may write, of the same user, does.
    _token, plaintext = create_token(user=admin, name="ci")
    assert (
        bearer(plaintext)
        .post("/api/v1/tenants/tenant-a/projects/", {"name": "x"}, format="json")
        .status_code
        == 201
    )


def test_every_write_of_the_api_refuses_a_read_only_token(world: World) -> None:
    """Every unsafe operation of the committed OpenAPI schema, called with a platform admin's
    read-only token: refused before any view looks at the body or the object."""
    _token, plaintext = create_token(user=world.platform_admin, name="ro", read_only=True)
    client = bearer(plaintext)
    schema = yaml.safe_load((ROOT / "openapi" / "schema.yaml").read_text())
    called = 0
    for path, operations in schema["paths"].items():
        url = re.sub(r"\{tenant[^}]*\}", "tenant-a", path)
        url = re.sub(r"\{[^}]+\}", "1", url)
        for method in ("post", "put", "patch", "delete"):
            if method not in operations or {} in operations[method].get("security", []):
                continue  # signing in takes no token
            answer = getattr(client, method)(url, {}, format="json")
            assert answer.status_code in (401, 403), (method, path, answer.status_code)
            called += 1
    assert called > 50  # the walk found the API's writes
