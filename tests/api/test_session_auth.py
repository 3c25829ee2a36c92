"""Browser login with a session cookie and CSRF protection."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from apps.tenancy.models import Role
from tests.conftest import World
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db


def csrf_client() -> tuple[APIClient, str]:
    client = APIClient(enforce_csrf_checks=True)
    response = client.get("/api/v1/auth/session/")
    assert response.status_code == 401  # not logged in, but the CSRF cookie is set
    return client, client.cookies["csrftoken"].value


def test_login_session_logout(world: World) -> None:
    client, csrf = csrf_client()
    response = client.post(
        "/api/v1/auth/login/",
        {"username": "a-member", "password": PASSWORD},
        format="json",
        HTTP_X_CSRFTOKEN=csrf,
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["user"]["username"] == "a-member" and body["user"]["has_password"] is True
    assert body["memberships"] == [
        {
            "tenant": {"id": world.tenant_a.pk, "slug": "tenant-a", "name": "Tenant-A"},
            "role": "member",
        }
    ]
    assert client.get("/api/v1/auth/session/").json()["user"]["username"] == "a-member"
    csrf = client.cookies["csrftoken"].value  # rotated on login
    # An unsafe call without the CSRF header is refused even with a valid session.
    assert client.post("/api/v1/tenants/tenant-a/projects/", {"name": "p"}).status_code == 403
    ok = client.post(
        "/api/v1/tenants/tenant-a/projects/", {"name": "p"}, HTTP_X_CSRFTOKEN=csrf, format="json"
    )
    assert ok.status_code == 201
    assert client.post("/api/v1/auth/logout/", HTTP_X_CSRFTOKEN=csrf).status_code == 204
    assert client.get("/api/v1/auth/session/").status_code == 401


def test_login_without_csrf_is_refused(world: World) -> None:
    client = APIClient(enforce_csrf_checks=True)
    response = client.post("/api/v1/auth/login/", {"username": "a-member", "password": PASSWORD})
    assert response.status_code == 403
    assert "sessionid" not in client.cookies


def test_wrong_password_is_400_with_field_error(world: World) -> None:
    client, csrf = csrf_client()
    response = client.post(
        "/api/v1/auth/login/",
        {"username": "a-member", "password": "wrong"},
        format="json",
        HTTP_X_CSRFTOKEN=csrf,
    )
    assert response.status_code == 400
    assert response.json()["errors"] == {"password": ["Unknown username or wrong password."]}
    assert client.get("/api/v1/auth/session/").status_code == 401


def test_login_failure_is_logged_without_password(world: World, caplog) -> None:
    client, csrf = csrf_client()
    with caplog.at_level("WARNING", logger="zhisuan.auth"):
        client.post(
            "/api/v1/auth/login/",
            {"username": "a-member", "password": "hunter2-secret"},
            HTTP_X_CSRFTOKEN=csrf,
        )
    assert "login failed: username=a-member" in caplog.text
    assert "hunter2-secret" not in caplog.text


def test_role_listed_in_session(world: World, client_for) -> None:
    body = client_for(world.user("b", Role.VIEWER)).get("/api/v1/auth/session/").json()
    assert [(m["tenant"]["slug"], m["role"]) for m in body["memberships"]] == [
        ("tenant-b", "viewer")
    ]
