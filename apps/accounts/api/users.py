"""Platform admins manage the people who may sign in: create them with a first password, edit
their name, address and platform rights, deactivate them (never delete: their jobs, usage and
audit entries keep naming them) and set a new password for one who lost theirs. Which tenants
a person works in stays with each tenant's admins (Members).

A deactivated user cannot sign in; their sessions end at their next request and their API
tokens are refused (apps/accounts/authentication.py); reactivating them brings both back.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils.translation import gettext as _
from django_filters import rest_framework as filters
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from apps.accounts.api.passwords import CHANGED, password_errors
from apps.accounts.api.serializers import saved_language
from apps.accounts.models import User
from apps.audit import services as audit
from apps.audit.models import AuditAction
from apps.core.pagination import IdCursorPagination
from apps.core.permissions import IsPlatformAdmin
from apps.core.viewsets import AuditedModelViewSet, request_user
from apps.tenancy.models import Role


class UserMembershipSerializer(serializers.Serializer[Any]):
    tenant = serializers.CharField(help_text="The tenant's slug.")
    role = serializers.ChoiceField(choices=Role.choices)


class AdminUserSerializer(serializers.ModelSerializer[User]):
    password = serializers.CharField(
        write_only=True,
        max_length=256,
        style={"input_type": "password"},
        help_text="The first password (on create only; later: POST .../password/). The "
        "platform's password rules apply.",
    )
    email = serializers.EmailField(required=False, allow_blank=True, max_length=254)
    memberships = serializers.SerializerMethodField()
    language = saved_language()

    class Meta:
        model = User
        fields = [
            "id",
            "username",
            "display_name",
            "email",
            "language",
            "is_platform_admin",
            "is_active",
            "date_joined",
            "last_login",
            "memberships",
            "password",
        ]
        read_only_fields = ["id", "language", "date_joined", "last_login", "memberships"]

    def get_fields(self) -> dict[str, serializers.Field[Any, Any, Any, Any]]:
        fields = super().get_fields()
        if self.instance is not None:  # an edit: the username and password have their own ways
            fields["username"].read_only = True
            fields.pop("password", None)
        return fields

    @extend_schema_field(UserMembershipSerializer(many=True))
    def get_memberships(self, user: User) -> list[dict[str, str]]:
        return [
            {"tenant": m.tenant.slug, "role": m.role}
            for m in sorted(user.memberships.all(), key=lambda m: m.tenant.slug)
        ]

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if "password" in attrs:
            candidate = User(**{k: v for k, v in attrs.items() if k != "password"})
            try:
                validate_password(attrs["password"], candidate)
            except DjangoValidationError as exc:
                raise serializers.ValidationError({"password": password_errors(exc)}) from exc
        actor = self.context["request"].user
        if self.instance is not None and self.instance.pk == actor.pk:
            # No one locks themselves out; so there is always one active platform admin.
            if attrs.get("is_active") is False:
                raise serializers.ValidationError(
                    {"is_active": [_("You cannot deactivate yourself.")]}
                )
            if attrs.get("is_platform_admin") is False:
                raise serializers.ValidationError(
                    {"is_platform_admin": [_("You cannot take away your own platform rights.")]}
                )
        return attrs

    def create(self, validated_data: dict[str, Any]) -> User:
        password = validated_data.pop("password")
        user = User(**validated_data)
        user.set_password(password)
        user.save()
        return user


class NewPasswordSerializer(serializers.Serializer[Any]):
    password = serializers.CharField(max_length=256, style={"input_type": "password"})


class UserFilter(filters.FilterSet):  # type: ignore[misc]  # django-filter is untyped
    search = filters.CharFilter(
        method="search_users",
        help_text="Users whose username, display name or email address contains this (any case).",
    )

    class Meta:
        model = User
        fields = ["is_active", "is_platform_admin", "search"]

    def search_users(self, queryset: QuerySet[User], name: str, value: str) -> QuerySet[User]:
        return queryset.filter(
            Q(username__icontains=value)
            | Q(display_name__icontains=value)
            | Q(email__icontains=value)
        )


class UsernamePagination(IdCursorPagination):
    ordering = ("username", "id")


class UserViewSet(AuditedModelViewSet[User]):
    """The platform's users (platform admins only). No DELETE: deactivate instead."""

    serializer_class = AdminUserSerializer
    queryset = User.objects.prefetch_related("memberships__tenant")
    permission_classes = [IsPlatformAdmin]
    filterset_class = UserFilter
    pagination_class = UsernamePagination
    http_method_names = ["get", "post", "patch", "head", "options"]

    @extend_schema(request=NewPasswordSerializer, responses={204: None})
    @action(detail=True, methods=["post"])
    def password(self, request: Request, pk: str | None = None) -> Response:
        """Set a new password for the user (one who lost theirs); their sessions end. Tell
        them through another channel; they can change it in Settings, Profile."""
        data = NewPasswordSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        with transaction.atomic():
            user = User.objects.select_for_update().get(pk=self.get_object().pk)
            try:
                validate_password(data.validated_data["password"], user)
            except DjangoValidationError as exc:
                raise serializers.ValidationError({"password": password_errors(exc)}) from exc
            before = audit.snapshot(user)
            user.set_password(data.validated_data["password"])
            user.save(update_fields=["password"])
            audit.record(
                actor=request_user(request),
                action=AuditAction.UPDATE,
                instance=user,
                tenant=None,
                before=before,
                after={**audit.snapshot(user), "password": CHANGED},
            )
        return Response(status=status.HTTP_204_NO_CONTENT)
