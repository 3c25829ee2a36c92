"""/ws/v1/telemetry/: authentication, per-subscription authorization, sequence numbers,
reconnect + REST resync, and recovery from a Redis restart."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import pytest_asyncio
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from rest_framework.test import APIClient

from apps.accounts.models import User
from apps.accounts.services import create_token
from apps.telemetry import live
from apps.telemetry.coalesce import header
from apps.telemetry.collector import Collector
from apps.telemetry.frames import apply, encode
from apps.tenancy.models import Role
from config.asgi import application
from tests.conftest import World
from tests.net import free_port
from tests.telemetry.helpers import Cluster, make_cluster

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

ORIGIN = (b"origin", b"http://127.0.0.1:8000")


def communicator(token: str | None = None, origin: tuple[bytes, bytes] = ORIGIN):
    return WebsocketCommunicator(
        application, "/ws/v1/telemetry/", headers=[origin, (b"host", b"127.0.0.1:8000")],
        subprotocols=[f"bearer.{token}"] if token else [],
    )  # fmt: skip


async def token_for(user: User) -> str:
    return (await database_sync_to_async(create_token)(user=user, name="ws"))[1]


@pytest.fixture(autouse=True)
def _fresh_live_state() -> Iterator[None]:
    live.reset()
    yield
    live.reset()


@pytest_asyncio.fixture
async def setup(db: Any) -> tuple[World, Cluster, Collector]:
    def build() -> tuple[World, Cluster, Collector]:
        world = World()
        return world, make_cluster(world), Collector(rollups=False)

    return await database_sync_to_async(build)()


async def subscribe(comm: WebsocketCommunicator, topic: str) -> dict[str, Any]:
    await comm.send_json_to({"action": "subscribe", "topic": topic})
    return dict(await comm.receive_json_from(timeout=3))


async def tick(collector: Collector) -> None:
    await database_sync_to_async(collector.tick)()


async def test_refused_without_credentials_or_from_a_foreign_origin(setup) -> None:
    world, _cluster, _collector = setup
    connected, code = await communicator().connect(timeout=10)
    assert (connected, code) == (False, 4401)
    token = await token_for(world.user("a", Role.MEMBER))
    connected, _ = await communicator(token, (b"origin", b"https://evil.example.com")).connect(
        timeout=10
    )
    assert not connected


async def test_bad_frames_and_unusable_topics_get_an_error(setup) -> None:
    world, _cluster, _collector = setup
    comm = communicator(await token_for(world.user("a", Role.VIEWER)))
    assert (await comm.connect(timeout=10))[0]
    await comm.send_to(text_data="[1, 2")
    assert await comm.receive_json_from(timeout=3) == {
        "type": "error", "detail": "frames must be JSON text"
    }  # fmt: skip
    for topic in ("node:gpu-00\u0000", "job:" + "9" * 500):
        assert await subscribe(comm, topic) == {
            "type": "error", "topic": topic[:200], "detail": "forbidden"
        }  # fmt: skip
    assert await subscribe(comm, "heatmap:tenant-a") == {
        "type": "subscribed", "topic": "heatmap:tenant-a"
    }  # fmt: skip
    await comm.disconnect()


async def test_tenant_sees_only_its_own_job_and_devices(setup) -> None:
    world, cluster, collector = setup
    comm = communicator(await token_for(world.user("a", Role.VIEWER)))
    assert (await comm.connect(timeout=10))[0]
    forbidden = [f"job:{cluster.job_b.id}", "job:999999", "heatmap", "heatmap:tenant-b",
                 "node:gpu-00", "bogus"]  # fmt: skip
    for topic in forbidden:
        assert await subscribe(comm, topic) == {
            "type": "error", "topic": topic, "detail": "forbidden"
        }  # fmt: skip
    assert [v.topic for v in live.active_views()] == []  # nothing subscribed, nothing cut
    for topic in (f"job:{cluster.job_a.id}", "heatmap:tenant-a"):
        assert await subscribe(comm, topic) == {"type": "subscribed", "topic": topic}
    await tick(collector)
    frames = {}
    for _ in range(2):
        frame = await comm.receive_json_from(timeout=3)
        frames[frame["topic"]] = frame
    own = ["gpu-00:0", "gpu-00:1", "gpu-00:2", "gpu-00:3"]
    assert sorted(frames["heatmap:tenant-a"]["data"]["cells"]) == own
    assert sorted(frames[f"job:{cluster.job_a.id}"]["data"]["cells"]) == own
    assert frames[f"job:{cluster.job_a.id}"]["data"]["summary"]["job"]["gpus"] == 4
    cell = frames["heatmap:tenant-a"]["data"]["cells"]["gpu-00:0"]
    assert 70 <= cell[0] <= 98 and 250 <= cell[3] <= 400
    assert await comm.receive_nothing(timeout=0.3)
    await comm.disconnect()


async def test_admin_heatmap_frames_carry_increasing_sequence_numbers(setup) -> None:
    world, _cluster, collector = setup
    comm = communicator(await token_for(world.platform_admin))
    await comm.connect(timeout=10)
    assert (await subscribe(comm, "heatmap"))["type"] == "subscribed"
    seqs: list[tuple[int, int]] = []
    cells: dict[str, list[int]] = {}
    for _ in range(4):
        await tick(collector)
        frame = await comm.receive_json_from(timeout=3)
        seqs.append((frame["seq"], frame["base"]))
        cells = apply(cells, frame)
    assert seqs == [(1, 0), (2, 1), (3, 2), (4, 3)]
    assert len(cells) == 16  # every GPU of both nodes
    assert cells["gpu-01:7"][0] == 0 and cells["gpu-01:0"][0] >= 70
    await comm.disconnect()


async def test_frames_reach_the_socket_as_the_collector_encoded_them(setup) -> None:
    """The consumer forwards text; it does not decode and re-encode per socket."""
    world, _cluster, collector = setup
    comm = communicator(await token_for(world.platform_admin))
    await comm.connect(timeout=10)
    assert (await subscribe(comm, "heatmap"))["type"] == "subscribed"
    await tick(collector)
    text = await comm.receive_from(timeout=3)
    assert header(text) is not None and text == encode(json.loads(text))
    await comm.disconnect()


async def test_reconnect_then_resync_from_the_rest_snapshot(setup) -> None:
    world, _cluster, collector = setup
    user = world.user("a", Role.MEMBER)
    topic = "heatmap:tenant-a"
    comm = communicator(await token_for(user))
    await comm.connect(timeout=10)
    await subscribe(comm, topic)
    await tick(collector)
    first = await comm.receive_json_from(timeout=3)
    await comm.disconnect()
    await tick(collector)  # missed while away
    await tick(collector)

    comm = communicator(await token_for(user))
    await comm.connect(timeout=10)
    await subscribe(comm, topic)
    await tick(collector)
    frame = await comm.receive_json_from(timeout=3)
    assert frame["base"] != first["seq"]  # a gap: the client must resync

    def fetch() -> dict[str, Any]:
        client = APIClient()
        client.force_authenticate(user)
        response = client.get("/api/v1/telemetry/snapshot/", {"topic": topic})
        assert response.status_code == 200
        return dict(response.json())

    snap = await database_sync_to_async(fetch)()
    assert (snap["seq"], snap["base"], snap["epoch"]) == (frame["seq"], 0, frame["epoch"])
    cells = apply({}, snap)
    await tick(collector)
    nxt = await comm.receive_json_from(timeout=3)
    assert nxt["base"] == snap["seq"]
    cells = apply(cells, nxt)
    assert cells == (await database_sync_to_async(fetch)())["data"]["cells"]
    await comm.disconnect()


def _start_redis(port: int) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    for _ in range(50):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            return proc
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("redis-server did not start")


@pytest_asyncio.fixture(params=["core", "pubsub"])
async def own_redis(settings, request) -> AsyncIterator[int]:
    """A throwaway Redis for the channel layers, so restarting it disturbs no one else.
    ``pubsub``: frames on the Redis pub/sub layer, as production configures telemetry."""
    port = free_port()
    proc = _start_redis(port)
    hosts = [f"redis://127.0.0.1:{port}/0"]
    layers: dict[str, Any] = {
        "default": {"BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": {"hosts": hosts}}
    }
    if request.param == "pubsub":
        layers["telemetry"] = {
            "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
            "CONFIG": {"hosts": hosts},
        }
    settings.CHANNEL_LAYERS = layers
    yield port
    proc.terminate()
    proc.wait(5)


async def test_clients_recover_within_ten_seconds_of_a_redis_restart(setup, own_redis) -> None:
    world, _cluster, collector = setup
    token = await token_for(world.platform_admin)

    async def connect() -> WebsocketCommunicator:
        comm = communicator(token)
        assert (await comm.connect(timeout=10))[0]
        assert (await subscribe(comm, "cluster"))["type"] == "subscribed"
        return comm

    clients = [await connect() for _ in range(3)]
    await tick(collector)
    for client in clients:
        assert (await client.receive_json_from(timeout=3))["topic"] == "cluster"

    subprocess.run(["redis-cli", "-p", str(own_redis), "shutdown", "nosave"], check=False)
    await asyncio.sleep(0.5)
    restarted = _start_redis(own_redis)
    own_redis_restarted.append(restarted)
    began = time.monotonic()

    async def ticker() -> None:
        while True:
            await tick(collector)
            await asyncio.sleep(0.5)

    task = asyncio.create_task(ticker())
    recovered = []

    async def reconnect() -> WebsocketCommunicator | None:
        """What a browser does on close: reconnect (with a short backoff) and resubscribe."""
        try:
            return await connect()
        except Exception:  # noqa: BLE001 - Redis still coming back: try again
            await asyncio.sleep(0.5)
            return None

    try:
        for i in range(len(clients)):
            comm: WebsocketCommunicator | None = clients[i]
            while time.monotonic() - began < 10:
                if comm is None:
                    comm = await reconnect()
                    if comm is not None:
                        clients[i] = comm
                    continue
                try:
                    frame = await comm.receive_json_from(timeout=1)
                except TimeoutError:
                    continue
                except Exception:  # noqa: BLE001 - the consumer lost Redis and closed
                    comm = None
                    continue
                if frame.get("type") == "telemetry.frame":
                    recovered.append(time.monotonic() - began)
                    break
    finally:
        task.cancel()
        for comm in clients:
            with contextlib.suppress(Exception):  # an old socket that died with Redis
                await comm.disconnect()
    assert len(recovered) == 3 and max(recovered) < 10


own_redis_restarted: list[subprocess.Popen[bytes]] = []


@pytest.fixture(autouse=True)
def _stop_restarted_redis() -> Iterator[None]:
    yield
    while own_redis_restarted:
        proc = own_redis_restarted.pop()
        proc.terminate()
        proc.wait(5)
