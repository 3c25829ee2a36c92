"""Inference service settings in and out; every bad value is a 400 with field errors."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from rest_framework import serializers

from apps.clusters.models import ClusterKind, ResourcePool
from apps.inference.models import (
    DEFAULT_RUNTIME_IMAGE,
    InferenceService,
    RolloutState,
    ScalingDecision,
    ServiceRevision,
    TargetMetric,
    TrafficSample,
)
from apps.jobs.api.serializers import (
    IMAGE_REF,
    NAME,
    NAME_RULE,
    PriorityRule,
    RejectUnknownFields,
)
from apps.jobs.models import TERMINAL

PATH = r"^/[A-Za-z0-9._~/-]*$"
PATH_RULE: dict[str, Any] = {
    "invalid": "An HTTP path starting with '/' (letters, digits and . _ ~ / -)."
}
HARD_MAX_REPLICAS = 512


class InferenceServiceSerializer(
    PriorityRule, RejectUnknownFields, serializers.ModelSerializer[InferenceService]
):
    """An inference service: its model, replicas and autoscaling and rollout settings, and the
    replicas it runs now. Unknown keys are refused (a misspelt max_replica must not deploy with
    the default instead)."""

    unknown_field = gettext_lazy("Unknown field; it cannot be set on an inference service.")
    name = serializers.RegexField(NAME, max_length=40, source="job.name", error_messages=NAME_RULE)
    pool = serializers.PrimaryKeyRelatedField(
        queryset=ResourcePool.objects.all(), source="job.pool"
    )
    priority = serializers.IntegerField(min_value=0, max_value=5, default=4, source="job.priority")
    state = serializers.CharField(source="job.state", read_only=True)
    job = serializers.IntegerField(source="job.pk", read_only=True)
    # The job's owner: with tenant admins, the one who may stop the service (cancel its job).
    owner = serializers.CharField(source="job.owner.username", read_only=True, allow_null=True)
    simulated = serializers.SerializerMethodField(
        help_text="Whether the service runs on the simulated cluster, whose replicas and "
        "traffic are made up in-process (no model serves any request)."
    )
    runtime_image = serializers.CharField(max_length=300, default=DEFAULT_RUNTIME_IMAGE)
    model_uri = serializers.RegexField(
        r"^(s3|gs|pvc|hf|oss|https?)://\S+$|^/\S*$",
        max_length=500,
        error_messages={
            "invalid": "A URI with scheme s3, gs, pvc, hf, oss, http or https, or an absolute path."
        },
    )
    port = serializers.IntegerField(min_value=1, max_value=65535, default=8000)
    accelerators = serializers.IntegerField(min_value=0, max_value=16, default=1)
    accelerator_milli = serializers.IntegerField(min_value=0, max_value=999, default=0)
    min_replicas = serializers.IntegerField(min_value=0, max_value=HARD_MAX_REPLICAS, default=1)
    max_replicas = serializers.IntegerField(min_value=1, max_value=HARD_MAX_REPLICAS, default=4)
    scale_to_zero = serializers.BooleanField(default=False)
    target_metric = serializers.ChoiceField(TargetMetric.choices, default=TargetMetric.CONCURRENCY)
    target_value = serializers.FloatField(min_value=0.001, max_value=100_000, default=24.0)
    stable_window_s = serializers.IntegerField(min_value=6, max_value=3600, default=60)
    panic_window_s = serializers.IntegerField(min_value=1, max_value=600, default=6)
    scale_down_delay_s = serializers.IntegerField(min_value=0, max_value=3600, default=300)
    max_scale_up_rate = serializers.FloatField(min_value=1.1, max_value=1000, default=10.0)
    cold_start_s = serializers.IntegerField(min_value=0, max_value=3600, default=60)
    forecast_quantile = serializers.FloatField(
        min_value=0.5, max_value=0.99, default=0.9, allow_null=True,
        help_text="Quantile of the load one cold start ahead to provision for (0.5-0.99); "
        "null: no forecast. Not used with the latency metric.",
    )  # fmt: skip
    max_surge = serializers.IntegerField(min_value=0, max_value=HARD_MAX_REPLICAS, default=1)
    max_unavailable = serializers.IntegerField(min_value=0, max_value=HARD_MAX_REPLICAS, default=0)
    readiness_path = serializers.RegexField(
        PATH, max_length=200, default="/health", error_messages=PATH_RULE
    )
    liveness_path = serializers.RegexField(
        PATH, max_length=200, default="/health", error_messages=PATH_RULE
    )
    probe_initial_delay_s = serializers.IntegerField(min_value=0, max_value=3600, default=30)
    probe_period_s = serializers.IntegerField(min_value=1, max_value=300, default=10)
    revision = serializers.IntegerField(
        read_only=True,
        help_text="The revision (runtime image and model) the service runs or rolls out to; "
        "changing runtime_image or model_uri makes the next one.",
    )
    serving_revision = serializers.IntegerField(
        read_only=True, help_text="The newest revision that served on every replica."
    )
    rollout_state = serializers.ChoiceField(
        RolloutState.choices,
        read_only=True,
        help_text="Empty when no rollout runs; rolling, waiting (for room for a surge "
        "replica) or finishing (giving back the surge room).",
    )
    updated_replicas = serializers.IntegerField(
        read_only=True, help_text="Replicas started on the new revision, while a rollout runs."
    )
    rollout_reason = serializers.CharField(
        read_only=True, help_text="Why the rollout waits or has less surge room than asked."
    )
    rollout_detail = serializers.ListField(
        child=serializers.JSONField(),
        read_only=True,
        help_text="`rollout_reason` as phrases (`{key, args}`, as a job's `pending_detail`).",
    )

    class Meta:
        model = InferenceService
        fields = [
            "id", "job", "name", "pool", "priority", "state", "owner", "simulated",
            "runtime_image", "model_uri", "port", "accelerators", "accelerator_milli",
            "min_replicas", "max_replicas", "scale_to_zero", "target_metric", "target_value",
            "stable_window_s",
            "panic_window_s", "scale_down_delay_s", "max_scale_up_rate", "cold_start_s",
            "forecast_quantile", "max_surge", "max_unavailable", "readiness_path", "liveness_path",
            "probe_initial_delay_s", "probe_period_s", "desired_replicas", "ready_replicas",
            "loading_replicas", "panic", "revision", "serving_revision", "rollout_state",
            "updated_replicas", "rollout_reason", "rollout_detail", "created_at", "updated_at",
        ]  # fmt: skip
        read_only_fields = [
            "desired_replicas", "ready_replicas", "loading_replicas", "panic", "revision",
            "serving_revision", "rollout_state", "updated_replicas", "rollout_reason",
            "rollout_detail", "created_at", "updated_at",
        ]  # fmt: skip

    def get_simulated(self, instance: InferenceService) -> bool:
        return bool(instance.job.pool.cluster.kind == ClusterKind.SIMULATED)

    def to_representation(self, instance: InferenceService) -> dict[str, Any]:
        data = dict(super().to_representation(instance))
        if instance.job.state in TERMINAL:
            # The stored counts are the last the autoscaler saw; a service whose job ended
            # (cancelled, failed) runs no replicas whatever they said.
            data.update(desired_replicas=0, ready_replicas=0, loading_replicas=0, panic=False)
            data.update(rollout_state="", updated_replicas=0, rollout_reason="", rollout_detail=[])
        return data

    def validate_runtime_image(self, value: str) -> str:
        if not IMAGE_REF.match(value):
            raise serializers.ValidationError(f"{value!r} is not a valid image reference.")
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        current = self.instance

        def value(key: str) -> Any:
            if key in attrs:
                return attrs[key]
            if current is not None:
                return getattr(current, key)
            return self.fields[key].default

        errors: dict[str, list[str]] = {}
        whole, milli = value("accelerators"), value("accelerator_milli")
        if whole and milli:
            errors["accelerator_milli"] = [_("Ask for whole accelerators or a fraction, not both.")]
        elif not whole and not milli:
            errors["accelerators"] = [_("A replica needs accelerators (whole or fractional).")]
        lo, hi = value("min_replicas"), value("max_replicas")
        if lo > hi:
            errors["min_replicas"] = [
                _("min_replicas ({low}) exceeds max_replicas ({high}).").format(low=lo, high=hi)
            ]
        if lo == 0 and not value("scale_to_zero"):
            errors["scale_to_zero"] = [_("min_replicas 0 needs scale_to_zero enabled.")]
        if value("scale_to_zero") and lo > 0:
            errors["min_replicas"] = [_("Scale to zero needs min_replicas 0.")]
        if value("panic_window_s") > value("stable_window_s"):
            errors["panic_window_s"] = [_("The panic window must not exceed the stable window.")]
        if value("max_surge") == 0 and value("max_unavailable") == 0:
            errors["max_surge"] = [_("max_surge and max_unavailable cannot both be 0.")]
        if value("target_metric") == TargetMetric.LATENCY and value("target_value") < 0.01:
            errors["target_value"] = [_("A latency target is in seconds; use at least 0.01.")]
        if current is not None:
            ended = current.job.state in TERMINAL
            for key in ("runtime_image", "model_uri"):
                if ended and key in attrs and attrs[key] != getattr(current, key):
                    errors[key] = [
                        _("The service has ended; create a new service to serve another one.")
                    ]
            for key in ("name", "pool", "priority"):
                if key in self.initial_data:
                    errors[key] = [_("Fixed at creation; create a new service to change it.")]
            # A replica's size was admitted against the quota with the job; its replicas and
            # allocations keep it, so another size is another service.
            for key in ("accelerators", "accelerator_milli"):
                if key in attrs and attrs[key] != getattr(current, key):
                    errors[key] = [_("Fixed at creation; create a new service to change it.")]
        if errors:
            raise serializers.ValidationError(errors)
        return attrs

    def create(self, validated_data: dict[str, Any]) -> InferenceService:
        from apps.inference.services import create_service

        job = validated_data.pop("job")
        tenant, owner = validated_data.pop("tenant"), validated_data.pop("owner")
        return create_service(
            tenant=tenant,
            owner=owner,
            name=job["name"],
            pool=job["pool"],
            priority=job["priority"],
            settings=validated_data,
        )

    def update(
        self, instance: InferenceService, validated_data: dict[str, Any]
    ) -> InferenceService:
        from apps.core.viewsets import request_user
        from apps.inference.services import update_settings

        validated_data.pop("job", None)
        return update_settings(
            service=instance,
            changes=validated_data,
            actor=request_user(self.context["request"]),
        )


class RevisionSettingsSerializer(serializers.Serializer[dict[str, Any]]):
    """The port and probes a revision's replicas run with."""

    port = serializers.IntegerField(read_only=True)
    readiness_path = serializers.CharField(read_only=True)
    liveness_path = serializers.CharField(read_only=True)
    probe_initial_delay_s = serializers.IntegerField(read_only=True)
    probe_period_s = serializers.IntegerField(read_only=True)


