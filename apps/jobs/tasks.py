"""Celery tasks: thin, idempotent, ids in. Each calls one function and returns a count."""

from __future__ import annotations

from celery import shared_task

from apps.jobs import relay


@shared_task(acks_late=True, ignore_result=True)
def relay_outbox() -> int:
    """Apply pending cluster actions. Safe to run many times and in parallel (SKIP LOCKED)."""
    return relay.relay()


@shared_task(acks_late=True, ignore_result=True)
def reconcile_jobs() -> int:
    """Map what the cluster reports onto job states (level-triggered)."""
    return relay.reconcile()
