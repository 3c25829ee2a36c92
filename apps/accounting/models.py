"""Usage segments: who held which devices, from when to when (reserved GPU-hours)."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class UsageSegment(models.Model):
    """One uninterrupted hold of devices by one job attempt.

    Written when the job leaves the holding states (finished, failed, cancelled, preempted,
    restarting), with the devices its allocation held; a job holding now is accounted from its
    admission time up to the report's end. Denormalised (tenant, project, owner, pool, model) so
    reports stay one aggregate query whatever happens to the job later."""

    job = models.ForeignKey("jobs.Job", on_delete=models.CASCADE, related_name="usage")
    tenant = models.ForeignKey("tenancy.Tenant", on_delete=models.CASCADE, related_name="+")
    # RESTRICT, not SET_NULL: deleting a project must not move its cost history to "(none)".
    # (A tenant's deletion still takes both: the segments go by the tenant's cascade.)
    project = models.ForeignKey(
        "tenancy.Project", on_delete=models.RESTRICT, null=True, blank=True, related_name="+"
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    pool = models.ForeignKey("clusters.ResourcePool", on_delete=models.CASCADE, related_name="+")
    accelerator_model = models.CharField(max_length=32, blank=True)
    device_milli = models.PositiveIntegerField(help_text="Devices held, in thousandths.")
    started_at = models.DateTimeField()
    ended_at = models.DateTimeField()
    reason = models.CharField(max_length=32, help_text="Why the hold ended (the new state).")

    class Meta:
        ordering = ["id"]
        indexes = [
            models.Index(fields=["tenant", "started_at"]),
            models.Index(fields=["started_at", "ended_at"]),
        ]

    def __str__(self) -> str:
        return (
            f"job {self.job_id}: {self.device_milli / 1000:g} x {self.started_at}..{self.ended_at}"
        )
