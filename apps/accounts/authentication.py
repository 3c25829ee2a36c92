"""DRF authentication: bearer API tokens and browser sessions with CSRF."""

from __future__ import annotations

import logging
from datetime import timedelta

from django.utils import timezone
from rest_framework import authentication, exceptions
from rest_framework.permissions import SAFE_METHODS
from rest_framework.request import Request

from apps.accounts import tokens
from apps.accounts.models import ApiToken, User

log = logging.getLogger("zhisuan.auth")

# Writing last_used_at on every request would turn each read into a write.
_LAST_USED_GRANULARITY = timedelta(minutes=1)


def user_for_token(plaintext: str) -> User | None:
    """The active user a token belongs to, or None (unknown, malformed, revoked or expired)."""
    token = active_token(plaintext)
    return token.user if token is not None else None


def active_token(plaintext: str) -> ApiToken | None:
    """The token, when it is active and its user too; None otherwise."""
    parts = tokens.split(plaintext)
    if parts is None:
        return None
    prefix, secret = parts
    token = ApiToken.objects.select_related("user").filter(prefix=prefix).first()
    if token is None or not tokens.matches(secret, token.digest) or not token.is_active:
        return None
    if not token.user.is_active:
        return None
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at > _LAST_USED_GRANULARITY:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token


class ApiTokenAuthentication(authentication.BaseAuthentication):
    """``Authorization: Bearer zs_...``. A bad token is a 401, never a silent anonymous user."""

    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[User, ApiToken] | None:
        header = authentication.get_authorization_header(request).decode("latin-1")
        if not header:
            return None
        keyword, _, credential = header.partition(" ")
        if keyword != self.keyword:
            return None
        token = active_token(credential.strip())
        if token is None:
            # The prefix is logged to trace abuse; the secret never is.
            parts = tokens.split(credential.strip())
            log.warning(
                "token authentication failed: prefix=%s path=%s",
                parts[0] if parts else "malformed",
                request.path,
            )
            raise exceptions.AuthenticationFailed("Invalid, expired or revoked token.")
        if token.read_only and request.method not in SAFE_METHODS:
            # Refused here, before any view's own permissions: no view can forget it.
            raise exceptions.PermissionDenied(
                "This API token is read-only; use a token that may write."
            )
        return token.user, token

    def authenticate_header(self, request: Request) -> str:
        return self.keyword


class CsrfSessionAuthentication(authentication.SessionAuthentication):
    """Session login for the browser. CSRF is enforced on unsafe methods (DRF's default).

    It answers 401 (with a challenge) rather than 403 to anonymous API calls, so clients can
    tell "log in" from "not allowed"."""

    def authenticate_header(self, request: Request) -> str:
        return 'Session realm="zhisuan"'
