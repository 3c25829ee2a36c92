from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.validators import UniqueValidator

from apps.clusters.models import Node
from apps.health import notify
from apps.health.models import (
    Alert,
    AlertReceiver,
    CheckChange,
    CheckStatus,
    FaultAction,
    FaultRule,
    Incident,
    IncidentJob,
    NodeCheck,
    NodeToken,
    ProbeRun,
    Severity,
)


class NodeCheckSerializer(serializers.ModelSerializer[NodeCheck]):
    class Meta:
        model = NodeCheck
        fields = ["check_name", "status", "faults", "detail", "data", "since", "reported_at"]
        read_only_fields = fields


class NodeHealthSerializer(serializers.ModelSerializer[Node]):
    pool = serializers.CharField(source="pool.name", read_only=True, allow_null=True)
    checks = NodeCheckSerializer(many=True, read_only=True)
    open_incidents = serializers.IntegerField(read_only=True)

    class Meta:
        model = Node
        fields = [
            "id",
            "name",
            "pool",
            "accelerator_model",
            "accelerator_count",
            "health",
            "cordoned",
            "is_spare",
            "open_incidents",
            "checks",
        ]
        read_only_fields = fields


class NodeHealthSummarySerializer(serializers.Serializer[dict[str, int]]):
    total = serializers.IntegerField()
    healthy = serializers.IntegerField()
    degraded = serializers.IntegerField()
    faulty = serializers.IntegerField()
    cordoned = serializers.IntegerField()
    spare = serializers.IntegerField()


class CheckChangeSerializer(serializers.ModelSerializer[CheckChange]):
    class Meta:
        model = CheckChange
        fields = ["id", "check_name", "status", "faults", "detail", "created_at"]
        read_only_fields = fields


class IncidentJobSerializer(serializers.ModelSerializer[IncidentJob]):
    class Meta:
        model = IncidentJob
        fields = [
            "job",
            "outcome",
            "devices",
            "attempt",
            "resume_step",
            "resume_from",
            "lost_gpu_seconds",
            "created_at",
        ]
        read_only_fields = fields


class IncidentSerializer(serializers.ModelSerializer[Incident]):
    fault_action = serializers.ChoiceField(
        source="action", choices=FaultAction.choices, read_only=True
    )
    node_name = serializers.CharField(source="node.name", read_only=True)
    spare_name = serializers.CharField(source="spare.name", read_only=True, allow_null=True)
    jobs = IncidentJobSerializer(many=True, read_only=True)

    class Meta:
        model = Incident
        fields = [
            "id",
            "node",
            "node_name",
            "fault",
            "check_name",
            "severity",
            "fault_action",
            "state",
            "detail",
            "actions_taken",
            "remediations",
            "spare",
            "spare_name",
            "lost_gpu_seconds",
            "opened_at",
            "last_seen_at",
            "closed_at",
            "jobs",
        ]
        read_only_fields = fields


FAULT_CODE = r"^[a-z0-9_]+(:[a-z0-9_]+)?$"  # what agents report (``ResultSerializer``)


class DeliverySerializer(serializers.Serializer[dict[str, Any]]):
    receiver = serializers.IntegerField()
    receiver_name = serializers.CharField(allow_null=True, help_text="Null: receiver deleted.")
    state = serializers.ChoiceField(
        choices=["sent", "retrying", "failed"],
        help_text="failed: every attempt failed; retrying: another attempt is scheduled.",
    )
    outcome = serializers.CharField(help_text="The last attempt's answer or error.")


class AlertSerializer(serializers.ModelSerializer[Alert]):
    node_name = serializers.CharField(source="node.name", read_only=True)
    delivery_status = serializers.SerializerMethodField(
        help_text="Per receiver: how the alert's delivery stands."
    )

    class Meta:
        model = Alert
        fields = [
            "id",
            "node",
            "node_name",
            "fault",
            "incident",
            "severity",
            "message",
            "state",
            "occurrences",
            "created_at",
            "acknowledged_at",
            "acknowledged_by",
            "resolved_at",
            "deliveries",
            "delivery_attempts",
            "delivery_status",
        ]
        read_only_fields = fields

    @extend_schema_field(DeliverySerializer(many=True))
    def get_delivery_status(self, alert: Alert) -> list[dict[str, Any]]:
        # One query per response, not per alert: the context is shared by a list's rows.
        names: dict[int, str] = self.context.setdefault(
            "receiver_names", dict(AlertReceiver.objects.values_list("id", "name"))
        )
        return [
            {
                "receiver": int(key),
                "receiver_name": names.get(int(key)),
                "state": notify.delivery_state(outcome, alert.delivery_attempts),
                "outcome": outcome,
            }
            for key, outcome in sorted(alert.deliveries.items(), key=lambda kv: int(kv[0]))
        ]


