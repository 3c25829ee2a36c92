"""The one multiplexed websocket of the dashboard: ``/ws/v1/events/``.

Protocol (documented in docs/websockets.md): the client sends
``{"action": "subscribe", "topic": "tenant:<slug>"}``; the server answers
``{"type": "subscribed", "topic": ...}`` or ``{"type": "error", ...}`` and then pushes
``{"type": <event>, "topic": ..., "seq": n, "data": {...}}`` messages. Every subscription is
authorized on its own; connecting proves only who the user is.
"""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from apps.accounts.models import User
from apps.core.ws_auth import token_from_scope
from apps.tenancy.models import Tenant
from apps.tenancy.selectors import role_in

CLOSE_UNAUTHENTICATED = 4401


def tenant_group(tenant_id: int) -> str:
    return f"tenant.{tenant_id}"


def _authorize_tenant(user: User, slug: str) -> int | None:
    tenant = Tenant.objects.filter(slug=slug).first()
    if tenant is None or role_in(user, tenant) is None:
        return None
    return tenant.id


class EventsConsumer(AsyncJsonWebsocketConsumer):  # type: ignore[misc]  # channels is untyped
    async def connect(self) -> None:
        user = self.scope.get("user")
        if not isinstance(user, User) or not user.is_active:
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        self.user = user
        self.groups_joined: dict[str, str] = {}
        token = token_from_scope(self.scope)
        await self.accept(subprotocol=f"bearer.{token}" if token else None)

    async def disconnect(self, code: int) -> None:
        for group in getattr(self, "groups_joined", {}).values():
            await self.channel_layer.group_discard(group, self.channel_name)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        if not isinstance(content, dict) or content.get("action") not in {
            "subscribe",
            "unsubscribe",
        }:
            await self.send_json({"type": "error", "detail": "unknown action"})
            return
        topic = str(content.get("topic", ""))
        kind, _, key = topic.partition(":")
        if kind != "tenant" or not key:
            await self.send_json({"type": "error", "topic": topic, "detail": "unknown topic"})
            return
        if content["action"] == "unsubscribe":
            group = self.groups_joined.pop(topic, None)
            if group:
                await self.channel_layer.group_discard(group, self.channel_name)
            await self.send_json({"type": "unsubscribed", "topic": topic})
            return
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
