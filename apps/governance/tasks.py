"""Celery tasks: thin, idempotent, ids in."""

from __future__ import annotations

from celery import shared_task

from apps.governance import notify, services


@shared_task(acks_late=True, ignore_result=True)
def governance_sweep() -> int:
    """One pass of idle detection, warnings, stops and queue time limits."""
    return services.sweep().total


@shared_task(acks_late=True, ignore_result=True)
def deliver_notification(notice_id: int) -> int:
    """Email and webhook copies of one in-app notice; channels already served are skipped."""
    return len(notify.deliver(notice_id))