class ServiceRevisionSerializer(serializers.ModelSerializer[ServiceRevision]):
    created_by = serializers.CharField(
        source="created_by.username",
        read_only=True,
        allow_null=True,
        help_text="Who made it; null for an automatic rollback.",
    )
    rollback_of = serializers.IntegerField(
        read_only=True,
        allow_null=True,
        help_text="The earlier revision whose image, model, port and probes it restores.",
    )
    settings = RevisionSettingsSerializer(
        read_only=True, help_text="The port and probes its replicas run with."
    )

    message_key = serializers.CharField(
        read_only=True,
        help_text="Set when the platform wrote `message` from its catalogue (as a job event's "
        "`message_key`); empty for the cluster's own words (why a rollout failed).",
    )
    message_args = serializers.DictField(
        child=serializers.JSONField(),
        read_only=True,
        help_text="The values the catalogue sentence of `message_key` takes.",
    )

    class Meta:
        model = ServiceRevision
        fields = [
            "number", "runtime_image", "model_uri", "settings", "state", "created_at",
            "created_by", "rollback_of", "finished_at", "message", "message_key", "message_args",
        ]  # fmt: skip
        read_only_fields = fields


class RollbackSerializer(serializers.Serializer[dict[str, Any]]):
    revision = serializers.IntegerField(
        min_value=1,
        help_text="The earlier revision whose runtime image, model, port and probes to serve "
        "again.",
    )


