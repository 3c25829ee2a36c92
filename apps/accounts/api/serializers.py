from __future__ import annotations

from typing import Any

from rest_framework import serializers

from apps.accounts.models import LANGUAGES, ApiToken, User
from apps.tenancy.models import Membership, Role


def saved_language() -> serializers.ChoiceField:
    """A user's language as read back: "" (none chosen yet) is one of its values, which the
    model field's own schema (a blank choice) leaves out of a read-only field."""
    return serializers.ChoiceField(
        choices=[("", "not chosen"), *LANGUAGES],
        read_only=True,
        help_text="Language of what the platform writes to them; empty until they choose one.",
    )


class UserSerializer(serializers.ModelSerializer[User]):
    class Meta:
        model = User
        fields = ["id", "username", "display_name", "is_platform_admin"]
        read_only_fields = fields


class SessionUserSerializer(UserSerializer):
    """The signed-in person: what others see of them, and their own address and language."""

    # A plain string: "" (no address) would fail the schema's format: email.
    email = serializers.CharField(read_only=True, help_text="Empty: no address given.")
    language = saved_language()
    has_password = serializers.SerializerMethodField(
        help_text="False for a user made by single sign-on, who signs in at the provider."
    )

    class Meta(UserSerializer.Meta):
        fields = [*UserSerializer.Meta.fields, "email", "language", "has_password"]
        read_only_fields = fields

    def get_has_password(self, user: User) -> bool:
        return user.has_usable_password()


class ProfileSerializer(serializers.ModelSerializer[User]):
    """What a person may change about themselves; the rest is the platform admins'."""

    email = serializers.EmailField(
        required=False,
        allow_blank=True,
        max_length=254,
        help_text="Where the platform emails notices (idle warnings, runtime limits); empty: "
        "no email.",
    )

    class Meta:
        model = User
        fields = ["username", "display_name", "email", "language"]
        read_only_fields = ["username"]


class PasswordChangeSerializer(serializers.Serializer[Any]):
    current_password = serializers.CharField(max_length=256, style={"input_type": "password"})
    new_password = serializers.CharField(max_length=256, style={"input_type": "password"})


class TenantRefSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    slug = serializers.CharField()
    name = serializers.CharField()


class MembershipRefSerializer(serializers.ModelSerializer[Membership]):
    tenant = TenantRefSerializer()
    role = serializers.ChoiceField(choices=Role.choices, read_only=True)

    class Meta:
        model = Membership
        fields = ["tenant", "role"]


class SessionSerializer(serializers.Serializer[Any]):
    user = SessionUserSerializer()
    memberships = MembershipRefSerializer(many=True)
    currency = serializers.CharField(help_text="ISO 4217 code of prices and costs (ZS_CURRENCY).")


class LoginSerializer(serializers.Serializer[Any]):
    username = serializers.CharField(max_length=150)
    password = serializers.CharField(max_length=256, style={"input_type": "password"})


class ApiTokenSerializer(serializers.ModelSerializer[ApiToken]):
    ttl_days = serializers.IntegerField(
        write_only=True, required=False, min_value=1, max_value=365, help_text="Lifetime in days."
    )
    is_active = serializers.BooleanField(read_only=True)

    class Meta:
        model = ApiToken
        fields = [
            "id",
            "name",
            "prefix",
            "created_at",
            "expires_at",
            "revoked_at",
            "last_used_at",
            "is_active",
            "read_only",
            "ttl_days",
        ]
        read_only_fields = [
            "prefix",
            "created_at",
            "expires_at",
            "revoked_at",
            "last_used_at",
        ]


class NewApiTokenSerializer(ApiTokenSerializer):
    token = serializers.CharField(read_only=True, help_text="Shown once; store it now.")

    class Meta(ApiTokenSerializer.Meta):
        fields = [*ApiTokenSerializer.Meta.fields, "token"]
