"""The scheduling tick. One active at a time in production (Celery beat); admission is also
serialised in the database, so an accidental second loop cannot over-admit."""

from __future__ import annotations

from celery import shared_task

from apps.scheduling.loop import run_cycle


@shared_task(ignore_result=True)
def scheduling_cycle() -> int:
    return run_cycle().admitted


@shared_task(ignore_result=True)
def forecast_starts() -> int:
    """Expected start times of queued jobs (apps/scheduling/forecast.py)."""
    from apps.scheduling import forecast

    return forecast.refresh().forecast


@shared_task(ignore_result=True)
def whatif_replay(run_id: int) -> str:
    """Run one what-if replay (a finished run is left alone)."""
    from apps.scheduling import whatif

    return whatif.execute(run_id).state
