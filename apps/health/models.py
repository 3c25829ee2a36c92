"""Node health: the fault catalogue, check states reported by node agents, incidents with the
jobs they hit, alerts, node-scoped agent tokens and slow-node probe runs (C7)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from apps.core.choices import RunState


class Severity(models.TextChoices):
    INFO = "info", "Info"
    WARNING = "warning", "Warning"
    CRITICAL = "critical", "Critical"


class FaultAction(models.TextChoices):
    ALERT = "alert", "Alert only"
    CORDON = "cordon", "Cordon"
    CORDON_DRAIN = "cordon_drain", "Cordon and drain (restart affected jobs)"
    REMEDIATE = "remediate", "Attempt the documented fix, else cordon"


class FaultRule(models.Model):
    """One catalogue entry: a fault code reported by an agent (``xid:79``) or by the platform
    (``slow_node``) -> severity -> action. A code without its own rule falls back to its family
    (``xid``), so operators can tune one XID without listing every other one."""

    code = models.CharField(max_length=64, unique=True)
    description = models.CharField(max_length=300, blank=True)
    severity = models.CharField(max_length=16, choices=Severity.choices)
    action = models.CharField(max_length=16, choices=FaultAction.choices)
    remediation = models.CharField(
        max_length=64, blank=True, help_text="Agent action name for 'remediate' (allow-listed)."
    )
    max_remediations = models.PositiveSmallIntegerField(
        default=1, help_text="Fix attempts before the node is cordoned instead."
    )
    substitute_spare = models.BooleanField(
        default=True, help_text="Bring a hot spare of the pool into service when cordoning."
    )
    enabled = models.BooleanField(default=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["code"]

    def __str__(self) -> str:
        return f"{self.code} -> {self.action}"


class CheckStatus(models.TextChoices):
    OK = "ok", "OK"
    WARN = "warn", "Warning"
    FAIL = "fail", "Failing"
    ABSENT = "absent", "Absent"


class NodeCheck(models.Model):
    """The latest outcome of one check on one node (the health grid reads these)."""

    node = models.ForeignKey("clusters.Node", on_delete=models.CASCADE, related_name="checks")
    check_name = models.CharField(max_length=32)
    status = models.CharField(max_length=8, choices=CheckStatus.choices)
    faults = models.JSONField(default=list)
    detail = models.CharField(max_length=500, blank=True)
    data = models.JSONField(default=dict, blank=True)
    since = models.DateTimeField(default=timezone.now, help_text="When this status began.")
    reported_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["node_id", "check_name"]
        constraints = [
            models.UniqueConstraint(fields=["node", "check_name"], name="uniq_node_check"),
        ]

    def __str__(self) -> str:
        return f"{self.node_id}/{self.check_name}: {self.status}"


class CheckChange(models.Model):
    """A check's history, one row per change of status or faults (not per round), so the
    per-node history stays small at any report rate."""

    node = models.ForeignKey(
        "clusters.Node", on_delete=models.CASCADE, related_name="check_changes"
    )
    check_name = models.CharField(max_length=32)
    status = models.CharField(max_length=8, choices=CheckStatus.choices)
    faults = models.JSONField(default=list)
    detail = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["node", "-id"])]

    def __str__(self) -> str:
        return f"{self.node_id}/{self.check_name} -> {self.status}"


class IncidentState(models.TextChoices):
    OPEN = "open", "Open"
    CLOSED = "closed", "Closed"


class Incident(models.Model):
    """One fault on one node, from detection to repair. At most one open per (node, fault)."""

    node = models.ForeignKey("clusters.Node", on_delete=models.CASCADE, related_name="incidents")
    fault = models.CharField(max_length=64)
    check_name = models.CharField(
        max_length=32, blank=True, help_text="Reporting check; blank: the platform."
    )
    severity = models.CharField(max_length=16, choices=Severity.choices)
    action = models.CharField(max_length=16, choices=FaultAction.choices)
    state = models.CharField(max_length=8, choices=IncidentState.choices, default="open")
    detail = models.CharField(max_length=500, blank=True)
    actions_taken = models.JSONField(default=list, help_text="[[iso time, what], ...]")
    remediations = models.PositiveSmallIntegerField(default=0)
    spare = models.ForeignKey(
        "clusters.Node", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    lost_gpu_seconds = models.FloatField(default=0.0)
    opened_at = models.DateTimeField(default=timezone.now)
    last_seen_at = models.DateTimeField(default=timezone.now)
    closed_at = models.DateTimeField(null=True, blank=True)
    closed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )

    class Meta:
        ordering = ["-opened_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["node", "fault"], condition=Q(state="open"), name="uniq_open_incident"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.fault} on {self.node_id} ({self.state})"


class IncidentJob(models.Model):
    """A job an incident hit: how it was restarted, from where, and the GPU time it lost."""

    incident = models.ForeignKey(Incident, on_delete=models.CASCADE, related_name="jobs")
    job = models.ForeignKey("jobs.Job", on_delete=models.CASCADE, related_name="incidents")
    outcome = models.CharField(max_length=16, help_text="restarted | requeued | failed")
    devices = models.PositiveIntegerField()
    attempt = models.PositiveSmallIntegerField(help_text="The attempt the fault ended.")
    resume_step = models.BigIntegerField(
        null=True, blank=True, help_text="Step of the newest complete checkpoint; null: start."
    )
    resume_from = models.CharField(max_length=300, blank=True)
    lost_gpu_seconds = models.FloatField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["incident", "job", "attempt"], name="uniq_incident_job_attempt"
            ),
        ]

    def __str__(self) -> str:
        return f"incident {self.incident_id}: job {self.job_id} {self.outcome}"


class AlertState(models.TextChoices):
    OPEN = "open", "Open"
    RESOLVED = "resolved", "Resolved"


class Alert(models.Model):
    """In-app alert, also sent to webhooks and email. De-duplicated per (node, fault) while
    unresolved: a repeat bumps ``occurrences`` and sends nothing."""

    node = models.ForeignKey("clusters.Node", on_delete=models.CASCADE, related_name="alerts")
    fault = models.CharField(max_length=64)
    incident = models.ForeignKey(
        Incident, on_delete=models.SET_NULL, null=True, blank=True, related_name="alerts"
    )
    severity = models.CharField(max_length=16, choices=Severity.choices)
    message = models.CharField(max_length=500)
    state = models.CharField(max_length=16, choices=AlertState.choices, default="open")
    occurrences = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(default=timezone.now)
    acknowledged_at = models.DateTimeField(null=True, blank=True)
    acknowledged_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    resolved_at = models.DateTimeField(null=True, blank=True)
    deliveries = models.JSONField(
        default=dict, blank=True, help_text="{receiver id: the last round's outcome}"
    )
    delivery_attempts = models.PositiveSmallIntegerField(
        default=0, help_text="Delivery rounds made (the first, then retries)."
    )

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["node", "fault"], condition=Q(state="open"), name="uniq_open_alert"
            ),
        ]

    def __str__(self) -> str:
        return f"[{self.severity}] {self.message}"


class ReceiverKind(models.TextChoices):
    WEBHOOK = "webhook", "Webhook (JSON POST)"
    EMAIL = "email", "Email"


class AlertReceiver(models.Model):
    """Where alerts go besides the in-app inbox."""

    name = models.CharField(max_length=64, unique=True)
    kind = models.CharField(max_length=8, choices=ReceiverKind.choices)
    target = models.CharField(max_length=500, help_text="Webhook URL or an email address.")
    min_severity = models.CharField(max_length=16, choices=Severity.choices, default="warning")
    enabled = models.BooleanField(default=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.kind}:{self.name}"


class NodeToken(models.Model):
    """A node agent's credential: bound to one node, accepted only by the health report
    endpoint for that node. Only a digest of the secret is stored (as for API tokens)."""

    node = models.ForeignKey("clusters.Node", on_delete=models.CASCADE, related_name="tokens")
    prefix = models.CharField(max_length=16, unique=True)
    digest = models.CharField(max_length=64)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="Set when a rotation replaced this token: valid until the agent has "
        "reported with its successor, or until this time at the latest.",
    )

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"node {self.node_id} ({self.prefix}…)"


ProbeRunState = RunState


class ProbeRun(models.Model):
    """One slow-node search over a pool: rounds of parallel pairwise bandwidth probes."""

    pool = models.ForeignKey("clusters.ResourcePool", on_delete=models.CASCADE, related_name="+")
    state = models.CharField(max_length=8, choices=ProbeRunState.choices, default="pending")
    runner = models.CharField(max_length=16, default="simulated")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    nodes = models.PositiveIntegerField(default=0)
    rounds = models.JSONField(default=list, help_text="Per round: pairs and bandwidths.")
    slow_nodes = models.JSONField(default=list)
    message = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"probe run {self.pk} ({self.state})"
