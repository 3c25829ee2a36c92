"""Persistent state of the scheduler loop (the apply lock, delay-scheduling holds) and what-if
replays."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from apps.core.choices import RunState


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


WhatIfState = RunState


class WhatIfRun(models.Model):
    """A replay of the cluster's recent history under scheduling policies
    (``apps.scheduling.whatif``), started over the API and run by a worker."""

    hours = models.FloatField(help_text="Length of the replayed window, ending when it ran.")
    policies = models.JSONField(default=list)
    seed = models.PositiveIntegerField(default=0)
    node_changes = models.JSONField(
        default=list,
        blank=True,
        help_text='Pools grown or shrunk for the replay: [{"pool": pool id, "nodes": +-n}].',
    )
    quota_changes = models.JSONField(
        default=list,
        blank=True,
        help_text='Quotas set for the replay: [{"tenant": slug, "pool": id, "accelerator_model": '
        'str, "guarantee": n, "borrow_limit": n}].',
    )
    load_factor = models.FloatField(
        default=1.0, help_text="Times the window's arriving work to replay (1: as it was)."
    )
    maintenance = models.JSONField(
        default=list,
        blank=True,
        help_text='Maintenance windows for the replay: [{"pool": id, "nodes": n, "start_h": '
        'hours into the window, "hours": n, "drain": bool}].',
    )
    replay_faults = models.BooleanField(
        default=True,
        help_text="Replay the window's node outages (cordons and drains of its incidents); "
        "off: every node healthy throughout.",
    )
    state = models.CharField(max_length=8, choices=WhatIfState.choices, default="pending")
    progress = models.FloatField(default=0.0, help_text="Share of the replay done, 0..1.")
    message = models.CharField(max_length=500, blank=True)
    window_start = models.DateTimeField(null=True, blank=True)
    window_end = models.DateTimeField(null=True, blank=True)
    result = models.JSONField(null=True, blank=True, default=None)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"what-if run {self.pk} ({self.state})"
