"""The node health grid at cluster scale: pages in name order, filters, and counts that no
single page could give (a 10,000-GPU cluster has 1,250 nodes; the grid showed the first 500)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.clusters.models import Node, NodeHealth
from apps.tenancy.models import Role
from tests.factories import make_cluster, make_pool

pytestmark = pytest.mark.django_db
NODES = "/api/v1/health/nodes/"


def _fleet() -> list[Node]:
    """1,250 nodes over two clusters that reuse names; every 100th faulty, every 50th
    (not faulty) degraded, the first three cordoned, the last a spare."""
    rows = []
    for c, count in (("east", 1_000), ("west", 250)):
        pool = make_pool(make_cluster(c), name=f"{c}-train")
        for i in range(count):
            health = (
                NodeHealth.FAULTY if i % 100 == 7
                else NodeHealth.DEGRADED if i % 50 == 7
                else NodeHealth.HEALTHY
            )  # fmt: skip
            rows.append(Node(
                cluster=pool.cluster, pool=pool, name=f"gpu-{i:04d}", cpu_milli=1, memory_mib=1,
                accelerator_model="A800", accelerator_count=8, health=health,
                cordoned=c == "east" and i < 3, is_spare=c == "west" and i == count - 1,
            ))  # fmt: skip
    return Node.objects.bulk_create(rows)


def test_every_node_is_reachable_a_page_at_a_time_in_name_order(world, client_for) -> None:
    _fleet()
    admin = client_for(world.platform_admin)
    seen: list[tuple[str, int]] = []
    url: str | None = f"{NODES}?page_size=500"
    with CaptureQueriesContext(connection) as queries:
        while url is not None:
            page = admin.get(url)
            assert page.status_code == 200
            body = page.json()
            seen += [(n["name"], n["id"]) for n in body["results"]]
            url = body["next"]
    assert len(seen) == 1_250 and len({i for _, i in seen}) == 1_250
    assert seen == sorted(seen)  # names shared by both clusters: the id breaks the tie
    # A constant number of queries a page (the checks and incidents are not fetched per node).
    assert len(queries) <= 3 * 5


def test_filters_select_the_nodes_an_operator_looks_for(world, client_for) -> None:
    _fleet()
    admin = client_for(world.platform_admin)

    def names(query: str) -> list[str]:
        body = admin.get(f"{NODES}?page_size=500&{query}").json()
        assert body["next"] is None
        return [n["name"] for n in body["results"]]

    faulty = names("health=faulty")
    assert len(faulty) == 13 and all(n.endswith("07") for n in faulty)  # 10 east + 3 west
    assert len(names("health=faulty&health=degraded")) == 25
    assert names("health=degraded&pool=west-train") == ["gpu-0057", "gpu-0157"]
    assert names("name=GPU-012") == [f"gpu-{i:04d}" for i in range(120, 130) for _ in (0, 1)]
    assert names("cordoned=true") == ["gpu-0000", "gpu-0001", "gpu-0002"]
    assert names("is_spare=true") == ["gpu-0249"]
    bad = admin.get(f"{NODES}?health=broken")
    assert bad.status_code == 400 and "health" in bad.json()["errors"]


def test_summary_counts_the_whole_fleet_or_what_the_filters_select(world, client_for) -> None:
    _fleet()
    admin = client_for(world.platform_admin)
    whole = admin.get(f"{NODES}summary/").json()
    assert whole == {"total": 1_250, "healthy": 1_225, "degraded": 12, "faulty": 13,
                     "cordoned": 3, "spare": 1}  # fmt: skip
    west = admin.get(f"{NODES}summary/?pool=west-train").json()
    assert west == {"total": 250, "healthy": 245, "degraded": 2, "faulty": 3,
                    "cordoned": 0, "spare": 1}  # fmt: skip


def test_summary_is_for_platform_admins_only(world, client_for) -> None:
    for role in (Role.TENANT_ADMIN, Role.MEMBER, Role.VIEWER):
        assert client_for(world.user("a", role)).get(f"{NODES}summary/").status_code == 403
    assert client_for(None).get(f"{NODES}summary/").status_code in (401, 403)
