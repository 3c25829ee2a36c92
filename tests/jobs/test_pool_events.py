"""``pools.changed``: the dashboard's topology follows its pool live, one event per commit.

The events go through the real Redis channel layer; ``django_capture_on_commit_callbacks``
runs what a commit would (the test's own transaction never commits)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine, Iterator
from typing import Any, TypeVar

import pytest
from channels.layers import get_channel_layer
from django.db import transaction

from apps.core import events
from apps.core.consumers import POOLS_GROUP
from apps.health import services as health
from apps.jobs import services as jobs
from apps.jobs.models import Job, JobState
from apps.scheduling.loop import run_cycle
from apps.tenancy.models import Role
from tests.conftest import World
from tests.factories import make_node, make_pool
from tests.jobs.conftest import Cluster, training_body

pytestmark = pytest.mark.django_db
T = TypeVar("T")


class Listener:
    """A channel in the ``pools`` group, as a dashboard's socket would be. Its own event loop,
    kept for its life: the Redis layer binds a channel's receive buffer to the first loop."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.layer = get_channel_layer()
        self.channel: str = self._run(self.layer.new_channel())
        self._run(self.layer.group_add(POOLS_GROUP, self.channel))

    def _run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout=10)

    def received(self, wait: float = 0.3) -> list[dict[str, Any]]:
        """Every payload that arrived, waiting ``wait`` seconds for each next one."""

        async def drain() -> list[dict[str, Any]]:
            got: list[dict[str, Any]] = []
            while True:
                try:
                    message = await asyncio.wait_for(self.layer.receive(self.channel), wait)
                except TimeoutError:
                    return got
                got.append(message["payload"])

        return self._run(drain())

    def close(self) -> None:
        self._run(self.layer.group_discard(POOLS_GROUP, self.channel))
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=5)


@pytest.fixture(autouse=True)
def standard_policy(settings: Any) -> None:
    settings.SCHEDULER_POLICY = "standard"  # admits the small test gangs at once


@pytest.fixture
def commits(django_capture_on_commit_callbacks: Any) -> Any:
    return django_capture_on_commit_callbacks


@pytest.fixture
def listener() -> Iterator[Listener]:
    # Earlier tests' transactions never commit here, so pools they noted may still wait.
    events._changed_pools().clear()
    listening = Listener()
    yield listening
    listening.close()


def _ids(payloads: list[dict[str, Any]]) -> list[list[int]]:
    assert all(p["type"] == "pools.changed" and p["topic"] == "pools" for p in payloads)
    return [p["data"]["ids"] for p in payloads]


def test_submitting_sends_one_event_for_the_pool(
    world: World, cluster: Cluster, client_for, listener: Listener, commits
) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    with commits(execute=True):
        response = client.post(
            "/api/v1/tenants/tenant-a/jobs/", training_body(cluster.pool), format="json"
        )
    assert response.status_code == 201, response.json()
    assert _ids(listener.received()) == [[cluster.pool.pk]]


def test_a_cycle_sends_one_event_however_many_it_admits(
    world: World, cluster: Cluster, client_for, listener: Listener, commits
) -> None:
    client = client_for(world.user("b", Role.MEMBER))
    for i in range(3):
        body = training_body(cluster.pool, name=f"small-{i}", replica_groups=[
            {"name": "worker", "replicas": 1, "accelerators": 8}])  # fmt: skip
        assert client.post("/api/v1/tenants/tenant-b/jobs/", body, format="json").status_code == 201
    with commits(execute=True) as callbacks:
        report = run_cycle()
    assert report.admitted == 3
    assert len(callbacks) > 1  # every admission registered the send ...
    assert _ids(listener.received()) == [[cluster.pool.pk]]  # ... and one went out
    # Nothing changed since: the next cycle sends nothing.
    with commits(execute=True):
        run_cycle()
    assert listener.received() == []


def test_moves_that_leave_the_topology_alone_send_nothing(
    world: World, cluster: Cluster, client_for, listener: Listener, commits
) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    response = client.post(
        "/api/v1/tenants/tenant-a/jobs/", training_body(cluster.pool), format="json"
    )
    job = Job.objects.get(pk=response.json()["id"])
    run_cycle()
    job.refresh_from_db()
    assert job.state == JobState.ADMITTED
    events._changed_pools().clear()  # what the test's transaction noted so far
    with commits(execute=True):
        jobs.transition(job, JobState.DISPATCHING, reason="Dispatching")
    assert listener.received() == []
    with commits(execute=True):
        jobs.transition(job, JobState.FAILED, reason="Failed")  # its allocation goes
    assert _ids(listener.received()) == [[cluster.pool.pk]]


def test_node_changes_send_their_pool(world: World, listener: Listener, commits) -> None:
    pools = [make_pool(), make_pool()]
    nodes = [make_node(pool=pool) for pool in pools]
    with commits(execute=True), transaction.atomic():
        health.cordon_node(node=nodes[0], reason="XID 79")
        health.set_spare(node=nodes[1], spare=True)
    assert _ids(listener.received()) == [sorted(p.pk for p in pools)]
    with commits(execute=True):
        health.uncordon_node(node=nodes[0])
    assert _ids(listener.received()) == [[pools[0].pk]]
    with commits(execute=True):
        assert not health.uncordon_node(node=nodes[0])  # no change, no event
    assert listener.received() == []
