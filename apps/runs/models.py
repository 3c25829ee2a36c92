"""Training runs: metric series, their downsampling rollups, hyperparameters and checkpoints.

Storage of metrics is built for two numbers: ingest of tens of thousands of points per second
and chart reads of a bounded number of points from series of millions. So:

- ``MetricKey`` names one series of a run (``loss``, ``perf/mfu``) and keeps its summary;
- ``MetricPoint`` holds one value per (key, step). Its primary key *is* (key, step), which makes
  ingest idempotent (a re-sent point is a conflict, ignored: the first value wins) and the
  table free of a surrogate id and a second index;
- ``MetricRollup`` keeps min and max (with the steps they occurred at) per aligned bucket of
  2**level steps for a few levels. Ingest updates it from the rows it actually inserted, so a
  chart over a million steps reads about a thousand rollup rows instead of a million points.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

# Bucket widths of the rollup pyramid are 2**shift steps: 8, 64, 512, 4096, 32768, 262144.
# Each level is 8x coarser, so a read touches at most ~8 rollup rows per output bucket, and
# ingest writes ~1/8 + 1/64 + ... ~ 14% extra rows.
ROLLUP_SHIFTS: tuple[int, ...] = (3, 6, 9, 12, 15, 18)


class RunState(models.TextChoices):
    RUNNING = "running", "Running"
    FINISHED = "finished", "Finished"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


# The state a job's run takes when its job ends (a run is "running" for as long as its job
# may still run, restarts included).
RUN_STATE_OF_JOB_END: dict[str, RunState] = {
    "succeeded": RunState.FINISHED,
    "failed": RunState.FAILED,
    "cancelled": RunState.CANCELLED,
}


class Run(models.Model):
    """One training run: a job's (one run per job, across its restarts) or a standalone one
    started by the SDK outside the platform."""

    tenant = models.ForeignKey("tenancy.Tenant", on_delete=models.CASCADE, related_name="runs")
    project = models.ForeignKey(
        "tenancy.Project", on_delete=models.SET_NULL, null=True, blank=True, related_name="runs"
    )
    job = models.OneToOneField(
        "jobs.Job", on_delete=models.SET_NULL, null=True, blank=True, related_name="run"
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="runs"
    )
    name = models.CharField(max_length=100)
    state = models.CharField(max_length=16, choices=RunState.choices, default=RunState.RUNNING)
    config = models.JSONField(default=dict, blank=True, help_text="Hyperparameters.")
    tags = models.JSONField(default=list, blank=True)
    simulated = models.BooleanField(
        default=False,
        help_text="Its curves are the simulated cluster's made-up ones (its jobs run no code); "
        "they are dropped when the job's own process first reports.",
    )
    checkpoint_requested_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="The latest request that the run save a checkpoint; served by any checkpoint "
        "completed at or after it.",
    )
    checkpoint_request_reason = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["tenant", "-id"])]

    def __str__(self) -> str:
        return f"run {self.pk} ({self.name})"


class MetricKey(models.Model):
    """One metric series of a run, with a summary kept up to date by ingest."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="keys")
    name = models.CharField(max_length=100)
    count = models.BigIntegerField(default=0)
    first_step = models.BigIntegerField(null=True, blank=True)
    last_step = models.BigIntegerField(null=True, blank=True)
    last_value = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["run", "name"], name="uniq_metric_key")]

    def __str__(self) -> str:
        return f"{self.run_id}:{self.name}"


class MetricPoint(models.Model):
    """The value of one series at one step. At most one per (key, step): the first one wins."""

    pk = models.CompositePrimaryKey("key", "step")
    # The primary key (key, step) already indexes key first, so no second index. No database
    # foreign-key constraint either: its per-row trigger costs ingest throughput, keys are only
    # created by ingest itself, and Django still deletes points with their key (CASCADE).
    key = models.ForeignKey(
        MetricKey, on_delete=models.CASCADE, related_name="+", db_index=False, db_constraint=False
    )
    step = models.BigIntegerField()
    value = models.FloatField()

    class Meta:
        ordering = ["key", "step"]

    def __str__(self) -> str:
        return f"{self.key_id}@{self.step}={self.value}"


class MetricRollup(models.Model):
    """Min and max of a series over the aligned step range [bucket << level, +2**level)."""

    pk = models.CompositePrimaryKey("key", "level", "bucket")
    key = models.ForeignKey(  # see MetricPoint.key
        MetricKey, on_delete=models.CASCADE, related_name="+", db_index=False, db_constraint=False
    )
    level = models.PositiveSmallIntegerField(help_text="log2 of the bucket width in steps")
    bucket = models.BigIntegerField()
    vmin = models.FloatField()
    smin = models.BigIntegerField(help_text="step of the minimum")
    vmax = models.FloatField()
    smax = models.BigIntegerField(help_text="step of the maximum")
    n = models.BigIntegerField(default=0)

    class Meta:
        ordering = ["key", "level", "bucket"]

    def __str__(self) -> str:
        return f"{self.key_id}/L{self.level}/{self.bucket}: [{self.vmin}, {self.vmax}]"


class CheckpointState(models.TextChoices):
    INCOMPLETE = "incomplete", "Incomplete"
    COMPLETE = "complete", "Complete"


class Checkpoint(models.Model):
    """A checkpoint of a run at one step. Each rank registers its shard once it is durable;
    the checkpoint is complete when all ``shards`` ranks have. Only complete ones are used."""

    tenant = models.ForeignKey(
        "tenancy.Tenant", on_delete=models.CASCADE, related_name="checkpoints"
    )
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="checkpoints")
    job = models.ForeignKey(
        "jobs.Job", on_delete=models.SET_NULL, null=True, blank=True, related_name="checkpoints"
    )
    step = models.BigIntegerField()
    path = models.CharField(max_length=1000)
    shards = models.PositiveIntegerField(default=1, help_text="world size: shards expected")
    shards_done = models.PositiveIntegerField(default=0)
    size_bytes = models.BigIntegerField(default=0)
    manifest = models.JSONField(default=dict, blank=True, help_text="per-rank shard records")
    state = models.CharField(
        max_length=16, choices=CheckpointState.choices, default=CheckpointState.INCOMPLETE
    )
    created_at = models.DateTimeField(default=timezone.now)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-step", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["run", "step"], name="uniq_checkpoint_step"),
            models.CheckConstraint(
                condition=models.Q(shards_done__lte=models.F("shards")),
                name="checkpoint_shards_done_lte_shards",
            ),
        ]
        indexes = [models.Index(fields=["job", "state", "-step"])]

    def __str__(self) -> str:
        return f"checkpoint {self.run_id}@{self.step} ({self.state})"
