"""Training curves for the simulated cluster: running simulated training jobs report a
decaying loss, a learning-rate schedule, throughput and MFU, and a checkpoint every
``CHECKPOINT_EVERY`` steps (and at once when asked for one), through the same services the
SDK's API calls reach. Clearly generated data (the simulated cluster's jobs run no code): such
runs are marked ``simulated``, and the simulator steps aside for good when the job's own
process reports (the SDK run from outside, say), its made-up curves dropped. A real cluster is
left alone."""

from __future__ import annotations

import time
from datetime import datetime

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apps.clusters.backends.simcurves import STEPS_PER_S, learning_rate, training_point
from apps.jobs.models import Job, JobKind, JobState
from apps.runs import services
from apps.runs.models import MetricKey, Run
from apps.runs.selectors import checkpoint_request

MAX_STEPS_PER_RUN = 50  # per call: a job that ran unobserved catches up gradually
CHECKPOINT_EVERY = 500
MIN_INTERVAL_S = 5.0

_last_run = 0.0


def simulate_training_metrics(now: datetime | None = None, *, force: bool = False) -> int:
    """Report new steps of every running simulated training job; returns points stored.
    Runs at most every ``MIN_INTERVAL_S`` seconds unless ``force``."""
    global _last_run
    if settings.CLUSTER_BACKEND != "simulated":
        return 0
    if not force and time.monotonic() - _last_run < MIN_INTERVAL_S:
        return 0
    _last_run = time.monotonic()
    now = now or timezone.now()
    stored = 0
    jobs = Job.objects.filter(
        kind=JobKind.TRAINING, state=JobState.RUNNING, started_at__isnull=False
    ).select_related("tenant")
    for job in jobs:
        assert job.started_at is not None
        target = int((now - job.started_at).total_seconds() * STEPS_PER_S)
        with transaction.atomic():
            run = Run.objects.select_for_update().get(pk=services.ensure_run_for_job(job).pk)
            if not run.simulated:
                if MetricKey.objects.filter(run=run).exists():
                    continue  # the job's own process reports (the SDK, run from outside)
                Run.objects.filter(pk=run.pk).update(simulated=True)
            last = (
                MetricKey.objects.filter(run=run, name="loss")
                .values_list("last_step", flat=True)
                .first()
            )
            first = 0 if last is None else last + 1
            steps = range(first, min(target, first + MAX_STEPS_PER_RUN - 1) + 1)
            if not steps:
                continue
            lr = learning_rate(run.config)  # a sweep's trial: its curve follows its lr
            points = [
                (k, s, v)
                for s in steps
                for k, v in training_point(job.pk, job.requested_devices, s, lr).items()
            ]
            stored += services.ingest_metrics(run=run, points=points).stored
            asked = checkpoint_request(run)
            for s in steps:
                # Every CHECKPOINT_EVERY steps, and at once when the platform asked for one
                # (what a job using zhisuan.checkpoint_requested() does).
                due = s % CHECKPOINT_EVERY == 0 or (
                    s == steps[-1] and asked is not None and asked.pending
                )
                if s and due:
                    services.register_checkpoint(
                        run=run, step=s, path=f"sim://{job.tenant.slug}/{job.object_name}/step_{s}"
                    )
    return stored
