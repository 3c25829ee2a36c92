"""Early stopping of a sweep's poor trials: the median stopping rule, or successive halving.

Both judge a running trial that has reported the sweep's metric at a step it was not yet
judged at, against the other trials of the sweep (running or ended) that have reached that
step, each read at its newest step at or before it; at least ``stop_min_trials`` others must
be there, so the first trials are never judged on one another alone. A trial stopped early is
cancelled with reason ``EarlyStopped`` and its slot goes to the next trial in the same cycle.

``median``: judged at every new step from ``stop_after_step``; stopped when its newest value
is worse than the median of the others'. The rule is Golovin et al., "Google Vizier: A Service
for Black-Box Optimization" (KDD 2017), section 3.2, which compares with completed trials'
running averages; here the others' values at the same step are used, which also lets trials
that are still running count.

``asha``: judged once at each rung, the steps ``stop_after_step * reduction_factor**k``, when
it first reports a step at or past one (at the highest such rung, if it skipped some); among
the n trials at the rung (itself and the others) only the best ``max(1, n // reduction_factor)``
go on, ties in the trial's favour. This is the stopping form of asynchronous successive
halving, Li et al., "A System for Massively Parallel Hyperparameter Tuning" (MLSys 2020): a
trial is not paused and promoted later but goes on at once while it ranks in the rung's top
fraction, so the cluster never holds a paused trial's slot, and the trials that reach the top
rung are the survivors of every cut. With ``brackets`` above 1 (Hyperband, Li et al., JMLR
2018, its brackets run side by side as in the MLSys paper's asynchronous form) each trial is
given a bracket when the sweep is made, as Hyperband splits its budget
(``rules.assign_brackets``: more trials in the brackets that stop early); bracket ``k``'s
rungs start at the ``k``-th rung and its trials are judged against its own alone, so a later
bracket stops fewer trials, later: a hedge against a first rung too early to tell the trials
apart.

The decisions are the pure functions of ``apps/sweeps/rules.py`` (which the benchmark calls
too); this module reads the series from the database and acts on what they say.
"""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.db.models import OuterRef, Subquery

from apps.jobs import services as jobs
from apps.jobs.models import Job, JobState, OutboxAction
from apps.jobs.notes import Note, note
from apps.runs.models import MetricKey, MetricPoint
from apps.sweeps import rules
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
    """Stop the running trials the sweep's rule says to stop; returns how many. The caller
    holds the sweep's row lock."""
    if sweep.early_stop == EarlyStop.NONE or not sweep.metric:
        return 0
    rule = rules.Rule(
        kind=sweep.early_stop, first_step=sweep.stop_after_step,
        min_trials=sweep.stop_min_trials, factor=sweep.reduction_factor,
        maximize=sweep.goal == SweepGoal.MAX,
    )  # fmt: skip
    trials = list(sweep.trials.filter(job__isnull=False).select_related("job"))
    bracket = {t.job_id: t.bracket - 1 for t in trials}
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
        key, newest, value = found
        if newest is None or value is None:
            continue
        mine_rule = rules.in_bracket(rule, bracket[job.pk])
        at = rules.step_to_judge(mine_rule, newest, trial.checked_step)
        if at is None:
            continue  # nothing new since it was last judged
        Trial.objects.filter(pk=trial.pk).update(checked_step=at)
        others = [
            key_id
            for job_id, (key_id, reached, _) in series.items()
            if job_id != job.pk
            and reached is not None
            and reached >= at
            and bracket[job_id] == bracket[job.pk]
        ]
        mine = [value] if at == newest else _values_at([key], at)
        if not mine:
            continue  # its first value came after the rung: nothing to rank there
        stop = rules.verdict(mine_rule, at, mine[0], _values_at(others, at))
        if stop is not None and sweep.brackets > 1:  # say which bracket it was judged in
            numbers = {**stop.numbers, "bracket": bracket[job.pk] + 1}
            stop = rules.Stop("earlyStoppedBracket", numbers)
        if stop is not None:
            stopped += _stop(trial, job.pk, at, _said(stop, sweep.metric))
    return stopped


def _said(stop: rules.Stop, metric: str) -> Note:
    """The note on the job's event: counts as they are, metric values to four digits."""
    args = {k: v if isinstance(v, int) else f"{v:.4g}" for k, v in stop.numbers.items()}
    return note(stop.key, metric=metric, **args)


def _stop(trial: Trial, job_id: int, step: int, said: Note) -> int:
    with transaction.atomic():
        job = Job.objects.select_for_update(of=("self",)).get(pk=job_id)
        if job.state != JobState.RUNNING:
            return 0
        jobs.transition(job, JobState.CANCELLED, reason="EarlyStopped", message=said)
        jobs.enqueue_outbox(job, OutboxAction.DELETE)
        Trial.objects.filter(pk=trial.pk).update(stopped_step=step)
    return 1
