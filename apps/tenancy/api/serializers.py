from __future__ import annotations

from typing import Any

from rest_framework import serializers

from apps.accounts.models import User
from apps.tenancy.models import Membership, Project, Tenant


class TenantSerializer(serializers.ModelSerializer[Tenant]):
    class Meta:
        model = Tenant
        fields = ["id", "slug", "name", "description", "created_at"]
        read_only_fields = ["created_at"]


class MembershipSerializer(serializers.ModelSerializer[Membership]):
    username = serializers.SlugRelatedField(
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
            raise serializers.ValidationError({"username": ["A membership's user cannot change."]})
        exists = Membership.objects.filter(tenant=tenant, user=user).exists()
        if self.instance is None and user is not None and exists:
            raise serializers.ValidationError(
                {"username": [f"{user.username} is already a member of {tenant.slug}."]}
            )
        return attrs


class ProjectSerializer(serializers.ModelSerializer[Project]):
    created_by = serializers.CharField(
        source="created_by.username", read_only=True, allow_null=True
    )

    class Meta:
        model = Project
        fields = ["id", "name", "description", "created_by", "created_at"]
        read_only_fields = ["created_at"]

    def validate_name(self, value: str) -> str:
        tenant = self.context["view"].tenant
        clash = Project.objects.filter(tenant=tenant, name=value)
        if self.instance is not None:
            clash = clash.exclude(pk=self.instance.pk)
        if clash.exists():
            raise serializers.ValidationError("A project with this name already exists.")
        return value
