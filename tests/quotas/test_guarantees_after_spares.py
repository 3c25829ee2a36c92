"""Guarantees are checked when they grow, not on every edit: a pool whose capacity dropped
under its guarantees (a node made a spare before that was refused, or removed) still lets
operators edit borrow limits and weights, re-save a guarantee, or cut one."""

from __future__ import annotations

import pytest

from apps.clusters.models import Node
from apps.quotas.models import Quota
from tests.conftest import World
from tests.jobs.conftest import Cluster

pytestmark = pytest.mark.django_db


def shrink_pool(cluster: Cluster) -> None:
    """The cluster fixture's 32 GPUs carry 32 guaranteed (16 + 16); take one node's 8 away
    behind the API's back, as a spare made before the spare check existed would have."""
    node = Node.objects.filter(pool=cluster.pool).order_by("name").first()
    assert node is not None
    Node.objects.filter(pk=node.pk).update(is_spare=True)


def test_edits_that_do_not_grow_a_guarantee_pass_when_the_pool_is_short(
    world: World, client_for, cluster: Cluster
) -> None:
    shrink_pool(cluster)
    admin = client_for(world.platform_admin)
    quota = Quota.objects.get(tenant=world.tenant_a)
    url = f"/api/v1/quotas/{quota.pk}/"
    for body in ({"borrow_limit": 40}, {"weight": 2}, {"guarantee": 16}):
        response = admin.patch(url, body, format="json")
        assert response.status_code == 200, (body, response.json())
    cut = admin.patch(url, {"guarantee": 12}, format="json")
    assert cut.status_code == 200 and cut.json()["guarantee"] == 12
    quota.refresh_from_db()
    assert (quota.guarantee, quota.borrow_limit, quota.weight) == (12, 40, 2)


def test_a_growing_guarantee_is_still_checked(world: World, client_for, cluster: Cluster):
    shrink_pool(cluster)
    admin = client_for(world.platform_admin)
    quota = Quota.objects.get(tenant=world.tenant_a)
    grown = admin.patch(f"/api/v1/quotas/{quota.pk}/", {"guarantee": 17}, format="json")
    assert grown.status_code == 400
    assert grown.json()["errors"]["guarantee"] == [
        f"Guarantees in {cluster.pool.name} for A800 would total 33, but the pool has 24 "
        "(8 left to guarantee)."
    ]
    assert Quota.objects.get(pk=quota.pk).guarantee == 16
