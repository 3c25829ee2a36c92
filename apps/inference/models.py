"""Inference services: the serving settings of an inference Job, its traffic metrics and the
autoscaler's recorded decisions. The Job (kind "inference") stays the unit the scheduler and
the cluster know; this app adds what only a model service has, one-to-one."""

from __future__ import annotations

from django.db import models
from django.utils import timezone

DEFAULT_RUNTIME_IMAGE = "vllm/vllm-openai:v0.6.3"


class TargetMetric(models.TextChoices):
    CONCURRENCY = "concurrency", "In-flight requests per replica"
    QPS = "qps", "Requests per second per replica"
    LATENCY = "latency", "p95 latency (seconds)"


class RolloutState(models.TextChoices):
    IDLE = "", "No rollout"
    ROLLING = "rolling", "Replacing replicas with the new revision"
    WAITING = "waiting", "Waiting for room for a surge replica"
    FINISHING = "finishing", "New revision ready; giving back the surge room"
    FAILED = "failed", "Did not roll out and was not rolled back; needs a new revision"


class InferenceService(models.Model):
    job = models.OneToOneField("jobs.Job", on_delete=models.CASCADE, related_name="service")
    tenant = models.ForeignKey(
        "tenancy.Tenant", on_delete=models.CASCADE, related_name="inference_services"
    )
    runtime_image = models.CharField(max_length=300, default=DEFAULT_RUNTIME_IMAGE)
    model_uri = models.CharField(max_length=500, help_text="s3://, pvc://, hf:// or a path.")
    port = models.PositiveIntegerField(default=8000)
    accelerators = models.PositiveSmallIntegerField(default=1)
    accelerator_milli = models.PositiveSmallIntegerField(default=0)
    min_replicas = models.PositiveIntegerField(default=1)
    max_replicas = models.PositiveIntegerField(default=4)
    scale_to_zero = models.BooleanField(default=False)
    target_metric = models.CharField(
        max_length=16, choices=TargetMetric.choices, default=TargetMetric.CONCURRENCY
    )
    target_value = models.FloatField(default=24.0)
    stable_window_s = models.PositiveIntegerField(default=60)
    panic_window_s = models.PositiveIntegerField(default=6)
    scale_down_delay_s = models.PositiveIntegerField(default=300)
    max_scale_up_rate = models.FloatField(default=10.0)
    cold_start_s = models.PositiveIntegerField(
        default=60, help_text="Expected model load time; the scaler plans ahead by it."
    )
    forecast_quantile = models.FloatField(
        null=True,
        blank=True,
        default=0.9,
        help_text="Size capacity for this quantile of the load one cold start ahead, learnt "
        "from the service's own forecast errors; empty: react to the observed load only.",
    )
    max_surge = models.PositiveIntegerField(default=1)
    max_unavailable = models.PositiveIntegerField(default=0)
    readiness_path = models.CharField(max_length=200, default="/health")
    liveness_path = models.CharField(max_length=200, default="/health")
    probe_initial_delay_s = models.PositiveIntegerField(default=30)
    probe_period_s = models.PositiveIntegerField(default=10)
    revision = models.PositiveIntegerField(
        default=1, help_text="The revision (image and model) the service runs or rolls out to."
    )
    serving_revision = models.PositiveIntegerField(
        default=1, help_text="The newest revision that served on every replica."
    )
    rollout_state = models.CharField(
        max_length=10, choices=RolloutState.choices, default=RolloutState.IDLE, blank=True
    )
    updated_replicas = models.PositiveIntegerField(
        default=0, help_text="Replicas on the current revision, while a rollout runs."
    )
    rollout_reason = models.CharField(
        max_length=300, blank=True, help_text="Why the rollout waits or goes slower than asked."
    )
    rollout_detail = models.JSONField(default=list, blank=True)
    desired_replicas = models.PositiveIntegerField(default=1)
    ready_replicas = models.PositiveIntegerField(default=0)
    loading_replicas = models.PositiveIntegerField(default=0)
    panic = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(min_replicas__lte=models.F("max_replicas")),
                name="inference_min_le_max",
            )
        ]

    def __str__(self) -> str:
        return f"service of job {self.job_id}"


