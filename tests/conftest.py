"""Shared fixtures: a two-tenant world with one user per role, and API clients for each."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.conf import settings
from rest_framework.test import APIClient

from apps.accounts.models import User
from apps.tenancy.models import Role, Tenant
from tests.factories import make_membership, make_tenant, make_user


def pytest_report_header(config: pytest.Config) -> list[str]:
    try:
        import django

        django.setup()
        db = settings.DATABASES["default"]
        return [f"database: {db['ENGINE'].rsplit('.', 1)[-1]} at {db.get('HOST') or db['NAME']}"]
    except Exception as exc:  # noqa: BLE001 - a header must never break collection
        return [f"database: unknown ({exc})"]


@pytest.fixture(autouse=True)
def _log_database_vendor(request: pytest.FixtureRequest) -> None:
    """Fail loudly if the backend suite is ever pointed at SQLite by accident."""
    if "django_db_setup" in request.fixturenames or request.node.get_closest_marker("django_db"):
        assert settings.DATABASES["default"]["ENGINE"].endswith("postgresql"), (
            "backend tests must run on PostgreSQL"
        )


class World:
    """Two tenants (a, b) with an admin, member and viewer each, plus a platform admin."""

    def __init__(self) -> None:
        self.platform_admin: User = make_user("root", is_platform_admin=True)
        self.tenant_a: Tenant = make_tenant("tenant-a")
        self.tenant_b: Tenant = make_tenant("tenant-b")
        self.users: dict[tuple[str, Role], User] = {}
        for label, tenant in (("a", self.tenant_a), ("b", self.tenant_b)):
            for role in Role:
                user = make_user(f"{label}-{role.value}")
                make_membership(tenant=tenant, user=user, role=role)
                self.users[(label, role)] = user

    def user(self, tenant: str, role: Role) -> User:
        return self.users[(tenant, role)]


@pytest.fixture
def world(db: Any) -> World:
    return World()


@pytest.fixture
def client_for() -> Callable[[User | None], APIClient]:
    def make(user: User | None) -> APIClient:
        client = APIClient()
        if user is not None:
            client.force_authenticate(user)
        return client

    return make
