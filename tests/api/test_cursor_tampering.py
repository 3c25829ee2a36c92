"""A cursor edited by hand is an invalid cursor (404), never a 500. DRF decodes the cursor and
puts the position it carries into the query as it is: a position that is not a number broke
every list ordered by id, and NUL every list."""

from __future__ import annotations

import base64

import pytest

from tests.factories import make_node, make_pool

pytestmark = pytest.mark.django_db


def _cursor(position: str) -> str:
    return base64.b64encode(f"p={position}".encode()).decode()


@pytest.mark.parametrize("position", ["abc", "", "1.5", "a\x00b", "1\x00", str(2**64)])
def test_a_tampered_cursor_is_an_invalid_cursor(world, client_for, position: str) -> None:
    make_node(pool=make_pool(), name="n0")
    admin = client_for(world.platform_admin)
    lists = (
        "/api/v1/health/nodes/",  # name order
        "/api/v1/health/incidents/",  # id order, as every other list
        "/api/v1/audit/",
        f"/api/v1/tenants/{world.tenant_a.slug}/jobs/",
    )
    for url in lists:
        answer = admin.get(url, {"cursor": _cursor(position)})
        if url.endswith("/health/nodes/") and "\x00" not in position:
            # Any text is a position in name order: the page after it.
            assert answer.status_code == 200, (url, answer.content)
        else:
            assert answer.status_code == 404, (url, position, answer.content)
            assert answer.json()["detail"] == "Invalid cursor"


def test_a_cursor_the_server_made_still_pages(world, client_for) -> None:
    pool = make_pool()
    for i in range(3):
        make_node(pool=pool, name=f"n{i}")
    admin = client_for(world.platform_admin)
    first = admin.get("/api/v1/health/nodes/", {"page_size": 2}).json()
    second = admin.get(first["next"]).json()
    assert [n["name"] for n in first["results"] + second["results"]] == ["n0", "n1", "n2"]
