"""Reads of inference services: a tenant's, and the running ones the autoscaler steps."""

from __future__ import annotations

from django.db.models import QuerySet

from apps.inference.models import InferenceService
from apps.jobs.models import JobState
from apps.tenancy.models import Tenant


def services_of(tenant: Tenant) -> QuerySet[InferenceService]:
    return InferenceService.objects.filter(tenant=tenant).select_related("job")


def running_services() -> QuerySet[InferenceService]:
    """All tenants' services whose job runs: the embedded autoscaler's work list."""
    return InferenceService.objects.filter(job__state=JobState.RUNNING).select_related(
        "job__pool__cluster", "job__tenant"
    )
