"""Early stopping of a sweep's poor trials: the median stopping rule.

A running trial that has reported the sweep's metric at step ``s`` (at least the sweep's
``stop_after_step``) is compared with every other trial of the sweep that has reached step
``s`` (running or ended): if its newest value is worse than the median of theirs, each
taken at the newest step at or before ``s``, it is stopped and its slot goes to the next
trial. At least ``stop_min_trials`` others must have reached ``s``, so the first trials are
never judged on one another alone. The rule is Golovin et al., "Google Vizier: A Service for
Black-Box Optimization" (KDD 2017), section 3.2, which compares with completed trials' running
averages; here the others' values at the same step are used, which also lets trials that are
still running count, and a trial is judged again only when it reports a later step.
"""

from __future__ import annotations

import statistics
from datetime import datetime

from django.db import transaction
from django.db.models import OuterRef, Subquery

from apps.jobs import services as jobs
from apps.jobs.models import Job, JobState, OutboxAction
from apps.jobs.notes import note
from apps.runs.models import MetricKey, MetricPoint
from apps.sweeps.models import EarlyStop, Sweep, SweepGoal, Trial


def _values_at(key_ids: list[int], step: int) -> list[float]:
    """Each series' value at its newest step at or before ``step`` (one query)."""
    newest = MetricPoint.objects.filter(key=OuterRef("pk"), step__lte=step).order_by("-step")
    rows = (
        MetricKey.objects.filter(pk__in=key_ids)
        .annotate(at=Subquery(newest.values("value")[:1]))
        .values_list("at", flat=True)
    )
    return [v for v in rows if v is not None]


def check(sweep: Sweep, now: datetime) -> int:
    """Stop the running trials the rule says to stop; returns how many. The caller holds the
    sweep's row lock."""
    if sweep.early_stop != EarlyStop.MEDIAN or not sweep.metric:
        return 0
    trials = list(sweep.trials.filter(job__isnull=False).select_related("job"))
    series = {
        job_id: (key_id, step, value)
        for job_id, key_id, step, value in MetricKey.objects.filter(
            run__job_id__in=[t.job_id for t in trials], name=sweep.metric
        ).values_list("run__job_id", "pk", "last_step", "last_value")
    }
    stopped = 0
    for trial in trials:
        job = trial.job
        assert job is not None  # trials filtered on it
        found = series.get(job.pk)
        if job.state != JobState.RUNNING or found is None:
            continue
        _, step, value = found
        if step is None or value is None or step < sweep.stop_after_step:
            continue
        if trial.checked_step is not None and step <= trial.checked_step:
            continue  # nothing new since it was last judged
        Trial.objects.filter(pk=trial.pk).update(checked_step=step)
        others = [
            key_id
            for job_id, (key_id, reached, _) in series.items()
            if job_id != job.pk and reached is not None and reached >= step
        ]
        if len(others) < sweep.stop_min_trials:
            continue
        median = statistics.median(_values_at(others, step))
        worse = value < median if sweep.goal == SweepGoal.MAX else value > median
        if worse:
            stopped += _stop(trial, job.pk, sweep.metric, step, value, median)
    return stopped


def _stop(trial: Trial, job_id: int, metric: str, step: int, value: float, median: float) -> int:
    with transaction.atomic():
        job = Job.objects.select_for_update(of=("self",)).get(pk=job_id)
        if job.state != JobState.RUNNING:
            return 0
        said = note(
            "earlyStopped", step=step, metric=metric, value=f"{value:.4g}", median=f"{median:.4g}"
        )
        jobs.transition(job, JobState.CANCELLED, reason="EarlyStopped", message=said)
        jobs.enqueue_outbox(job, OutboxAction.DELETE)
        Trial.objects.filter(pk=trial.pk).update(stopped_step=step)
    return 1
