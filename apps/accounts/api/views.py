"""Session login for the browser, and personal API tokens."""

from __future__ import annotations

import logging

from django.conf import settings
from django.contrib.auth import authenticate, login, logout, update_session_auth_hash
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction
from django.db.models import QuerySet
from django.utils.decorators import method_decorator
from django.utils.translation import gettext as _
from django.views.decorators.csrf import ensure_csrf_cookie
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.authentication import SessionAuthentication
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import ScopedRateThrottle
from rest_framework.views import APIView

from apps.accounts import services
from apps.accounts.api.passwords import CHANGED, password_errors
from apps.accounts.api.serializers import (
    ApiTokenSerializer,
    LoginSerializer,
    NewApiTokenSerializer,
    PasswordChangeSerializer,
    ProfileSerializer,
    SessionSerializer,
)
from apps.accounts.authentication import CsrfSessionAuthentication
from apps.accounts.models import ApiToken, User
from apps.audit import services as audit
from apps.audit.models import AuditAction
from apps.core.viewsets import request_user

log = logging.getLogger("zhisuan.auth")


def session_payload(user: User) -> dict[str, object]:
    memberships = user.memberships.select_related("tenant").order_by("tenant__slug")
    payload = {"user": user, "memberships": memberships, "currency": settings.CURRENCY}
    return dict(SessionSerializer(payload).data)


@method_decorator(ensure_csrf_cookie, name="dispatch")
class SessionView(APIView):
    """Who am I. Also hands the browser its CSRF cookie, even when not logged in."""

    @extend_schema(responses=SessionSerializer)
    def get(self, request: Request) -> Response:
        return Response(session_payload(request_user(request)))


class LoginView(APIView):
    permission_classes = [AllowAny]
    authentication_classes: list[type] = []
    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "login"

    @extend_schema(request=LoginSerializer, responses=SessionSerializer)
    def post(self, request: Request) -> Response:
        # Login must carry a CSRF token too, or another site could log a browser in.
        SessionAuthentication().enforce_csrf(request)
        data = LoginSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user = authenticate(
            request._request,
            username=data.validated_data["username"],
            password=data.validated_data["password"],
        )
        if not isinstance(user, User):
            log.warning(
                "login failed: username=%s ip=%s",
                data.validated_data["username"],
                request.META.get("REMOTE_ADDR"),
            )
            raise serializers.ValidationError({"password": ["Unknown username or wrong password."]})
        login(request._request, user)
        return Response(session_payload(user))


class LogoutView(APIView):
    @extend_schema(request=None, responses={204: None})
    def post(self, request: Request) -> Response:
        logout(request._request)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ProfileView(APIView):
    """The caller's own name, email address and language (the language notices by email are
    written in). Username, roles and platform rights are the platform admins' to change."""

    @extend_schema(responses=ProfileSerializer)
    def get(self, request: Request) -> Response:
        return Response(ProfileSerializer(request_user(request)).data)

    @extend_schema(request=ProfileSerializer, responses=ProfileSerializer)
    @transaction.atomic  # the change and its audit entry commit together
    def patch(self, request: Request) -> Response:
        user = User.objects.select_for_update().get(pk=request_user(request).pk)
        before = audit.snapshot(user)
        data = ProfileSerializer(user, data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        data.save()
        after = audit.snapshot(user)
        if after != before:
            audit.record(
                actor=user,
                action=AuditAction.UPDATE,
                instance=user,
                tenant=None,
                before=before,
                after=after,
            )
        return Response(ProfileSerializer(user).data)


class PasswordView(APIView):
    """Change the caller's password: the current one, then a new one the password rules accept.
    Only from a signed-in browser (a stolen API token cannot lock its owner out); other
    sessions of the user end, this one stays signed in. Throttled as login is."""

    authentication_classes = [CsrfSessionAuthentication]
    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "login"

    @extend_schema(request=PasswordChangeSerializer, responses={204: None})
    @transaction.atomic
    def post(self, request: Request) -> Response:
        data = PasswordChangeSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user = User.objects.select_for_update().get(pk=request_user(request).pk)
        if not user.check_password(data.validated_data["current_password"]):
            raise serializers.ValidationError(
                {"current_password": [_("This is not your current password.")]}
            )
        new = data.validated_data["new_password"]
        try:
            validate_password(new, user)
        except DjangoValidationError as exc:
            raise serializers.ValidationError({"new_password": password_errors(exc)}) from exc
        before = audit.snapshot(user)
        user.set_password(new)
        user.save(update_fields=["password"])
        audit.record(
            actor=user,
            action=AuditAction.UPDATE,
            instance=user,
            tenant=None,
            before=before,
            after={**audit.snapshot(user), "password": CHANGED},
        )
        update_session_auth_hash(request._request, user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ApiTokenViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet[ApiToken],
):
    """The caller's own API tokens. DELETE revokes (the row stays for the audit trail)."""

    serializer_class = ApiTokenSerializer
    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "tokens"

    def get_queryset(self) -> QuerySet[ApiToken]:
        if getattr(self, "swagger_fake_view", False):
            return ApiToken.objects.none()
        return ApiToken.objects.filter(user=request_user(self.request))

    @extend_schema(responses={201: NewApiTokenSerializer})
    @transaction.atomic  # the token and its audit entry commit together
    def create(self, request: Request, *args: object, **kwargs: object) -> Response:
        data = ApiTokenSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user = request_user(request)
        token, plaintext = services.create_token(
            user=user,
            name=data.validated_data["name"],
            ttl_days=data.validated_data.get("ttl_days"),
            read_only=data.validated_data.get("read_only", False),
        )
        audit.record(
            actor=user,
            action=AuditAction.CREATE,
            instance=token,
            tenant=None,
            before=None,
            after=audit.snapshot(token),
        )
        body = NewApiTokenSerializer(token).data
        body["token"] = plaintext
        return Response(body, status=status.HTTP_201_CREATED)

    @transaction.atomic
    def destroy(self, request: Request, *args: object, **kwargs: object) -> Response:
        token = self.get_object()
        before = audit.snapshot(token)
        services.revoke_token(token=token)
        audit.record(
            actor=request_user(request),
            action=AuditAction.UPDATE,
            instance=token,
            tenant=None,
            before=before,
            after=audit.snapshot(token),
        )
        return Response(status=status.HTTP_204_NO_CONTENT)
