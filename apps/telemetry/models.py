"""Telemetry history (downsampled rollups) and per-job aggregates.

Raw per-GPU samples are never stored here: the latest values live in memory/Redis, per-GPU
history in Prometheus on a real cluster. PostgreSQL keeps rollups per node, job, pool, tenant
and the cluster at 10 s (1 hour), 1 min (1 day) and 10 min (30 days), so it stays small.
"""

from __future__ import annotations

from django.db import models


class SeriesKind(models.TextChoices):
    CLUSTER = "cluster", "Cluster"
    POOL = "pool", "Pool"
    TENANT = "tenant", "Tenant"
    NODE = "node", "Node"
    JOB = "job", "Job"


class SeriesPoint(models.Model):
    """One bucket of one series: means over the bucket of the per-tick aggregates."""

    kind = models.CharField(max_length=8, choices=SeriesKind.choices)
    key = models.CharField(
        max_length=128, help_text="Pool/tenant/job id or node name; '' for cluster."
    )
    resolution_s = models.PositiveIntegerField()
    ts = models.DateTimeField(help_text="Start of the bucket.")
    gpus = models.PositiveIntegerField(default=0)
    util = models.FloatField(default=0.0, help_text="Mean GPU utilization, %.")
    fb_used_mib = models.FloatField(default=0.0)
    power_w = models.FloatField(default=0.0)
    temp_max_c = models.FloatField(default=0.0)
    extra = models.JSONField(
        default=dict,
        blank=True,
        help_text="Mean busy (allocated) GPUs; for nodes also CPU, memory, network, IB, disk.",
    )

    class Meta:
        ordering = ["ts"]
        constraints = [
            models.UniqueConstraint(
                fields=["kind", "key", "resolution_s", "ts"], name="uniq_series_point"
            ),
        ]
        indexes = [models.Index(fields=["resolution_s", "ts"])]

    def __str__(self) -> str:
        return f"{self.kind}:{self.key}@{self.resolution_s}s {self.ts:%Y-%m-%dT%H:%M:%S}"


class JobTelemetry(models.Model):
    """Running totals for one job, updated by the collector every flush."""

    job = models.OneToOneField("jobs.Job", on_delete=models.CASCADE, related_name="telemetry")
    gpu_seconds = models.FloatField(default=0.0)
    util_gpu_seconds = models.FloatField(default=0.0, help_text="Sum of util% x GPU-seconds.")
    energy_joules = models.FloatField(default=0.0)
    fb_used_peak_mib = models.FloatField(default=0.0)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"job {self.job_id}: {self.gpu_hours:.3f} GPU-hours"

    @property
    def gpu_hours(self) -> float:
        return self.gpu_seconds / 3600.0

    @property
    def mean_util(self) -> float:
        return self.util_gpu_seconds / self.gpu_seconds if self.gpu_seconds else 0.0

    @property
    def mean_power_w(self) -> float:
        return self.energy_joules / self.gpu_seconds if self.gpu_seconds else 0.0
