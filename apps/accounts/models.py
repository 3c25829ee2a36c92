"""Users and personal API tokens."""

from __future__ import annotations

from django.contrib.auth.models import AbstractUser
from django.db import models
from django.utils import timezone

# The languages of the dashboard (frontend/src/lib/i18n) that the server can write in too.
LANGUAGES = [("en", "English"), ("zh", "中文")]


class User(AbstractUser):
    """A person using Zhisuan. Platform admins see across tenants through admin endpoints."""

    display_name = models.CharField(max_length=150, blank=True)
    is_platform_admin = models.BooleanField(
        default=False, help_text="Operates the whole platform: clusters, pools, all tenants."
    )
    # The server cannot see a browser's choice when it writes to the person (notices by email),
    # so the dashboard's language switch stores it here too; "" until they first choose.
    language = models.CharField(
        max_length=8,
        blank=True,
        default="",
        choices=LANGUAGES,
        help_text="Language of what the platform writes to the user (notices by email); empty: "
        "English.",
    )

    def __str__(self) -> str:
        return self.display_name or self.username


class ApiTokenQuerySet(models.QuerySet["ApiToken"]):
    def active(self) -> ApiTokenQuerySet:
        now = timezone.now()
        return self.filter(revoked_at__isnull=True, expires_at__gt=now)


class ApiToken(models.Model):
    """A personal API token. Only a SHA-256 digest of the secret is stored; the plaintext is
    shown once at creation. Tokens carry the owner's own permissions, never more; a read-only
    token carries only the reading half of them."""

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100)
    # The public prefix identifies the row without a hash scan; the digest proves the secret.
    prefix = models.CharField(max_length=16, unique=True)
    digest = models.CharField(max_length=64)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    read_only = models.BooleanField(
        default=False,
        help_text="Reads only (GET, HEAD, OPTIONS): a request that would change something is "
        "refused with 403, whatever its owner may do.",
    )

    objects = ApiTokenQuerySet.as_manager()

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None and self.expires_at > timezone.now()


class OidcIdentity(models.Model):
    """Who a user is at the organisation's OpenID Connect provider: the ID token's issuer and
    subject, which never change (apps/accounts/oidc.py)."""

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="oidc_identities")
    issuer = models.CharField(max_length=500)
    subject = models.CharField(max_length=255)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["issuer", "subject"], name="uniq_oidc_subject")
        ]

    def __str__(self) -> str:
        return f"{self.subject} at {self.issuer}"
