from rest_framework import serializers

from apps.audit.models import AuditEntry
from apps.tenancy.models import Tenant


class AuditEntrySerializer(serializers.ModelSerializer[AuditEntry]):
    tenant: serializers.SlugRelatedField[Tenant] = serializers.SlugRelatedField(
        slug_field="slug", read_only=True, allow_null=True
    )

    class Meta:
        model = AuditEntry
        fields = [
            "id",
            "tenant",
            "actor_name",
            "action",
            "object_type",
            "object_id",
            "object_repr",
            "before",
            "after",
            "created_at",
        ]
        read_only_fields = fields
