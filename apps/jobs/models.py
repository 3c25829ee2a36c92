"""Jobs (training, notebook, inference), their state machine, allocations, events and the
outbox of cluster actions."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import pgettext_lazy


class JobKind(models.TextChoices):
    TRAINING = "training", "Training"
    NOTEBOOK = "notebook", "Notebook"
    INFERENCE = "inference", "Inference"


class JobState(models.TextChoices):
    SUBMITTED = "submitted", "Submitted"
    QUEUED = "queued", "Queued"
    ADMITTED = "admitted", "Admitted"
    DISPATCHING = "dispatching", "Dispatching"
    RUNNING = "running", "Running"
    PREEMPTED = "preempted", "Preempted"
    RESTARTING = "restarting", "Restarting"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


# A state inside a sentence, in the reader's language: the code itself in English, the
# dashboard's word in Chinese (jobState in zh.ts; tests/jobs/test_notebook_proxy.py holds
# locale/zh_Hans to it).
STATE_WORDS: dict[str, object] = {
    JobState.SUBMITTED: pgettext_lazy("job state", "submitted"),
    JobState.QUEUED: pgettext_lazy("job state", "queued"),
    JobState.ADMITTED: pgettext_lazy("job state", "admitted"),
    JobState.DISPATCHING: pgettext_lazy("job state", "dispatching"),
    JobState.RUNNING: pgettext_lazy("job state", "running"),
    JobState.PREEMPTED: pgettext_lazy("job state", "preempted"),
    JobState.RESTARTING: pgettext_lazy("job state", "restarting"),
    JobState.SUCCEEDED: pgettext_lazy("job state", "succeeded"),
    JobState.FAILED: pgettext_lazy("job state", "failed"),
    JobState.CANCELLED: pgettext_lazy("job state", "cancelled"),
}


def state_word(state: str) -> str:
    """``state`` as a sentence of the active language names it."""
    word = STATE_WORDS.get(state)
    return str(word) if word is not None else state


S = JobState
# The one transition table. Every state change goes through ``services.transition`` which
# checks it here and applies it as a compare-and-set update.
TRANSITIONS: dict[str, frozenset[str]] = {
    S.SUBMITTED: frozenset({S.QUEUED, S.FAILED, S.CANCELLED}),
    S.QUEUED: frozenset({S.ADMITTED, S.CANCELLED, S.FAILED}),
    # admitted -> failed: the cluster refused the workload for good (relay, DispatchFailed).
    S.ADMITTED: frozenset({S.DISPATCHING, S.QUEUED, S.CANCELLED, S.PREEMPTED, S.FAILED}),
    S.DISPATCHING: frozenset(
        {S.RUNNING, S.SUCCEEDED, S.FAILED, S.CANCELLED, S.PREEMPTED, S.RESTARTING}
    ),
    S.RUNNING: frozenset({S.SUCCEEDED, S.FAILED, S.CANCELLED, S.PREEMPTED, S.RESTARTING}),
    S.PREEMPTED: frozenset({S.QUEUED, S.CANCELLED}),
    S.RESTARTING: frozenset({S.QUEUED, S.FAILED, S.CANCELLED}),
    S.SUCCEEDED: frozenset(),
    S.FAILED: frozenset(),
    S.CANCELLED: frozenset(),
}
TERMINAL = frozenset({S.SUCCEEDED, S.FAILED, S.CANCELLED})
# States in which the job holds an allocation on the cluster.
HOLDING = frozenset({S.ADMITTED, S.DISPATCHING, S.RUNNING})
PENDING = frozenset({S.SUBMITTED, S.QUEUED, S.PREEMPTED, S.RESTARTING})


class Job(models.Model):
    """A unit of work of one tenant: its spec, where it runs, and where it is in its life."""

    tenant = models.ForeignKey("tenancy.Tenant", on_delete=models.CASCADE, related_name="jobs")
    project = models.ForeignKey(
        "tenancy.Project", on_delete=models.SET_NULL, null=True, blank=True, related_name="jobs"
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="jobs"
    )
    name = models.CharField(max_length=63)
    kind = models.CharField(max_length=16, choices=JobKind.choices)
    pool = models.ForeignKey("clusters.ResourcePool", on_delete=models.PROTECT, related_name="+")
    priority = models.PositiveSmallIntegerField(default=4, help_text="0..5 for P0..P5")
    spec = models.JSONField(help_text="Canonical workload spec, validated by the API.")
    accelerator_model = models.CharField(
        max_length=32, blank=True, help_text="The model the job asked for (blank: any)."
    )
    requested_devices = models.PositiveIntegerField(default=0)
    requested_milli = models.PositiveIntegerField(
        default=0, help_text="Fractional shares, in milli-devices, over all replicas."
    )
    state = models.CharField(max_length=16, choices=JobState.choices, default=S.SUBMITTED)
    state_reason = models.CharField(max_length=300, blank=True)
    state_changed_at = models.DateTimeField(default=timezone.now)
    pending_code = models.CharField(max_length=32, blank=True)
    pending_message = models.CharField(max_length=500, blank=True)
    # The same reason as the scheduling core's phrases (apps/scheduling/core/text.py), so the
    # dashboard can say it in the reader's language; [] when it has none.
    pending_detail = models.JSONField(default=list, blank=True)
    queue_position = models.PositiveIntegerField(null=True, blank=True)
    expected_start_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="Queued jobs: when the scheduler expects the job to start if the work "
        "running and queued runs to its declared runtime limits and nothing else arrives "
        "(apps/scheduling/forecast.py). Null: no forecast yet (expected_start_as_of null) or "
        "not within the forecast's 7 days.",
    )
    expected_start_as_of = models.DateTimeField(
        null=True, blank=True, help_text="When expected_start_at was worked out."
    )
    max_wait_s = models.PositiveIntegerField(null=True, blank=True)
    max_runtime_s = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Longest the job may hold its accelerators per run, from its admission; "
        "it is stopped after that. The scheduler plans with it (when nodes drain).",
    )
    max_retries = models.PositiveSmallIntegerField(default=3)
    attempt = models.PositiveSmallIntegerField(
        default=0, help_text="Dispatch generation: +1 each time the job leaves the cluster."
    )
    failures = models.PositiveSmallIntegerField(
        default=0, help_text="Restarts after failures; at max_retries the job fails."
    )
    cancel_requested = models.BooleanField(default=False)
    submitted_at = models.DateTimeField(default=timezone.now)
    admitted_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    after = models.ManyToManyField(
        "self",
        symmetrical=False,
        blank=True,
        related_name="dependents",
        help_text="Training jobs of the same tenant that must succeed before this one starts "
        "(apps/jobs/after.py).",
    )
    waiting_for_jobs = models.BooleanField(
        default=False,
        help_text="Queued, but some job in `after` has not succeeded yet: the scheduler does "
        "not place it, and its max wait does not run.",
    )
    released_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When the last job in `after` succeeded: the job waits in the queue, and "
        "takes its place in it, from then.",
    )
    home_deleted_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="Notebooks: when the home volume this notebook mounts was deleted.",
    )

    class Meta:
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["state", "pool"]),
            models.Index(fields=["tenant", "-id"]),
        ]
        constraints = [
            models.CheckConstraint(condition=models.Q(priority__lte=5), name="job_priority_0_5"),
        ]

    def __str__(self) -> str:
        return f"{self.tenant.slug}/{self.name}#{self.pk}"

    @property
    def object_name(self) -> str:
        """Cluster object name: derived from the id, so a repeated create is recognised."""
        return f"zs-{self.kind[:5]}-{self.pk}"


class JobEvent(models.Model):
    """One state change (or notable happening) of a job, with a reason a person can read."""

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="events")
    from_state = models.CharField(max_length=16, blank=True)
    to_state = models.CharField(max_length=16, blank=True)
    reason = models.CharField(max_length=64)
    message = models.CharField(max_length=500, blank=True)
    # When the platform wrote the message from its catalogue (apps.jobs.notes): the key and
    # arguments, so the dashboard can show it in the reader's language. Blank otherwise.
    message_key = models.CharField(max_length=64, blank=True, default="")
    message_args = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.job_id}: {self.from_state}->{self.to_state} ({self.reason})"


class JobLogLine(models.Model):
    """A line of a job's output, copied from the cluster by the log collector so it stays
    readable after the pods are gone (and the web process never reads the cluster)."""

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="log_lines")
    attempt = models.PositiveIntegerField(default=0)
    ts = models.DateTimeField()
    replica = models.CharField(max_length=253)
    text = models.CharField(max_length=2000)

    class Meta:
        ordering = ["ts", "id"]
        indexes = [models.Index(fields=["job", "ts"], name="jobs_log_job_ts")]

    def __str__(self) -> str:
        return f"{self.job_id} {self.replica}: {self.text[:40]}"


class JobLogFollow(models.Model):
    """Someone is reading this job's output until ``until``: the collector copies it from the
    cluster while that holds. Unread jobs' output is copied once, when they end (or right
    before their objects are deleted), so the collector's cluster calls scale with readers,
    not with running jobs."""

    job = models.OneToOneField(Job, on_delete=models.CASCADE, related_name="log_follow")
    until = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.job_id} until {self.until:%H:%M:%S}"


class Allocation(models.Model):
    """Devices a job holds on one node. Rows exist exactly while the job is in HOLDING."""

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="allocations")
    node = models.ForeignKey("clusters.Node", on_delete=models.CASCADE, related_name="allocations")
    replica_group = models.CharField(max_length=63)
    replica_index = models.PositiveIntegerField()
    accelerator_model = models.CharField(max_length=32, blank=True)
    devices = models.JSONField(default=list, help_text="Whole device indices on the node.")
    shares = models.JSONField(default=list, help_text="[[device, milli], ...] fractional shares.")
    cpu_milli = models.PositiveIntegerField(default=0)
    memory_mib = models.PositiveBigIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)
    extra = models.BooleanField(
        default=False,
        help_text="A replica an autoscaler added after admission (billed from created_at).",
    )
    surge = models.BooleanField(
        default=False,
        help_text="Room for a rolling update's extra replica, held until the rollout ends "
        "(also extra: billed from created_at). Not one of the service's replicas.",
    )

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["node"])]

    def __str__(self) -> str:
        return f"job {self.job_id} on {self.node_id}: {self.devices or self.shares}"


class OutboxAction(models.TextChoices):
    APPLY = "apply", "Create workload"
    DELETE = "delete", "Delete workload"
    # Set an inference service's replica count; the count is read when the row is relayed,
    # so one row per attempt carries the latest decision.
    SCALE = "scale", "Scale inference service"
    # Bring an inference service's Deployment to its current revision, or give back the
    # surge room once the rollout is done; read when relayed, like a scale.
    ROLLOUT = "rollout", "Roll out inference service revision"
    # Remove a notebook's home volume (on the job that made it), once no notebook mounts it.
    DELETE_HOME = "delete_home", "Delete notebook home volume"


class OutboxState(models.TextChoices):
    PENDING = "pending", "Pending"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


class OutboxEntry(models.Model):
    """A cluster action decided in a transaction; a relay applies it and only then marks it
    done. Written in the same transaction as the state change that needs it, so no action is
    lost to a crash and none happens without its row."""

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="outbox")
    action = models.CharField(max_length=16, choices=OutboxAction.choices)
    attempt = models.PositiveSmallIntegerField(help_text="The job attempt this action is for.")
    state = models.CharField(max_length=8, choices=OutboxState.choices, default="pending")
    tries = models.PositiveIntegerField(default=0)
    last_error = models.CharField(max_length=500, blank=True)
    available_at = models.DateTimeField(default=timezone.now)
    created_at = models.DateTimeField(default=timezone.now)
    done_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["state", "available_at"])]
        constraints = [
            models.UniqueConstraint(fields=["job", "action", "attempt"], name="uniq_outbox_action")
        ]

    def __str__(self) -> str:
        return f"{self.action} job {self.job_id} attempt {self.attempt} ({self.state})"


class WatchCursor(models.Model):
    """Where the cluster watch resumes (a resourceVersion); one row per watched stream."""

    name = models.CharField(max_length=32, unique=True)
    resource_version = models.CharField(max_length=200, blank=True)

    def __str__(self) -> str:
        return f"{self.name}@{self.resource_version}"


def spec_devices(spec: dict[str, Any]) -> tuple[int, int]:
    """(whole devices, milli shares) a spec asks for over all replicas."""
    devices = milli = 0
    for group in spec.get("replica_groups", []):
        devices += int(group.get("accelerators", 0)) * int(group.get("replicas", 1))
        milli += int(group.get("accelerator_milli", 0)) * int(group.get("replicas", 1))
    return devices, milli
