"""Celery tasks: thin, idempotent, ids in."""

from __future__ import annotations

from celery import shared_task

from apps.health import notify, probes, services


@shared_task(acks_late=True, ignore_result=True)
def deliver_alert(alert_id: int) -> int:
    """Send an alert to webhooks and email; receivers already served are skipped on retry."""
    return len(notify.deliver(alert_id))


@shared_task(acks_late=True, ignore_result=True)
def run_probe(run_id: int) -> int:
    """Run one slow-node probe run (a finished run is left alone)."""
    return len(probes.execute(run_id).slow_nodes)


@shared_task(acks_late=True, ignore_result=True)
def sync_cordons() -> int:
    """Re-apply cordons the cluster lost or a failed call never made."""
    return services.sync_cordons()