class FaultRuleSerializer(serializers.ModelSerializer[FaultRule]):
    fault_action = serializers.ChoiceField(source="action", choices=FaultAction.choices)
    code = serializers.RegexField(
        FAULT_CODE,
        max_length=64,
        help_text="A fault code as agents report it (xid:79) or a family (xid).",
        validators=[UniqueValidator(queryset=FaultRule.objects.all())],
        error_messages={
            "invalid": "A fault code is lowercase letters, digits and _, optionally "
            "family:detail (xid:79, ib:port_down)."
        },
    )

    class Meta:
        model = FaultRule
        fields = [
            "id",
            "code",
            "description",
            "severity",
            "fault_action",
            "remediation",
            "max_remediations",
            "substitute_spare",
            "enabled",
            "updated_at",
        ]
        read_only_fields = ["id", "updated_at"]

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        action = attrs.get("action", getattr(self.instance, "action", ""))
        remediation = attrs.get("remediation", getattr(self.instance, "remediation", ""))
        if action == "remediate" and remediation != "restart_fabricmanager":
            raise serializers.ValidationError(
                {
                    "remediation": _(
                        "remediate needs an allow-listed agent action: restart_fabricmanager"
                    )
                }
            )
        return attrs


class AlertReceiverSerializer(serializers.ModelSerializer[AlertReceiver]):
    severity = serializers.ChoiceField(
        source="min_severity",
        choices=Severity.choices,
        default=Severity.WARNING,
        help_text="Lowest severity sent to this receiver.",
    )

    class Meta:
        model = AlertReceiver
        fields = ["id", "name", "kind", "target", "severity", "enabled"]

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        kind = attrs.get("kind", getattr(self.instance, "kind", ""))
        target = attrs.get("target", getattr(self.instance, "target", ""))
        check = {"webhook": serializers.URLField, "email": serializers.EmailField}.get(kind)
        if check is not None:
            try:
                check().run_validation(target)
            except serializers.ValidationError as exc:  # the target's error, not the form's
                raise serializers.ValidationError({"target": exc.detail}) from exc
        return attrs


class NodeTokenSerializer(serializers.ModelSerializer[NodeToken]):
    node_name = serializers.CharField(source="node.name", read_only=True)
    token = serializers.SerializerMethodField(help_text="Plaintext, in the create answer only.")

    class Meta:
        model = NodeToken
        fields = [
            "id",
            "node",
            "node_name",
            "prefix",
            "created_at",
            "revoked_at",
            "last_used_at",
            "token",
        ]
        read_only_fields = ["id", "prefix", "created_at", "revoked_at", "last_used_at"]

    def get_token(self, obj: NodeToken) -> str | None:
        plaintext: str | None = self.context.get("plaintext")
        return plaintext


class ProbeRoundSerializer(serializers.Serializer[dict[str, Any]]):
    """One round of a probe run as stored (``slownode.RoundRecord.as_dict``)."""

    purpose = serializers.CharField(help_text="screen, re-pair or confirm.")
    reference_gbps = serializers.FloatField(help_text="The healthy bus bandwidth of the round.")
    pairs = serializers.ListField(
        child=serializers.ListField(child=serializers.JSONField()),
        help_text="[node_a, node_b, GB/s]; GB/s is null where the probe failed or timed out.",
    )


class ProbeRunSerializer(serializers.ModelSerializer[ProbeRun]):
    rounds = ProbeRoundSerializer(many=True, read_only=True)
    slow_nodes = serializers.ListField(child=serializers.CharField(), read_only=True)

    class Meta:
        model = ProbeRun
        fields = [
            "id",
            "pool",
            "state",
            "runner",
            "nodes",
            "rounds",
            "slow_nodes",
            "message",
            "created_at",
            "finished_at",
        ]
        read_only_fields = [
            "id",
            "state",
            "runner",
            "nodes",
            "rounds",
            "slow_nodes",
            "message",
            "created_at",
            "finished_at",
        ]


class ResultSerializer(serializers.Serializer[dict[str, Any]]):
    check = serializers.RegexField(r"^[a-z0-9_]{1,32}$")
    status = serializers.ChoiceField(choices=CheckStatus.choices)
    detail = serializers.CharField(allow_blank=True, required=False, max_length=2000)
    faults = serializers.ListField(
        child=serializers.RegexField(r"^[a-z0-9_]+(:[a-z0-9_]+)?$", max_length=64),
        required=False,
        max_length=32,
    )
    # A field named like Serializer.data: DRF's metaclass takes it out of the class body.
    data = serializers.DictField(required=False)  # type: ignore[assignment]


class ReportSerializer(serializers.Serializer[dict[str, Any]]):
    node = serializers.CharField(max_length=128)
    agent_version = serializers.CharField(max_length=32, required=False)
    results = ResultSerializer(many=True, max_length=64)  # type: ignore[call-arg]  # stubs lag
    remediations = serializers.DictField(child=serializers.CharField(), required=False)


class ReportAnswerSerializer(serializers.Serializer[dict[str, Any]]):
    actions = serializers.ListField(child=serializers.CharField())


class SpareSerializer(serializers.Serializer[dict[str, Any]]):
    spare = serializers.BooleanField(help_text="True: make the node a hot spare; false: back.")
