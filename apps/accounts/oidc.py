"""Single sign-on with the organisation's OpenID Connect provider (Keycloak, Azure AD/Entra ID,
Okta, Authing, a Feishu or DingTalk OIDC bridge, ...), when ``ZS_OIDC_ISSUER`` is set.

The authorization-code flow is mozilla-django-oidc's (state, nonce and PKCE in the session, the
code exchanged at the token endpoint, the ID token's signature checked against the provider's
JWKS). What is ours is who the person is here: an ID token names its person by issuer and
``sub``, which never change; a first sign-in makes the user (username from
``ZS_OIDC_USERNAME_CLAIM``, a number added when that name is taken) and records the pair in
:class:`~apps.accounts.models.OidcIdentity`; later sign-ins find them by it, whatever their
email or name became. The ID token's ``iss`` and ``aud`` are checked too (the library checks
neither). Name and email follow the provider at each sign-in; platform rights follow
membership of ``ZS_OIDC_ADMIN_GROUP`` when that is set (else they are the platform admins'
to give, Settings, Users). A deactivated user stays out. Passwords still work for local users
(the first admin, service accounts).
"""

from __future__ import annotations

import logging
import re
from typing import Any

import jwt
from django.conf import settings
from django.core.exceptions import SuspiciousOperation
from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

from apps.accounts.models import OidcIdentity, User

log = logging.getLogger("zhisuan.auth")
_USERNAME_UNSAFE = re.compile(r"[^\w.@+-]+")


def enabled() -> bool:
    return bool(getattr(settings, "OIDC_ISSUER", ""))


def _claim(claims: dict[str, Any], name: str) -> str:
    value = claims.get(name)
    return value.strip() if isinstance(value, str) else ""


def _groups(claims: dict[str, Any]) -> set[str]:
    value = claims.get(settings.OIDC_GROUPS_CLAIM)
    if isinstance(value, str):
        return {value}
    return {str(v) for v in value} if isinstance(value, list) else set()


class Backend(OIDCAuthenticationBackend):  # type: ignore[misc]  # the library is untyped
    """mozilla-django-oidc's backend, with users found by (issuer, sub)."""

    def _verify_jws(self, payload: str, key: Any) -> dict[str, Any]:
        header = jwt.get_unverified_header(payload)
        if header.get("alg") != self.OIDC_RP_SIGN_ALGO:
            raise SuspiciousOperation("the ID token is not signed with the configured algorithm")
        try:
            claims: dict[str, Any] = jwt.decode(
                payload,
                key,
                algorithms=[self.OIDC_RP_SIGN_ALGO],
                audience=self.OIDC_RP_CLIENT_ID,
                issuer=settings.OIDC_ISSUER,
                options={"require": ["exp", "iat", "iss", "aud", "sub"]},
                leeway=60,
            )
        except jwt.InvalidTokenError as exc:
            raise SuspiciousOperation(f"the ID token is not valid here: {exc}") from exc
        return claims

    def verify_claims(self, claims: dict[str, Any]) -> bool:
        return bool(_claim(claims, "sub"))

    def get_or_create_user(self, access_token: str, id_token: str, payload: dict[str, Any]) -> Any:
        # The person is the ID token's subject; the userinfo endpoint adds name, email, groups.
        userinfo = self.get_userinfo(access_token, id_token, payload)
        if userinfo.get("sub", payload["sub"]) != payload["sub"]:
            raise SuspiciousOperation("the userinfo is about someone else than the ID token")
        claims = {**userinfo, **payload}
        return super().get_or_create_user(access_token, id_token, claims)

    def get_userinfo(self, access_token: str, id_token: str, payload: dict[str, Any]) -> Any:
        if not self.OIDC_OP_USER_ENDPOINT:
            return payload  # providers that put everything in the ID token
        return super().get_userinfo(access_token, id_token, payload)

    def filter_users_by_claims(self, claims: dict[str, Any]) -> QuerySet[User]:
        return User.objects.filter(
            oidc_identities__issuer=settings.OIDC_ISSUER, oidc_identities__subject=claims["sub"]
        )

    def describe_user_by_claims(self, claims: dict[str, Any]) -> str:
        return f"subject {claims.get('sub')}"

    def create_user(self, claims: dict[str, Any]) -> User:
        # A username holds letters, digits and @.+-_ (Django's rule, which Members and the CLI
        # rely on): "Ada Lovelace" becomes "Ada-Lovelace".
        wanted = _USERNAME_UNSAFE.sub("-", _claim(claims, settings.OIDC_USERNAME_CLAIM)).strip("-")
        wanted = (wanted or f"user-{_USERNAME_UNSAFE.sub('-', claims['sub'])}")[:140]
        for n in range(1, 100):
            username = wanted if n == 1 else f"{wanted}-{n}"
            try:
                with transaction.atomic():
                    user = User(username=username)
                    user.set_unusable_password()
                    self._apply(user, claims)
                    user.save()
                    OidcIdentity.objects.create(
                        user=user, issuer=settings.OIDC_ISSUER, subject=claims["sub"]
                    )
            except IntegrityError:
                known = OidcIdentity.objects.filter(
                    issuer=settings.OIDC_ISSUER, subject=claims["sub"]
                ).first()
                if known is not None:  # the same person signing in twice at once: one made it
                    return known.user
                continue  # the username is someone else's
            log.info("oidc: created user %s for subject %s", username, claims["sub"])
            return user
        raise SuspiciousOperation(f"no free username near {wanted!r}")

    def update_user(self, user: User, claims: dict[str, Any]) -> User | None:
        if not user.is_active:
            log.warning("oidc: refused deactivated user %s", user.get_username())
            return None
        before = (user.display_name, user.email, user.is_platform_admin)
        self._apply(user, claims)
        if (user.display_name, user.email, user.is_platform_admin) != before:
            user.save(update_fields=["display_name", "email", "is_platform_admin"])
        return user

    def _apply(self, user: User, claims: dict[str, Any]) -> None:
        user.display_name = (_claim(claims, "name") or user.display_name)[:150]
        user.email = (_claim(claims, "email") or user.email)[:254]
        if settings.OIDC_ADMIN_GROUP:
            user.is_platform_admin = settings.OIDC_ADMIN_GROUP in _groups(claims)
