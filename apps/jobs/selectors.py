"""Reads over jobs."""

from __future__ import annotations

from django.db.models import Count, Q, QuerySet

from apps.jobs.models import Job, JobState
from apps.tenancy.models import Tenant


def job_counts(tenants: QuerySet[Tenant]) -> dict[str, int]:
    """Running and waiting jobs of the given tenants."""
    counts = Job.objects.filter(tenant__in=tenants).aggregate(
        running=Count("id", filter=Q(state=JobState.RUNNING)),
        pending=Count(
            "id", filter=Q(state__in=[JobState.SUBMITTED, JobState.QUEUED, JobState.ADMITTED])
        ),
    )
    return {"running": int(counts["running"]), "pending": int(counts["pending"])}
