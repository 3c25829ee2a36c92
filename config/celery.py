"""The Celery application. Broker: Redis in production, ``memory://`` in the embedded default."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.dev")

app = Celery("zhisuan")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# The control loop in production: beat ticks these; the embedded default ticks them in-process.
app.conf.beat_schedule = {
    "scheduling-cycle": {"task": "apps.scheduling.tasks.scheduling_cycle", "schedule": 2.0},
    "relay-outbox": {"task": "apps.jobs.tasks.relay_outbox", "schedule": 5.0},
    "reconcile-jobs": {"task": "apps.jobs.tasks.reconcile_jobs", "schedule": 5.0},
    "collect-logs": {"task": "apps.jobs.tasks.collect_logs", "schedule": 5.0},
    "watch-workloads": {"task": "apps.jobs.tasks.watch_workloads", "schedule": 30.0},
    "sync-queues": {"task": "apps.quotas.tasks.sync_cluster_queues", "schedule": 300.0},
    "sync-cordons": {"task": "apps.health.tasks.sync_cordons", "schedule": 30.0},
    "governance-sweep": {"task": "apps.governance.tasks.governance_sweep", "schedule": 60.0},
}
