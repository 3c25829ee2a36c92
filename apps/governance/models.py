"""Resource governance (C9, C4 queue limits): idle policies, idle flags, queue-time flags and the
in-app notifications that tell owners about them."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class QueueAction(models.TextChoices):
    EXPIRE = "expire", "Expire (fail the job)"
    ESCALATE = "escalate", "Escalate to tenant admins (job keeps waiting)"


class IdlePolicy(models.Model):
    """Idle and queue-time rules. ``tenant`` null is the platform default (one row at most,
    every rule set); a tenant row holds only the rules the tenant set, each as strict as the
    default or stricter (checked by the services): a rule left null ('' for ``queue_action``)
    follows the default, so a default loosened later reaches it. ``max_runtime_s`` null means
    "no cap" on the default row and "follow the default" on a tenant row (a tenant cannot
    lift a cap)."""

    tenant = models.OneToOneField(
        "tenancy.Tenant",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="idle_policy",
    )
    util_threshold_pct = models.FloatField(
        null=True, blank=True, help_text="GPUs below this mean utilization are idle."
    )
    training_idle_s = models.PositiveIntegerField(
        null=True, blank=True, help_text="Idle this long flags a training job."
    )
    notebook_idle_s = models.PositiveIntegerField(
        null=True, blank=True, help_text="Idle this long flags a notebook."
    )
    grace_s = models.PositiveIntegerField(
        null=True, blank=True, help_text="Time between the warning and the stop."
    )
    max_extensions = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="'Keep running' clicks allowed."
    )
    extension_s = models.PositiveIntegerField(
        null=True, blank=True, help_text="Time one 'keep running' adds."
    )
    queue_action = models.CharField(
        max_length=16, choices=QueueAction.choices, blank=True, help_text="'': the default's."
    )
    webhook_url = models.URLField(blank=True, help_text="Tenant webhook for governance notices.")
    max_runtime_s = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Longest runtime limit a training job or notebook may declare, and the "
        "limit of those that declare none (null: no cap, or on a tenant row the default's).",
    )
    updated_at = models.DateTimeField(default=timezone.now)

    is_default = models.BooleanField(default=False, editable=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["is_default"],
                condition=models.Q(is_default=True),
                name="governance_one_default_policy",
            ),
            models.CheckConstraint(
                condition=models.Q(is_default=True, tenant__isnull=True)
                | models.Q(is_default=False, tenant__isnull=False),
                name="governance_policy_default_xor_tenant",
            ),
        ]

    def __str__(self) -> str:
        return f"idle policy {self.tenant.slug if self.tenant else 'default'}"


class FlagState(models.TextChoices):
    WARNED = "warned", "Warned"
    EXTENDED = "extended", "Kept running"
    STOPPED = "stopped", "Stopped"
    CLEARED = "cleared", "Busy again"
    EXEMPT = "exempt", "Exempt"


ACTIVE_FLAG_STATES = frozenset({FlagState.WARNED, FlagState.EXTENDED})


class IdleFlag(models.Model):
    """The idle episode of one job (one row per job, reused if it goes idle again)."""

    job = models.OneToOneField("jobs.Job", on_delete=models.CASCADE, related_name="idle_flag")
    tenant = models.ForeignKey("tenancy.Tenant", on_delete=models.CASCADE, related_name="+")
    state = models.CharField(max_length=16, choices=FlagState.choices)
    idle_since = models.DateTimeField(null=True, blank=True)
    peak_util_pct = models.FloatField(null=True, blank=True, help_text="Peak over the idle window.")
    warned_at = models.DateTimeField(null=True, blank=True)
    watch_from = models.DateTimeField(
        null=True, blank=True, help_text="Busy GPUs after this instant clear the flag."
    )
    stop_at = models.DateTimeField(null=True, blank=True)
    extensions_used = models.PositiveSmallIntegerField(default=0)
    reminded_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When the owner was reminded of the extended stop; cleared by each extension.",
    )
    exempt_reason = models.CharField(max_length=300, blank=True)
    exempted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    stopped_at = models.DateTimeField(null=True, blank=True)
    device_milli = models.PositiveIntegerField(default=0, help_text="Devices freed by the stop.")
    checkpoint_note = models.CharField(max_length=300, blank=True)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["tenant", "state"])]

    def __str__(self) -> str:
        return f"idle flag job {self.job_id} ({self.state})"


class QueueFlag(models.Model):
    """A job that waited past its ``max_wait_s``: what it waited on and what was done."""

    job = models.OneToOneField("jobs.Job", on_delete=models.CASCADE, related_name="queue_flag")
    tenant = models.ForeignKey("tenancy.Tenant", on_delete=models.CASCADE, related_name="+")
    action = models.CharField(max_length=16, choices=QueueAction.choices)
    waited_s = models.PositiveIntegerField()
    pending_code = models.CharField(max_length=32, blank=True)
    pending_message = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"queue flag job {self.job_id} ({self.action})"


class NoticeKind(models.TextChoices):
    IDLE_WARNING = "idle_warning", "Idle GPUs warning"
    IDLE_STOPPED = "idle_stopped", "Stopped for idle GPUs"
    QUEUE_EXPIRED = "queue_expired", "Expired in queue"
    QUEUE_ESCALATED = "queue_escalated", "Waiting past its limit"
    RUNTIME_LIMIT = "runtime_limit", "Stopped at its runtime limit"
    RUNTIME_LIMIT_SOON = "runtime_limit_soon", "Runtime limit soon"


class Notification(models.Model):
    """One in-app notice to one user; webhook and email copies are sent after commit."""

    tenant = models.ForeignKey("tenancy.Tenant", on_delete=models.CASCADE, related_name="+")
    recipient = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="governance_notices"
    )
    kind = models.CharField(max_length=24, choices=NoticeKind.choices)
    job = models.ForeignKey(
        "jobs.Job", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    title = models.CharField(max_length=200)
    body = models.CharField(max_length=1000)
    # The title and body as notes (keys and arguments, apps/jobs/notes.py), for the reader's
    # language: {"title": {"key", "args"}, "body": [{"key", "args"}, ...]}; {} before 0006.
    detail = models.JSONField(default=dict, blank=True)
    deliveries = models.JSONField(default=dict, blank=True)
    read_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    delivery_attempts = models.PositiveSmallIntegerField(default=0)
    retry_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When the governance pass delivers it again: a channel failed in a way worth "
        "retrying (apps/governance/rules.py delivery_retryable).",
    )

    class Meta:
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["recipient", "tenant", "-id"]),
            models.Index(fields=["retry_at"]),
        ]

    def __str__(self) -> str:
        return f"{self.kind} to {self.recipient_id}: {self.title}"
