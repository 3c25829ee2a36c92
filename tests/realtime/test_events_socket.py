"""The dashboard websocket: authentication, origin checks and per-subscription authorization."""

from __future__ import annotations

import pytest
import pytest_asyncio
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator

from apps.accounts.services import create_token
from apps.core.consumers import POOLS_GROUP, tenant_group
from apps.tenancy.models import Role
from config.asgi import application
from tests.conftest import World

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

ORIGIN = (b"origin", b"http://127.0.0.1:8000")


def communicator(token: str | None = None, origin: tuple[bytes, bytes] = ORIGIN):
    protocols = [f"bearer.{token}"] if token else []
    return WebsocketCommunicator(
        application, "/ws/v1/events/", headers=[origin, (b"host", b"127.0.0.1:8000")],
        subprotocols=protocols,
    )  # fmt: skip


async def token_for(world: World, tenant: str, role: Role) -> str:
    user = world.user(tenant, role)
    _row, plaintext = await database_sync_to_async(create_token)(user=user, name="ws")
    return plaintext


@pytest_asyncio.fixture
async def world_async(db) -> World:
    return await database_sync_to_async(World)()


async def test_unauthenticated_connection_is_refused(world_async: World) -> None:
    connected, code = await communicator().connect()
    assert not connected and code == 4401


async def test_bad_token_is_refused(world_async: World) -> None:
    connected, code = await communicator("zs_bad_token").connect()
    assert not connected and code == 4401


async def test_foreign_origin_is_refused(world_async: World) -> None:
    token = await token_for(world_async, "a", Role.MEMBER)
    comm = communicator(token, origin=(b"origin", b"https://evil.example.com"))
    connected, _code = await comm.connect()
    assert not connected


async def test_subscribe_own_tenant_and_receive_events(world_async: World) -> None:
    token = await token_for(world_async, "a", Role.VIEWER)
    comm = communicator(token)
    connected, _ = await comm.connect()
    assert connected
    await comm.send_json_to({"action": "subscribe", "topic": "tenant:tenant-a"})
    assert await comm.receive_json_from() == {"type": "subscribed", "topic": "tenant:tenant-a"}
    payload = {"type": "job.updated", "topic": "tenant:tenant-a", "seq": 1, "data": {"id": 7}}
    await get_channel_layer().group_send(
        tenant_group(world_async.tenant_a.pk), {"type": "event.message", "payload": payload}
    )
    assert await comm.receive_json_from(timeout=3) == payload
    await comm.disconnect()


async def test_subscribing_to_another_tenant_is_refused(world_async: World) -> None:
    token = await token_for(world_async, "a", Role.TENANT_ADMIN)
    comm = communicator(token)
    await comm.connect()
    for topic in ("tenant:tenant-b", "tenant:does-not-exist"):
        await comm.send_json_to({"action": "subscribe", "topic": topic})
        assert await comm.receive_json_from() == {
            "type": "error",
            "topic": topic,
            "detail": "forbidden",
        }
    # Nothing published to tenant B reaches this client.
    await get_channel_layer().group_send(
        tenant_group(world_async.tenant_b.pk),
        {"type": "event.message", "payload": {"type": "job.updated", "seq": 1, "data": {}}},
    )
    assert await comm.receive_nothing(timeout=0.5)
    await comm.disconnect()


async def test_bad_frames_get_an_error_and_the_socket_stays_open(world_async: World) -> None:
    """Channels raises on a frame that is not JSON text, which closed the socket with a
    traceback; a topic with NUL reached PostgreSQL the same way."""
    token = await token_for(world_async, "a", Role.MEMBER)
    comm = communicator(token)
    assert (await comm.connect())[0]
    not_json = {"type": "error", "detail": "frames must be JSON text"}
    await comm.send_to(text_data="{not json")
    assert await comm.receive_json_from() == not_json
    await comm.send_to(bytes_data=b"\x00\x01")
    assert await comm.receive_json_from() == not_json
    for topic in ("tenant:tenant-a\u0000", "tenant:" + "a" * 5000):
        await comm.send_json_to({"action": "subscribe", "topic": topic})
        answer = await comm.receive_json_from()
        assert answer == {"type": "error", "topic": topic[:200], "detail": "unknown topic"}
    # Still open, and a good subscription still works.
    await comm.send_json_to({"action": "subscribe", "topic": "tenant:tenant-a"})
    assert await comm.receive_json_from() == {"type": "subscribed", "topic": "tenant:tenant-a"}
    await comm.disconnect()


async def test_any_signed_in_user_follows_which_pools_changed(world_async: World) -> None:
    """Counts only, like the topology endpoint: a viewer of any tenant may follow them."""
    token = await token_for(world_async, "b", Role.VIEWER)
    comm = communicator(token)
    assert (await comm.connect())[0]
    await comm.send_json_to({"action": "subscribe", "topic": "pools"})
    assert await comm.receive_json_from() == {"type": "subscribed", "topic": "pools"}
    payload = {"type": "pools.changed", "topic": "pools", "seq": 3, "data": {"ids": [1, 2]}}
    await get_channel_layer().group_send(POOLS_GROUP, {"type": "event.message", "payload": payload})
    assert await comm.receive_json_from(timeout=3) == payload
    await comm.send_json_to({"action": "subscribe", "topic": "pools:1"})  # no such topic
    assert await comm.receive_json_from() == {
        "type": "error", "topic": "pools:1", "detail": "unknown topic"
    }  # fmt: skip
    await comm.disconnect()
