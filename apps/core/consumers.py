"""The one multiplexed websocket of the dashboard: ``/ws/v1/events/``.

Protocol (documented in docs/websockets.md): the client sends
``{"action": "subscribe", "topic": "tenant:<slug>"}`` (or ``"pools"``); the server answers
``{"type": "subscribed", "topic": ...}`` or ``{"type": "error", ...}`` and then pushes
``{"type": <event>, "topic": ..., "seq": n, "data": {...}}`` messages. Every subscription is
authorized on its own; connecting proves only who the user is.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from apps.accounts.models import User
from apps.core.ws_auth import token_from_scope
from apps.tenancy.models import Tenant
from apps.tenancy.selectors import role_in

CLOSE_UNAUTHENTICATED = 4401
CLOSE_TRY_AGAIN = 1013  # RFC 6455 "try again later": the channel layer (Redis) is down
# What a lost channel layer raises (redis-py's errors subclass neither; OSError covers refusals).
LAYER_DOWN = (RedisConnectionError, RedisTimeoutError, OSError, TimeoutError)
log = logging.getLogger("zhisuan.events")
MAX_TOPIC = 200  # longer than any real topic (a kind, a colon, a slug, id or node name)


class JsonSocket(AsyncJsonWebsocketConsumer):  # type: ignore[misc]  # channels is untyped
    """A JSON websocket whose client's bad frame gets an error message back: channels would
    raise on a frame that is not JSON text, closing the socket with a traceback logged."""

    async def receive(
        self, text_data: str | None = None, bytes_data: bytes | None = None, **kwargs: Any
    ) -> None:
        try:
            content = await self.decode_json(text_data) if text_data is not None else None
        except ValueError:  # json.JSONDecodeError included
            content = None
        if content is None:
            await self.send_json({"type": "error", "detail": "frames must be JSON text"})
            return
        await self.receive_json(content, **kwargs)


def usable_topic(topic: str) -> bool:
    """Whether a topic can be looked up at all: PostgreSQL refuses NUL in a compared string
    (a 500's worth of traceback, and the socket closed), and no real topic is long (the
    longest names, of nodes, are at most 128 characters)."""
    return len(topic) <= MAX_TOPIC and "\x00" not in topic


def tenant_group(tenant_id: int) -> str:
    return f"tenant.{tenant_id}"


POOLS_TOPIC = "pools"
"""Which pools changed (allocations, queue, holds, nodes): counts only, for any user, as
``GET /api/v1/pools/{id}/topology/`` is."""
POOLS_GROUP = "pools"


def _authorize_tenant(user: User, slug: str) -> int | None:
    tenant = Tenant.objects.filter(slug=slug).first()
    if tenant is None or role_in(user, tenant) is None:
        return None
    return tenant.id


class EventsConsumer(JsonSocket):
    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """A channel layer lost mid-connection ends the socket with 1013, one log line, and
        no traceback per client: clients reconnect and resync from REST."""
        try:
            await super().__call__(scope, receive, send)
        except LAYER_DOWN as exc:
            log.warning("events socket closed, channel layer unavailable: %s", exc)
            with contextlib.suppress(Exception):  # the socket may already be gone
                await send({"type": "websocket.close", "code": CLOSE_TRY_AGAIN})

    async def connect(self) -> None:
        user = self.scope.get("user")
        if not isinstance(user, User) or not user.is_active:
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        if not await self._layer_reachable():
            # Refused before the handshake completes, so the client's backoff keeps growing
            # (it resets only on open) instead of a reconnect storm while Redis is down.
            await self.close(code=CLOSE_TRY_AGAIN)
            return
        self.user = user
        self.groups_joined: dict[str, str] = {}
        token = token_from_scope(self.scope)
        await self.accept(subprotocol=f"bearer.{token}" if token else None)

    async def _layer_reachable(self) -> bool:
        try:
            await asyncio.wait_for(
                self.channel_layer.send(self.channel_name, {"type": "layer.probe"}), timeout=2
            )
        except LAYER_DOWN:
            return False
        return True

    async def layer_probe(self, event: dict[str, Any]) -> None:
        """Our own connect-time probe comes back through the layer: nothing to do."""

    async def disconnect(self, code: int) -> None:
        for group in getattr(self, "groups_joined", {}).values():
            try:
                await self.channel_layer.group_discard(group, self.channel_name)
            except LAYER_DOWN:
                return  # the layer is gone, and its groups with it

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        if not isinstance(content, dict) or content.get("action") not in {
            "subscribe",
            "unsubscribe",
        }:
            await self.send_json({"type": "error", "detail": "unknown action"})
            return
        topic = str(content.get("topic", ""))
        kind, _, key = topic.partition(":")
        if topic != POOLS_TOPIC and (kind != "tenant" or not key or not usable_topic(topic)):
            await self.send_json(
                {"type": "error", "topic": topic[:MAX_TOPIC], "detail": "unknown topic"}
            )
            return
        if content["action"] == "unsubscribe":
            group = self.groups_joined.pop(topic, None)
            if group:
                await self.channel_layer.group_discard(group, self.channel_name)
            await self.send_json({"type": "unsubscribed", "topic": topic})
            return
        if topic == POOLS_TOPIC:
            group = POOLS_GROUP
        else:
            tenant_id: int | None = await database_sync_to_async(_authorize_tenant)(self.user, key)
            if tenant_id is None:
                # Same answer for "no such tenant" and "not yours": existence is not leaked.
                await self.send_json({"type": "error", "topic": topic, "detail": "forbidden"})
                return
            group = tenant_group(tenant_id)
        await self.channel_layer.group_add(group, self.channel_name)
        self.groups_joined[topic] = group
        await self.send_json({"type": "subscribed", "topic": topic})

    async def event_message(self, event: dict[str, Any]) -> None:
        """Group messages of type ``event.message`` carry a ready payload to forward."""
        await self.send_json(event["payload"])
