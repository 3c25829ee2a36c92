"""Websockets below ``/notebooks/<job id>/`` (Jupyter kernel channels, code-server's link):
passed through to the notebook with the same checks and token as the HTTP proxy.

The browser connects with its platform session; the consumer opens the upstream socket with
the notebook's token (``Authorization`` header) and copies frames both ways until either side
closes. A refusal closes with ``4000 + HTTP status`` (4403, 4404, 4409) before accepting.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, WebSocketException

from apps.accounts.models import User
from apps.core.ws_auth import TOKEN_SUBPROTOCOL_PREFIX
from apps.jobs.notebooks import Refusal, endpoint_for, notebook_for

CLOSE_UNAUTHENTICATED = 4401
CLOSE_UNREACHABLE = 4502
_PLATFORM_COOKIES = frozenset({"sessionid", "csrftoken"})


def _cookie_header(scope: dict[str, Any]) -> str:
    """The browser's cookies minus the platform's own, which stay with the platform."""
    for name, value in scope.get("headers") or []:
        if name == b"cookie":
            parts = [p.strip() for p in value.decode("latin-1").split(";") if p.strip()]
            kept = [p for p in parts if p.split("=", 1)[0] not in _PLATFORM_COOKIES]
            return "; ".join(kept)
    return ""


class NotebookSocketProxy(AsyncWebsocketConsumer):  # type: ignore[misc]  # channels is untyped
    upstream: ClientConnection | None = None
    pump: asyncio.Task[None] | None = None
    token: str = ""

    async def connect(self) -> None:
        user = self.scope.get("user")
        if not isinstance(user, User) or not user.is_active:
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        route = self.scope["url_route"]["kwargs"]
        try:
            job = await database_sync_to_async(notebook_for)(user, int(route["job_id"]))
            endpoint = await database_sync_to_async(endpoint_for)(job)
        except Refusal as refusal:
            await self.close(code=4000 + refusal.status)
            return
        url = "ws" + endpoint.base_url.removeprefix("http") + route["path"]
        query = self.scope.get("query_string", b"").decode("latin-1")
        if query:
            url += "?" + query
        headers = {"Authorization": f"token {endpoint.token}"}
        if cookies := _cookie_header(self.scope):
            headers["Cookie"] = cookies
        offered = [
            p
            for p in self.scope.get("subprotocols") or []
            if not p.startswith(TOKEN_SUBPROTOCOL_PREFIX)
        ]
        try:
            self.upstream = await connect(
                url,
                additional_headers=headers,
                subprotocols=offered or None,
                max_size=None,
                open_timeout=10,
            )
        except (OSError, TimeoutError, WebSocketException):
            await self.close(code=CLOSE_UNREACHABLE)
            return
        self.token = endpoint.token
        await self.accept(subprotocol=self.upstream.subprotocol)
        self.pump = asyncio.create_task(self._pump(self.upstream))

    async def _pump(self, upstream: ClientConnection) -> None:
        """Notebook to browser, until the notebook closes."""
        try:
            async for message in upstream:
                if isinstance(message, bytes):
                    await self.send(bytes_data=message)
                else:
                    await self.send(text_data=message.replace(self.token, ""))
        except ConnectionClosed:
            pass
        await self.close()

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        if self.upstream is None:
            return
        with contextlib.suppress(ConnectionClosed):
            await self.upstream.send(text_data if text_data is not None else bytes_data or b"")

    async def disconnect(self, code: int) -> None:
        if self.pump is not None and self.pump is not asyncio.current_task():
            self.pump.cancel()
        if self.upstream is not None:
            await self.upstream.close()
