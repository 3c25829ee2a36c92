"""Websocket authentication: the browser's session cookie, or an API token for scripts.

Scripts pass the token in the ``Sec-WebSocket-Protocol`` header as ``bearer.<token>`` (browsers
cannot set an Authorization header on a websocket; a query string would land in access logs).
"""

from __future__ import annotations

from typing import Any

from channels.auth import AuthMiddlewareStack
from channels.db import database_sync_to_async
from django.contrib.auth.models import AnonymousUser

from apps.accounts.authentication import user_for_token

Scope = dict[str, Any]

TOKEN_SUBPROTOCOL_PREFIX = "bearer."  # noqa: S105 - a protocol marker, not a secret


def token_from_scope(scope: Scope) -> str | None:
    for protocol in scope.get("subprotocols") or []:
        if protocol.startswith(TOKEN_SUBPROTOCOL_PREFIX):
            return str(protocol[len(TOKEN_SUBPROTOCOL_PREFIX) :])
    return None


class _TokenAuthMiddleware:
    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> Any:
        token = token_from_scope(scope)
        if token is not None:
            user = await database_sync_to_async(user_for_token)(token)
            scope = {**scope, "user": user or AnonymousUser(), "auth_via": "token"}
        return await self.inner(scope, receive, send)


def TokenOrSessionAuthMiddleware(inner: Any) -> Any:  # noqa: N802 - mirrors AuthMiddlewareStack
    """Session auth first (sets scope["user"]); a bearer subprotocol then overrides it."""
    return AuthMiddlewareStack(_TokenAuthMiddleware(inner))
