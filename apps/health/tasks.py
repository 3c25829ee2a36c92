"""Celery tasks: thin, idempotent, ids in."""

from __future__ import annotations

import logging

from celery import Task, shared_task

from apps.health import notify, probes, services

log = logging.getLogger("zhisuan.health.notify")


@shared_task(bind=True, acks_late=True, ignore_result=True, max_retries=notify.DELIVERY_RETRIES)
def deliver_alert(self: Task, alert_id: int) -> int:  # type: ignore[type-arg]
    """Send an alert to webhooks and email. While a receiver is unserved, try again after
    30 s, 60 s, 120 s, 240 s (a Celery retry: the embedded worker holds the countdown like a
    separate one); receivers already served are skipped. Returns the receivers served."""
    outcome = notify.deliver(alert_id)
    if all(notify.delivered(o) for o in outcome.values()):
        return len(outcome)
    if self.request.retries >= notify.DELIVERY_RETRIES:
        log.error("alert %s: delivery failed after %d rounds", alert_id, self.request.retries + 1)
        return sum(notify.delivered(o) for o in outcome.values())
    raise self.retry(countdown=notify.retry_delay(self.request.retries))


@shared_task(acks_late=True, ignore_result=True)
def run_probe(run_id: int) -> int:
    """Run one slow-node probe run (a finished run is left alone)."""
    return len(probes.execute(run_id).slow_nodes)


@shared_task(acks_late=True, ignore_result=True)
def sync_cordons() -> int:
    """Re-apply cordons the cluster lost or a failed call never made."""
    return services.sync_cordons()
