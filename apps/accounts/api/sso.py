"""Single sign-on's endpoints: which provider the login page offers, and the OpenID Connect
flow's two steps (mozilla-django-oidc's views, answered only while SSO is configured)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.exceptions import SuspiciousOperation
from django.http import Http404, HttpRequest, HttpResponse
from drf_spectacular.utils import extend_schema
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView, OIDCAuthenticationRequestView
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.accounts import oidc

log = logging.getLogger("zhisuan.auth")


class SsoSerializer(serializers.Serializer[Any]):
    name = serializers.CharField(help_text="What the login page's button names (ZS_OIDC_NAME).")
    login_url = serializers.CharField(help_text="Where the button goes; add ?next=/path.")


class ProvidersSerializer(serializers.Serializer[Any]):
    sso = SsoSerializer(allow_null=True, help_text="null: no single sign-on configured.")


class ProvidersView(APIView):
    """How one may sign in besides a password: the login page asks before anyone has."""

    permission_classes = [AllowAny]
    authentication_classes: list[type] = []

    @extend_schema(responses=ProvidersSerializer)
    def get(self, request: Request) -> Response:
        sso = (
            {"name": settings.OIDC_NAME, "login_url": "/api/v1/auth/oidc/login/"}
            if oidc.enabled()
            else None
        )
        return Response({"sso": sso})


def _while_enabled(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    def answer(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not oidc.enabled():
            raise Http404("single sign-on is not configured")
        return view(request, *args, **kwargs)

    return answer


class _Callback(OIDCAuthenticationCallbackView):  # type: ignore[misc]  # the library is untyped
    """The library's callback, which answers a token it refuses (a wrong issuer, audience or
    nonce, a state that does not match) with a bare 400: send the browser back to the login
    page, which says that single sign-on failed, and log why for the operators."""

    def get(self, request: HttpRequest) -> HttpResponse:
        try:
            response: HttpResponse = super().get(request)
        except SuspiciousOperation as exc:
            log.warning("sso refused: %s", exc)
            return self.login_failure()  # type: ignore[no-any-return]
        return response


login = _while_enabled(OIDCAuthenticationRequestView.as_view())
callback = _while_enabled(_Callback.as_view())
