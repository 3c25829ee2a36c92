"""Persistent state of the scheduler loop: the apply lock and delay-scheduling holds."""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class SchedulerLock(models.Model):
    """A single row locked (SELECT ... FOR UPDATE) by every transaction that admits work.

    Admission re-checks devices and quotas inside this lock, so two scheduler loops, or a loop
    racing a quota edit, can never over-admit. The core's decisions are computed outside it;
    only the cheap re-check and the writes are serialised."""

    name = models.CharField(max_length=32, unique=True, default="admission")
    last_cycle_at = models.DateTimeField(null=True, blank=True)
    last_cycle_ms = models.FloatField(null=True, blank=True)
    last_admitted = models.PositiveIntegerField(default=0)

    def __str__(self) -> str:
        return self.name


class Hold(models.Model):
    """Nodes held for a starving large job (delay scheduling), visible in the queue view."""

    job = models.OneToOneField("jobs.Job", on_delete=models.CASCADE, related_name="hold")
    priority = models.PositiveSmallIntegerField()
    node_ids = models.JSONField(default=list)
    expires_at = models.DateTimeField()
    reason = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"hold for job {self.job_id} until {self.expires_at:%H:%M:%S}"
