"""Serializers of the governance API."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.core.fields import WindowTimeField
from apps.governance.models import IdleFlag, Notification, QueueAction
from apps.governance.policy import LIMITS, RULES
from apps.governance.webhook import UnsafeTargetError, resolve


def _bounded(name: str, integer: bool = True) -> serializers.Field:  # type: ignore[type-arg]
    lo, hi = LIMITS[name]
    if integer:
        return serializers.IntegerField(min_value=int(lo), max_value=int(hi), required=False)
    return serializers.FloatField(min_value=lo, max_value=hi, required=False)


class DefaultPolicySerializer(serializers.Serializer[Any]):
    """Policy values; on writes every field is optional (unset fields keep their value)."""

    util_threshold_pct = _bounded("util_threshold_pct", integer=False)
    training_idle_s = _bounded("training_idle_s")
    notebook_idle_s = _bounded("notebook_idle_s")
    grace_s = _bounded("grace_s")
    max_extensions = _bounded("max_extensions")
    extension_s = _bounded("extension_s")
    queue_action = serializers.ChoiceField(QueueAction.choices, required=False)
    max_runtime_s = serializers.IntegerField(
        min_value=int(LIMITS["max_runtime_s"][0]),
        max_value=int(LIMITS["max_runtime_s"][1]),
        required=False,
        allow_null=True,
        help_text="Longest runtime limit (s) a training job or notebook may declare, and the "
        "limit of those that declare none; null: no cap.",
    )


class TenantPolicySerializer(DefaultPolicySerializer):
    webhook_url = serializers.URLField(
        required=False,
        allow_blank=True,
        max_length=200,
        help_text="Where governance notices are POSTed; public addresses only. Shown in full "
        "to tenant and platform admins; others read its scheme and host only.",
    )

    def validate_webhook_url(self, value: str) -> str:
        if value:
            try:
                resolve(value)  # checked again at each delivery
            except UnsafeTargetError as exc:
                raise serializers.ValidationError(str(exc)) from exc
        return value


class PolicyViewSerializer(serializers.Serializer[Any]):
    effective = TenantPolicySerializer(help_text="What the sweep applies to this tenant.")
    default = DefaultPolicySerializer(help_text="The platform default: the loosest allowed.")
    customized = serializers.BooleanField(help_text="Whether the tenant set any rule itself.")
    overrides = serializers.ListField(
        child=serializers.CharField(),
        help_text="The rules the tenant set (names as in a change's reset); every other "
        "rule follows the platform default.",
    )


class TenantPolicyChangeSerializer(TenantPolicySerializer):
    """A change of the tenant's policy: the rules given are set, those in ``reset`` follow
    the platform default again (a rule equal to the default's value follows it too)."""

    reset = serializers.ListField(
        child=serializers.ChoiceField(RULES),
        required=False,
        write_only=True,
        help_text="Rules to return to the platform default. The webhook has no default: "
        "clear it with an empty webhook_url.",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        both = [rule for rule in attrs.get("reset", []) if rule in attrs]
        if both:
            raise serializers.ValidationError(
                {
                    "reset": [
                        _("{rules}: set and reset in one request.").format(rules=", ".join(both))
                    ]
                }
            )
        return attrs


class IdleFlagSerializer(serializers.ModelSerializer[IdleFlag]):
    job_name = serializers.CharField(source="job.name", read_only=True)
    job_kind = serializers.CharField(source="job.kind", read_only=True)
    job_state = serializers.CharField(source="job.state", read_only=True)
    exempted_by = serializers.CharField(source="exempted_by.username", read_only=True, default="")

    class Meta:
        model = IdleFlag
        fields = [
            "id", "job", "job_name", "job_kind", "job_state", "state", "idle_since",
            "peak_util_pct", "warned_at", "stop_at", "extensions_used", "reminded_at",
            "exempt_reason", "exempted_by", "stopped_at", "device_milli", "checkpoint_note",
            "updated_at",
        ]  # fmt: skip
        read_only_fields = fields


class ExemptSerializer(serializers.Serializer[Any]):
    reason = serializers.CharField(min_length=3, max_length=300)


class ExemptJobSerializer(ExemptSerializer):
    """A job exempted before any warning (a session known to sit idle, e.g. debugging)."""

    job = serializers.IntegerField(min_value=1, help_text="A training job or notebook not ended.")


class NoteSerializer(serializers.Serializer[Any]):
    """One sentence of the platform's catalogue (apps/jobs/notes.py; `jobNote` on the
    dashboard): its key and the values it takes (as a job event's `message_args`)."""

    key = serializers.CharField()
    args = serializers.DictField(child=serializers.JSONField())


class NoticeDetailSerializer(serializers.Serializer[Any]):
    title = NoteSerializer()
    body = NoteSerializer(many=True)


class NotificationSerializer(serializers.ModelSerializer[Notification]):
    detail = serializers.SerializerMethodField(
        help_text="The title and the body's sentences as catalogue notes, so a client can say "
        "them in its reader's language; null for notices written before notes (title and "
        "body are English)."
    )

    class Meta:
        model = Notification
        fields = ["id", "kind", "job", "title", "body", "detail", "read_at", "created_at"]
        read_only_fields = fields

    @extend_schema_field(NoticeDetailSerializer(allow_null=True))
    def get_detail(self, notice: Notification) -> dict[str, Any] | None:
        return notice.detail or None


class UnreadCountSerializer(serializers.Serializer[Any]):
    marked = serializers.IntegerField(help_text="Notices this call marked read.")
    unread = serializers.IntegerField(help_text="The caller's unread notices in the tenant.")


class EfficiencyQuerySerializer(serializers.Serializer[Any]):
    start = WindowTimeField(required=False)
    end = WindowTimeField(required=False)


class EfficiencySerializer(serializers.Serializer[Any]):
    start = serializers.DateTimeField()
    end = serializers.DateTimeField()
    reserved_gpu_hours = serializers.FloatField()
    used_gpu_hours = serializers.FloatField()
    unknown_util_gpu_hours = serializers.FloatField()
    utilization_pct = serializers.FloatField(allow_null=True)
    idle_reclaimed_gpu_hours = serializers.FloatField()
    jobs_stopped_idle = serializers.IntegerField()
    jobs_expired_in_queue = serializers.IntegerField()
