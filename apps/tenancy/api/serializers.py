from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from rest_framework import serializers

from apps.accounts.models import User
from apps.tenancy.models import Membership, Project, Tenant


class TenantSerializer(serializers.ModelSerializer[Tenant]):
    class Meta:
        model = Tenant
        fields = ["id", "slug", "name", "description", "created_at"]
        read_only_fields = ["created_at"]


class UsernameField(serializers.SlugRelatedField):  # type: ignore[type-arg]
    """A user named by username: surrounding spaces are ignored (pasted names carry them) and
    the errors speak of users, not of "objects with username=..."."""

    default_error_messages = {
        "required": gettext_lazy("A username is required."),
        "null": gettext_lazy("A username is required."),
        "does_not_exist": gettext_lazy("No user named {value}."),
        "invalid": gettext_lazy("Enter a username."),
    }

    def run_validation(self, data: Any = serializers.empty) -> Any:
        if isinstance(data, str):
            data = data.strip()  # "" then becomes None below: "A username is required."
        return super().run_validation(data)


class MembershipSerializer(serializers.ModelSerializer[Membership]):
    username = UsernameField(
        source="user", slug_field="username", queryset=User.objects.filter(is_active=True)
    )
    display_name = serializers.CharField(source="user.display_name", read_only=True)

    class Meta:
        model = Membership
        fields = ["id", "username", "display_name", "role", "created_at"]
        read_only_fields = ["created_at"]

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        tenant = self.context["view"].tenant
        user = attrs.get("user")
        if self.instance is not None and user is not None and user != self.instance.user:
            raise serializers.ValidationError(
                {"username": [_("A membership's user cannot change.")]}
            )
        # A friendly early answer; the unique constraint decides under a race (see the view).
        exists = Membership.objects.filter(tenant=tenant, user=user).exists()
        if self.instance is None and user is not None and exists:
            raise serializers.ValidationError({"username": [already_member(user, tenant)]})
        return attrs


def already_member(user: User, tenant: Tenant) -> str:
    return _("{user} is already a member of {tenant}.").format(
        user=user.username, tenant=tenant.slug
    )


PROJECT_NAME_TAKEN = gettext_lazy("A project with this name already exists.")


class ProjectSerializer(serializers.ModelSerializer[Project]):
    created_by = serializers.CharField(
        source="created_by.username", read_only=True, allow_null=True
    )

    class Meta:
        model = Project
        fields = ["id", "name", "description", "created_by", "created_at"]
        read_only_fields = ["created_at"]

    def validate_name(self, value: str) -> str:
        # A friendly early answer; the unique constraint decides under a race (see the view).
        tenant = self.context["view"].tenant
        clash = Project.objects.filter(tenant=tenant, name=value)
        if self.instance is not None:
            clash = clash.exclude(pk=self.instance.pk)
        if clash.exists():
            raise serializers.ValidationError(PROJECT_NAME_TAKEN)
        return value
