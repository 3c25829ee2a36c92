"""Training curves for the simulated cluster: running simulated training jobs report a
decaying loss, a learning-rate schedule, throughput and MFU, and a checkpoint every
``CHECKPOINT_EVERY`` steps (and at once when asked for one), through the same services the
SDK's API calls reach. Clearly generated data (the simulated cluster's jobs run no code); a
real cluster is left alone."""

from __future__ import annotations

import math
import random
import time
from datetime import datetime

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apps.jobs.models import Job, JobKind, JobState
from apps.runs import services
from apps.runs.models import MetricKey
from apps.runs.selectors import checkpoint_request

STEPS_PER_S = 2.0
MAX_STEPS_PER_RUN = 50  # per call: a job that ran unobserved catches up gradually
CHECKPOINT_EVERY = 500
MIN_INTERVAL_S = 5.0
# A 7B dense model, 4,096-token sequences, on A800-class devices (see the SDK's efficiency).
_FLOPS_PER_TOKEN = 6 * 7e9 + 12 * 32 * 4096 * 4096
_PEAK = 312e12

_last_run = 0.0


def _point_values(job: Job, step: int) -> dict[str, float]:
    rng = random.Random(job.pk * 1_000_003 + step)
    seed = random.Random(job.pk)
    floor, start, tau = 1.6 + seed.random(), 9.0 + seed.random() * 2, 300 + seed.random() * 500
    loss = floor + (start - floor) * math.exp(-step / tau) + rng.gauss(0, 0.03)
    warmup, peak_lr = 200, 3e-4
    lr = peak_lr * min(1.0, (step + 1) / warmup) * (0.55 + 0.45 * math.cos(step / 20_000))
    devices = max(1, job.requested_devices)
    tokens = devices * 3000 * (1 + rng.gauss(0, 0.02))
    return {
        "loss": max(0.01, loss),
        "lr": lr,
        "grad_norm": 0.5 + 2.0 * math.exp(-step / tau) + abs(rng.gauss(0, 0.1)),
        "perf/tokens_per_s": tokens,
        "perf/mfu": _FLOPS_PER_TOKEN * tokens / (devices * _PEAK),
    }


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
            run = services.ensure_run_for_job(job)
            last = (
                MetricKey.objects.filter(run=run, name="loss")
                .values_list("last_step", flat=True)
                .first()
            )
            first = 0 if last is None else last + 1
            steps = range(first, min(target, first + MAX_STEPS_PER_RUN - 1) + 1)
            if not steps:
                continue
            points = [(k, s, v) for s in steps for k, v in _point_values(job, s).items()]
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
