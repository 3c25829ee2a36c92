"""The control loop of the embedded default: scheduler, relay and reconciler on one thread.

In production the same functions run as Celery beat tasks (see config/celery.py); here a
daemon thread ticks them so `make run` needs nothing else.
"""

from __future__ import annotations

import logging
import threading
import time

from django.db import close_old_connections

log = logging.getLogger("zhisuan.ticker")


def tick() -> None:
    from apps.governance.services import sweep_if_due as governance_sweep
    from apps.health.services import sync_cordons
    from apps.inference.services import autoscale_tick
    from apps.jobs.logs import collect_if_due as collect_logs
    from apps.jobs.relay import reconcile, relay
    from apps.runs.simulate import simulate_training_metrics
    from apps.scheduling.forecast import refresh_if_due as forecast_starts
    from apps.scheduling.loop import run_cycle
    from apps.telemetry.collector import start as start_telemetry

    start_telemetry()  # its own thread, started once: collect + publish about once a second
    run_cycle()
    relay()
    reconcile()
    relay()
    sync_cordons()  # re-apply cordons the cluster lost (node health)
    autoscale_tick()  # simulated inference replicas + autoscaler (one query when none run)
    governance_sweep()  # idle GPUs, queue time limits (C9); every 30 s
    simulate_training_metrics()  # loss curves of simulated training jobs (every 5 s)
    collect_logs()  # job output into the database (every 3 s)
    forecast_starts()  # expected start times of queued jobs (every 60 s)


def start(interval_s: float = 1.0) -> threading.Thread:
    def run() -> None:
        while True:
            started = time.monotonic()
            try:
                tick()
            except Exception:
                log.exception("control loop tick failed")
            finally:
                close_old_connections()
            time.sleep(max(0.05, interval_s - (time.monotonic() - started)))

    thread = threading.Thread(target=run, name="embedded-control-loop", daemon=True)
    thread.start()
    return thread
