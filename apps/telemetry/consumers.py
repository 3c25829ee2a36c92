"""``/ws/v1/telemetry/``: live telemetry views, one frame per view per second.

Same authentication (session or ``bearer.<token>`` subprotocol) and origin check as
``/ws/v1/events/``; every subscribe is authorized (``selectors.authorize_view``). Frames
arrive pre-encoded from the collector and are forwarded as text, never decoded per client.
A client that cannot keep up is not sent a backlog: frames waiting for it are merged per topic
(:mod:`apps.telemetry.coalesce`, memoised per process, so sockets that lag together share one
merge), and it gets the newest state as one delta. Frames travel on the ``telemetry`` channel
layer (Redis pub/sub: one copy per web process, not per socket) when configured. Group
membership is re-asserted every few seconds, which heals a Redis restart.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

from channels.db import database_sync_to_async

from apps.accounts.models import User
from apps.core.consumers import CLOSE_UNAUTHENTICATED, MAX_TOPIC, JsonSocket, usable_topic
from apps.core.ws_auth import token_from_scope
from apps.telemetry import live
from apps.telemetry.coalesce import coalescer
from apps.telemetry.frames import View
from apps.telemetry.selectors import authorize_view

log = logging.getLogger("zhisuan.telemetry")
REFRESH_S = 3.0
MAX_TOPICS = 32
# topic -> when this process last renewed the view's lease: one renewal per process per
# REFRESH_S, however many sockets watch the view (100 dashboards are not 100 Redis writes).
_renewed: dict[str, float] = {}


class TelemetryConsumer(JsonSocket):
    @property
    def channel_layer_alias(self) -> str:  # read per connection: settings may change (tests)
        return live.layer_alias()

    async def connect(self) -> None:
        user = self.scope.get("user")
        if not isinstance(user, User) or not user.is_active:
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        self.user = user
        self.views: dict[str, View] = {}
        self.pending: dict[str, str] = {}  # topic -> encoded frame not yet sent
        self.wakeup = asyncio.Event()
        token = token_from_scope(self.scope)
        await self.accept(subprotocol=f"bearer.{token}" if token else None)
        self.sender = asyncio.create_task(self._send_loop())

    async def disconnect(self, code: int) -> None:
        sender = getattr(self, "sender", None)
        if sender is not None:
            sender.cancel()
        for view in getattr(self, "views", {}).values():
            try:
                await self.channel_layer.group_discard(view.group, self.channel_name)
            except Exception:  # Redis down: the group entry expires by itself
                log.debug("group_discard failed", exc_info=True)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        action = content.get("action") if isinstance(content, dict) else None
        if action not in {"subscribe", "unsubscribe"}:
            await self.send_json({"type": "error", "detail": "unknown action"})
            return
        topic = str(content.get("topic", ""))
        if action == "unsubscribe":
            view = self.views.pop(topic, None)
            self.pending.pop(topic, None)
            if view is not None:
                await self.channel_layer.group_discard(view.group, self.channel_name)
            await self.send_json({"type": "unsubscribed", "topic": topic})
            return
        if not usable_topic(topic):
            await self.send_json(
                {"type": "error", "topic": topic[:MAX_TOPIC], "detail": "forbidden"}
            )
            return
        if len(self.views) >= MAX_TOPICS and topic not in self.views:
            await self.send_json({"type": "error", "topic": topic, "detail": "too many topics"})
            return
        found: View | None = await database_sync_to_async(authorize_view)(self.user, topic)
        if found is None:
            # One answer for "no such thing" and "not yours": existence is not leaked.
            await self.send_json({"type": "error", "topic": topic, "detail": "forbidden"})
            return
        self.views[topic] = found
        await self.channel_layer.group_add(found.group, self.channel_name)
        await database_sync_to_async(live.touch_view)(found)
        await self.send_json({"type": "subscribed", "topic": topic})

    async def telemetry_frame(self, message: dict[str, Any]) -> None:
        """A frame from the collector: queue it, merging with an unsent one (coalescing)."""
        topic = message["topic"]
        if topic not in self.views:
            return
        older = self.pending.get(topic)
        text: str = message["text"]
        self.pending[topic] = text if older is None else coalescer.merge_text(older, text)
        self.wakeup.set()

    async def _send_loop(self) -> None:
        """Drain pending frames; while a send waits on a slow socket, new frames merge."""
        loop = asyncio.get_running_loop()
        next_refresh = loop.time() + REFRESH_S
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.wakeup.wait(), timeout=REFRESH_S)
            self.wakeup.clear()
            while self.pending:
                topic = next(iter(self.pending))
                await self.send(text_data=self.pending.pop(topic))
            if loop.time() >= next_refresh:
                next_refresh = loop.time() + REFRESH_S
                await self._refresh()

    async def _refresh(self) -> None:
        """Keep the views watched and the group memberships present (Redis may have restarted)."""
        for view in list(self.views.values()):
            try:
                await self.channel_layer.group_add(view.group, self.channel_name)
                if time.monotonic() - _renewed.get(view.topic, float("-inf")) >= REFRESH_S:
                    await database_sync_to_async(live.touch_view)(view)
                    _renewed[view.topic] = time.monotonic()
            except Exception:  # retried on the next refresh
                log.debug("telemetry refresh failed", exc_info=True)
