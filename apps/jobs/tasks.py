"""Celery tasks: thin, idempotent, ids in. Each calls one function and returns a count."""

from __future__ import annotations

from celery import shared_task

from apps.jobs import logs, relay, watcher


@shared_task(acks_late=True, ignore_result=True)
def relay_outbox() -> int:
    """Apply pending cluster actions. Safe to run many times and in parallel (SKIP LOCKED)."""
    return relay.relay()


@shared_task(acks_late=True, ignore_result=True)
def reconcile_jobs() -> int:
    """Map what the cluster reports onto job states (level-triggered)."""
    return relay.reconcile()


@shared_task(acks_late=True, ignore_result=True)
def watch_workloads() -> int:
    """Follow the cluster's watch for ~25 s (beat starts one every 30 s)."""
    return watcher.watch_once(timeout_s=25.0)


@shared_task(acks_late=True, ignore_result=True)
def collect_logs() -> int:
    """Copy new output of running (and just finished) jobs into the database."""
    return logs.collect()
