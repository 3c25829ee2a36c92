"""The Celery application. Broker: Redis in production, ``memory://`` in the embedded default."""

import os
from typing import Any

from celery import Celery, bootsteps
from celery.beat import PersistentScheduler

from apps.core import alive

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.dev")

app = Celery("zhisuan")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

ALIVE_EVERY_S = 10.0


class AliveStep(bootsteps.StartStopStep):
    """The worker's liveness file (apps/core/alive.py), touched from the worker's own timer:
    when the worker's main loop hangs, the timer stops and the file goes stale."""

    requires = ("celery.worker.components:Timer",)

    def __init__(self, worker: Any, **kwargs: Any) -> None:
        self.tref: Any = None

    def start(self, worker: Any) -> None:
        alive.touch("worker")
        self.tref = worker.timer.call_repeatedly(ALIVE_EVERY_S, alive.touch, ("worker",))

    def stop(self, worker: Any) -> None:
        if self.tref is not None:
            self.tref.cancel()


class AliveScheduler(PersistentScheduler):
    """Celery's default scheduler that also touches beat's liveness file on every tick."""

    def tick(self, *args: Any, **kwargs: Any) -> float:
        alive.touch("beat")
        return float(super().tick(*args, **kwargs))


app.steps["worker"].add(AliveStep)
app.conf.beat_scheduler = "config.celery:AliveScheduler"

# The control loop in production: beat ticks these; the embedded default ticks them in-process.
app.conf.beat_schedule = {
    "scheduling-cycle": {"task": "apps.scheduling.tasks.scheduling_cycle", "schedule": 2.0},
    "forecast-starts": {"task": "apps.scheduling.tasks.forecast_starts", "schedule": 60.0},
    "relay-outbox": {"task": "apps.jobs.tasks.relay_outbox", "schedule": 5.0},
    "reconcile-jobs": {"task": "apps.jobs.tasks.reconcile_jobs", "schedule": 5.0},
    "collect-logs": {"task": "apps.jobs.tasks.collect_logs", "schedule": 5.0},
    "watch-workloads": {"task": "apps.jobs.tasks.watch_workloads", "schedule": 30.0},
    "sync-queues": {"task": "apps.quotas.tasks.sync_cluster_queues", "schedule": 300.0},
    "sync-cordons": {"task": "apps.health.tasks.sync_cordons", "schedule": 30.0},
    "governance-sweep": {"task": "apps.governance.tasks.governance_sweep", "schedule": 60.0},
}