class TrafficSample(models.Model):
    """Traffic of one service over ``period_s`` seconds ending at ``at``."""

    service = models.ForeignKey(InferenceService, on_delete=models.CASCADE, related_name="samples")
    at = models.DateTimeField(default=timezone.now)
    period_s = models.PositiveIntegerField(default=10)
    qps = models.FloatField()
    concurrency = models.FloatField()
    p50_ms = models.FloatField()
    p95_ms = models.FloatField()
    p99_ms = models.FloatField()
    errors = models.PositiveIntegerField(default=0)
    gpu_util = models.FloatField(help_text="Mean use of the ready replicas' GPUs, 0..1.")
    gpu_by_replica = models.JSONField(
        default=dict, blank=True, help_text="GPU use of each ready replica (pod), 0..1."
    )
    ready_replicas = models.PositiveIntegerField()
    loading_replicas = models.PositiveIntegerField()

    class Meta:
        ordering = ["-at"]
        indexes = [models.Index(fields=["service", "-at"])]

    def __str__(self) -> str:
        return f"service {self.service_id} at {self.at:%H:%M:%S}: {self.qps:.1f} req/s"


class ScalingDecision(models.Model):
    """One change the autoscaler made (or a panic mode switch), with what it saw."""

    service = models.ForeignKey(
        InferenceService, on_delete=models.CASCADE, related_name="decisions"
    )
    at = models.DateTimeField(default=timezone.now)
    metric = models.CharField(max_length=16, choices=TargetMetric.choices)
    observed_stable = models.FloatField()
    observed_panic = models.FloatField()
    current = models.PositiveIntegerField()
    desired = models.PositiveIntegerField()
    panic = models.BooleanField(default=False)
    reason = models.CharField(max_length=64)
    wanted = models.PositiveIntegerField(
        null=True, blank=True, help_text="What the autoscaler asked for, when fewer were admitted."
    )
    limited_by = models.CharField(
        max_length=300, blank=True, help_text="Why fewer replicas were admitted (quota, room)."
    )
    # The same as phrases (the scheduler's, or the platform's notes) for the reader's language.
    limited_detail = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["service", "-at"])]

    def __str__(self) -> str:
        return f"service {self.service_id}: {self.current} -> {self.desired} ({self.reason})"


class RevisionState(models.TextChoices):
    PENDING = "pending", "Takes effect when the service starts"
    ROLLING = "rolling", "Rolling out"
    COMPLETE = "complete", "Serving"
    SUPERSEDED = "superseded", "Replaced by a later revision"
    FAILED = "failed", "Failed to roll out"


class ServiceRevision(models.Model):
    """One version of what a service's replicas run: its runtime image, model, port and
    probes. Changing any of them makes a new revision, rolled out replica by replica; a
    rollback makes a new revision with an earlier one's, so the history only grows."""

    service = models.ForeignKey(
        InferenceService, on_delete=models.CASCADE, related_name="revisions"
    )
    number = models.PositiveIntegerField()
    runtime_image = models.CharField(max_length=300)
    model_uri = models.CharField(max_length=500)
    settings = models.JSONField(
        default=dict,
        blank=True,
        help_text="The port and probes its replicas run with (port, readiness_path, "
        "liveness_path, probe_initial_delay_s, probe_period_s).",
    )
    state = models.CharField(max_length=10, choices=RevisionState.choices)
    created_at = models.DateTimeField(default=timezone.now)
    created_by = models.ForeignKey(
        "accounts.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    rollback_of = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="The earlier revision whose image, model, port and probes it restores.",
    )
    finished_at = models.DateTimeField(null=True, blank=True)
    message = models.CharField(max_length=500, blank=True)
    # The message as a catalogue sentence (as a job event's), when the platform wrote it.
    message_key = models.CharField(max_length=64, blank=True, default="")
    message_args = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-number"]
        constraints = [
            models.UniqueConstraint(fields=["service", "number"], name="uniq_service_revision")
        ]

    def __str__(self) -> str:
        return f"service {self.service_id} revision {self.number} ({self.state})"
