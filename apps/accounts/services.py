"""Write paths for accounts: API tokens."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apps.accounts import tokens
from apps.accounts.models import ApiToken, User


def create_token(
    *, user: User, name: str, ttl_days: int | None = None, read_only: bool = False
) -> tuple[ApiToken, str]:
    """Create a token; returns the row and the plaintext, which is never stored or shown again."""
    days = ttl_days if ttl_days is not None else settings.TOKEN_TTL_DAYS
    new = tokens.generate()
    with transaction.atomic():
        token = ApiToken.objects.create(
            user=user,
            name=name,
            prefix=new.prefix,
            digest=new.digest,
            expires_at=timezone.now() + timedelta(days=days),
            read_only=read_only,
        )
    return token, new.plaintext


def revoke_token(*, token: ApiToken) -> ApiToken:
    """Revoke a token at once; idempotent (a revoked token keeps its first revocation time)."""
    ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
    token.refresh_from_db()
    return token