class TrafficSampleSerializer(serializers.ModelSerializer[TrafficSample]):
    gpu_by_replica = serializers.DictField(
        child=serializers.FloatField(),
        read_only=True,
        help_text="GPU use of each ready replica (pod name on Kubernetes), 0..1.",
    )

    class Meta:
        model = TrafficSample
        fields = [
            "at", "period_s", "qps", "concurrency", "p50_ms", "p95_ms", "p99_ms", "errors",
            "gpu_util", "gpu_by_replica", "ready_replicas", "loading_replicas",
        ]  # fmt: skip
        read_only_fields = fields


class ScalingDecisionSerializer(serializers.ModelSerializer[ScalingDecision]):
    metric = serializers.CharField(read_only=True, help_text="concurrency, qps or latency")
    limited_detail = serializers.ListField(
        child=serializers.JSONField(),
        read_only=True,
        help_text="`limited_by` as phrases (`{key, args}`, as a job's `pending_detail`), so a "
        "client can say it in its reader's language; empty when none.",
    )

    class Meta:
        model = ScalingDecision
        fields = [
            "id", "at", "metric", "observed_stable", "observed_panic", "current", "desired",
            "panic", "reason", "wanted", "limited_by", "limited_detail",
        ]  # fmt: skip
        read_only_fields = fields
