from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.utils.translation import gettext as _
from rest_framework import serializers

from apps.clusters.models import ResourcePool
from apps.quotas import services
from apps.quotas.models import Quota
from apps.quotas.selectors import quota_usage
from apps.tenancy.models import Tenant


class QuotaSerializer(serializers.ModelSerializer[Quota]):
    tenant: serializers.SlugRelatedField[Tenant] = serializers.SlugRelatedField(
        slug_field="slug", queryset=Tenant.objects.all()
    )
    pool = serializers.PrimaryKeyRelatedField(queryset=ResourcePool.objects.all())
    pool_name = serializers.CharField(source="pool.name", read_only=True)
    used = serializers.FloatField(read_only=True, help_text="Devices held now.")

    class Meta:
        model = Quota
        fields = [
            "id", "tenant", "pool", "pool_name", "accelerator_model", "guarantee",
            "borrow_limit", "weight", "used", "updated_at",
        ]  # fmt: skip
        read_only_fields = ["updated_at"]

    def to_representation(self, instance: Quota) -> dict[str, Any]:
        # Lists attach ``used`` in one pass (``quotas_with_usage``); a single quota (read,
        # created or edited) gets it here, so it is never left out or shown as 0.
        if not hasattr(instance, "used"):
            instance.used = quota_usage(instance)  # type: ignore[attr-defined]
        return super().to_representation(instance)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        instance = self.instance
        tenant = attrs.get("tenant") or (instance.tenant if instance else None)
        pool = attrs.get("pool") or (instance.pool if instance else None)
        model = attrs.get("accelerator_model") or (instance.accelerator_model if instance else "")
        guarantee = attrs.get("guarantee", instance.guarantee if instance else 0)
        assert tenant is not None and pool is not None
        if (
            instance is None
            and Quota.objects.filter(tenant=tenant, pool=pool, accelerator_model=model).exists()
        ):
            raise serializers.ValidationError(
                {"accelerator_model": [_("This tenant already has a quota for it; edit that one.")]}
            )
        try:
            services.validate_guarantees(
                pool=pool, accelerator_model=model, tenant=tenant, guarantee=guarantee
            )
        except DjangoValidationError as exc:
            raise serializers.ValidationError(exc.message_dict) from exc
        return attrs

    def create(self, validated_data: dict[str, Any]) -> Quota:
        # The amounts may be left out (the model's defaults: nothing guaranteed or lent).
        return services.set_quota(**{"guarantee": 0, "borrow_limit": 0, **validated_data})

    def update(self, instance: Quota, validated_data: dict[str, Any]) -> Quota:
        data = {
            "tenant": instance.tenant,
            "pool": instance.pool,
            "accelerator_model": instance.accelerator_model,
            "guarantee": instance.guarantee,
            "borrow_limit": instance.borrow_limit,
            "weight": instance.weight,
            **validated_data,
        }
        if (data["tenant"], data["pool"], data["accelerator_model"]) != (
            instance.tenant,
            instance.pool,
            instance.accelerator_model,
        ):
            raise serializers.ValidationError(
                {"non_field_errors": [_("Tenant, pool and model of a quota cannot change.")]}
            )
        return services.set_quota(**data)
