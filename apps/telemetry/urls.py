"""Telemetry REST routes, included under /api/v1/telemetry/ by config/urls.py."""

from django.urls import path

from apps.telemetry.api.views import GpuHistoryView, HistoryView, JobUsageView, SnapshotView

urlpatterns = [
    path("snapshot/", SnapshotView.as_view(), name="telemetry-snapshot"),
    path("history/", HistoryView.as_view(), name="telemetry-history"),
    path("gpu-history/", GpuHistoryView.as_view(), name="telemetry-gpu-history"),
    path("jobs/<int:job_id>/usage/", JobUsageView.as_view(), name="telemetry-job-usage"),
]
