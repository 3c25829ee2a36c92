"""Tenant-scoped reads of inference services, their traffic and their decisions."""

from __future__ import annotations

from django.db.models import QuerySet

from apps.inference.models import InferenceService, ScalingDecision, TrafficSample
from apps.jobs.models import JobState
from apps.tenancy.models import Tenant


def services_of(tenant: Tenant) -> QuerySet[InferenceService]:
    return InferenceService.objects.filter(tenant=tenant).select_related("job")


def running_services() -> QuerySet[InferenceService]:
    """All tenants' services whose job runs: the embedded autoscaler's work list."""
    return InferenceService.objects.filter(job__state=JobState.RUNNING).select_related(
        "job__pool__cluster", "job__tenant"
    )


def recent_samples(service: InferenceService, limit: int = 360) -> list[TrafficSample]:
    return list(service.samples.all()[:limit])


def recent_decisions(service: InferenceService, limit: int = 200) -> list[ScalingDecision]:
    return list(service.decisions.all()[:limit])
