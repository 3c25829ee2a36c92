"""Double clicks and concurrent admins on PostgreSQL: real threads, real connections, real
row locks. A duplicate is a 400 with a field error, never a 500, and a tenant always keeps a
tenant admin."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from django.db import connection
from rest_framework.test import APIClient

from apps.accounts.models import User
from apps.audit.models import AuditEntry
from apps.tenancy.models import Membership, Project, Role
from tests.conftest import World
from tests.factories import make_membership, make_user

pytestmark = pytest.mark.django_db(transaction=True)
THREADS = 8


def _at_once(users: list[User], call: Callable[[APIClient, int], Any]) -> list[Any]:
    """``call(client, i)`` as ``users[i]`` from one thread each, released together, each
    with its own database connection."""
    barrier = threading.Barrier(len(users))

    def one(i: int) -> Any:
        client = APIClient()
        client.force_authenticate(users[i])
        try:
            barrier.wait()
            return call(client, i)
        finally:
            connection.close()

    with ThreadPoolExecutor(len(users)) as pool:
        return list(pool.map(one, range(len(users))))


def test_eight_creates_of_one_project_name_make_one_project(world: World) -> None:
    url = "/api/v1/tenants/tenant-a/projects/"
    answers = _at_once(
        [world.user("a", Role.MEMBER)] * THREADS,
        lambda c, _i: c.post(url, {"name": "llm"}, format="json"),
    )  # fmt: skip
    assert Counter(a.status_code for a in answers) == {201: 1, 400: THREADS - 1}
    for answer in answers:
        if answer.status_code == 400:
            assert answer.json()["errors"] == {"name": ["A project with this name already exists."]}
    assert Project.objects.filter(tenant=world.tenant_a, name="llm").count() == 1
    assert AuditEntry.objects.filter(object_type="tenancy.project").count() == 1


def test_concurrent_renames_to_one_name_leave_one_project_with_it(world: World) -> None:
    ids = [Project.objects.create(tenant=world.tenant_a, name=f"p{i}").pk for i in range(THREADS)]
    answers = _at_once(
        [world.user("a", Role.TENANT_ADMIN)] * THREADS,
        lambda c, i: c.patch(f"/api/v1/tenants/tenant-a/projects/{ids[i]}/", {"name": "main"},
                             format="json"),
    )  # fmt: skip
    assert Counter(a.status_code for a in answers) == {200: 1, 400: THREADS - 1}
    assert Project.objects.filter(name="main").count() == 1


def test_eight_adds_of_one_member_make_one_membership(world: World) -> None:
    carol = make_user("carol")
    url = "/api/v1/tenants/tenant-a/members/"
    answers = _at_once(
        [world.user("a", Role.TENANT_ADMIN)] * THREADS,
        lambda c, _i: c.post(url, {"username": "carol", "role": "member"}, format="json"),
    )  # fmt: skip
    assert Counter(a.status_code for a in answers) == {201: 1, 400: THREADS - 1}
    for answer in answers:
        if answer.status_code == 400:
            assert answer.json()["errors"] == {
                "username": ["carol is already a member of tenant-a."]
            }
    assert Membership.objects.filter(tenant=world.tenant_a, user=carol).count() == 1


@pytest.mark.parametrize("how", ["demote", "remove"])
def test_two_admins_leaving_at_once_leave_one_admin(world: World, how: str) -> None:
    """Each of two admins demotes (removes) the other at the same instant: without the lock
    both would see another admin left, and the tenant would end with none."""
    second = make_user("a-admin-2")
    make_membership(tenant=world.tenant_a, user=second, role=Role.TENANT_ADMIN)
    admins = [world.user("a", Role.TENANT_ADMIN), second]
    for _round in range(5):
        ids = [Membership.objects.get(tenant=world.tenant_a, user=u).pk for u in admins]

        def act(client: APIClient, i: int, ids: list[int] = ids) -> int:
            url = f"/api/v1/tenants/tenant-a/members/{ids[1 - i]}/"
            if how == "demote":
                return int(client.patch(url, {"role": "member"}, format="json").status_code)
            return int(client.delete(url).status_code)

        won, lost = sorted(_at_once(admins, act))
        # The loser is refused: 409 when it got the lock second; 403 (demoted) or 404 (no
        # longer a member) when the winner had already committed as its request began.
        assert won == (200 if how == "demote" else 204) and lost in (403, 404, 409)
        assert Membership.objects.filter(tenant=world.tenant_a, role=Role.TENANT_ADMIN).count() == 1
        for user in admins:  # both admins again for the next round
            Membership.objects.update_or_create(
                tenant=world.tenant_a, user=user, defaults={"role": Role.TENANT_ADMIN}
            )
