"""The job list a researcher with hundreds of jobs works from: find by name, keep to one's
own, and walk every page (the dashboard showed the newest 100 and no way further)."""

from __future__ import annotations

import pytest

from apps.tenancy.models import Role
from tests.jobs.conftest import Cluster, training_body

pytestmark = pytest.mark.django_db


def test_name_and_owner_filters_and_every_page(world, client_for, cluster: Cluster) -> None:
    member = world.user("a", Role.MEMBER)
    admin = world.user("a", Role.TENANT_ADMIN)
    url = f"/api/v1/tenants/{world.tenant_a.slug}/jobs/"
    submitted = []
    for i in range(30):
        user = member if i % 3 else admin
        name = f"{'llama' if i % 2 else 'yolo'}-sft-{i:02d}"
        answer = client_for(user).post(url, training_body(cluster.pool, name=name), format="json")
        assert answer.status_code == 201, answer.json()
        submitted.append((answer.json()["id"], name, user.username))
    reader = client_for(world.user("a", Role.VIEWER))

    def ids(query: str) -> list[int]:
        found, page = [], f"{url}?page_size=7&{query}"
        while page:
            body = reader.get(page).json()
            found += [j["id"] for j in body["results"]]
            page = body["next"]
        return found

    newest_first = [i for i, _, _ in reversed(submitted)]
    assert ids("") == newest_first
    assert ids("name=LLAMA") == [i for i, n, _ in reversed(submitted) if "llama" in n]
    assert ids("name=sft-1") == [i for i, n, _ in reversed(submitted) if "sft-1" in n]
    assert ids(f"owner={admin.username}") == [
        i for i, _, u in reversed(submitted) if u == admin.username
    ]
    assert ids(f"owner={admin.username}&name=yolo") == [
        i for i, n, u in reversed(submitted) if u == admin.username and "yolo" in n
    ]
    assert ids("owner=nobody") == []
    # Another tenant's jobs stay out whatever the filters.
    other = client_for(world.user("b", Role.MEMBER)).get(f"{url}?name=llama")
    assert other.status_code == 404  # not a member: the tenant does not exist for them
    b_url = f"/api/v1/tenants/{world.tenant_b.slug}/jobs/?owner={member.username}"
    assert client_for(world.user("b", Role.MEMBER)).get(b_url).json()["results"] == []
    nul = reader.get(f"{url}?name=a%00b")
    assert nul.status_code == 400 and "name" in nul.json()["errors"]
