"""Node agents authenticate with a node-scoped token (``Bearer zsn_...``). It is accepted by the
report endpoint only (the default authenticators reject it everywhere else), and the report
must be about the token's own node."""

from __future__ import annotations

from django.utils.translation import gettext_lazy
from rest_framework import authentication, exceptions, permissions
from rest_framework.request import Request
from rest_framework.views import APIView

from apps.core.permissions import IsPlatformAdmin as PlatformAdminOnly
from apps.health import services
from apps.health.models import NodeToken


class NodeAgent:
    """The request.user of an agent: not a person, never authenticated as one."""

    is_authenticated = True
    is_platform_admin = False

    def __init__(self, token: NodeToken) -> None:
        self.token = token


class NodeTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[NodeAgent, NodeToken] | None:
        header = authentication.get_authorization_header(request).decode("latin-1")
        keyword, _, credential = header.partition(" ")
        if keyword != self.keyword:
            return None
        token = services.node_for_token(credential.strip())
        if token is None:
            raise exceptions.AuthenticationFailed("Invalid or revoked node token.")
        return NodeAgent(token), token

    def authenticate_header(self, request: Request) -> str:
        return self.keyword


class IsNodeAgent(permissions.BasePermission):
    def has_permission(self, request: Request, view: APIView) -> bool:
        return isinstance(request.auth, NodeToken)


class IsPlatformAdmin(PlatformAdminOnly):
    """Node internals are for operators: tenants see nothing here, not even reads."""

    message = gettext_lazy("Only platform admins can see node health.")
