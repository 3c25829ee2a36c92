"""What a sweep's trials found: each trial's job and its value of the sweep's metric, the
newest (``rank_by: last``) or the best over its steps (``rank_by: best``)."""

from __future__ import annotations

import csv
import io
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from django.db.models import Count, Q

from apps.accounting.csvsafe import safe_cell
from apps.jobs.models import JobState
from apps.runs.models import ROLLUP_SHIFTS, MetricKey, MetricRollup, Run
from apps.sweeps.models import RankBy, Sweep, SweepGoal, Trial


@dataclass(frozen=True)
class Outcome:
    trial: Trial
    run: int | None
    value: float | None  # the value that ranks it (by the sweep's rank_by)
    step: int | None  # the step of that value
    rank: int | None
    last_value: float | None = None  # its newest value, whatever rank_by says
    last_step: int | None = None
    bracket: int | None = None  # its halving bracket, 1, 2, ...; None with one bracket


def best_values(key_ids: list[int], *, maximize: bool) -> dict[int, tuple[float, int]]:
    """``{key: (best value, its step)}`` of each series, read from the coarsest rollup level:
    every point is in one of its buckets (a few rows per series, however long). Ties go to
    the earliest step."""
    rows = MetricRollup.objects.filter(key_id__in=key_ids, level=ROLLUP_SHIFTS[-1]).values_list(
        "key_id", "vmin", "smin", "vmax", "smax"
    )
    found: dict[int, tuple[float, int]] = {}
    for key, vmin, smin, vmax, smax in rows:
        value, step = (vmax, smax) if maximize else (vmin, smin)
        held = found.get(key)
        better = held is None or (value > held[0] if maximize else value < held[0])
        if better or (held is not None and value == held[0] and step < held[1]):
            found[key] = (value, step)
    return found


def outcomes(sweep: Sweep) -> list[Outcome]:
    """Every trial in order, with its run and its value of the metric (none before the job
    reports it); ``rank`` 1 is the best value for the sweep's goal."""
    return outcomes_many([sweep])[sweep.pk]


def outcomes_many(sweeps: Sequence[Sweep]) -> dict[int, list[Outcome]]:
    """``outcomes`` of several sweeps (a page of the sweep list) in a fixed number of queries,
    however many sweeps and trials."""
    by_sweep: dict[int, list[Trial]] = {s.pk: [] for s in sweeps}
    for trial in (
        Trial.objects.filter(sweep__in=list(by_sweep))
        .select_related("job")
        .order_by("sweep_id", "index")
    ):
        by_sweep[trial.sweep_id].append(trial)
    sweep_of_job = {t.job_id: t.sweep_id for ts in by_sweep.values() for t in ts if t.job_id}
    runs = dict(Run.objects.filter(job_id__in=list(sweep_of_job)).values_list("job_id", "pk"))
    metric = {s.pk: s.metric for s in sweeps if s.metric}
    rows = [
        row
        for row in MetricKey.objects.filter(
            run__job_id__in=list(sweep_of_job), name__in=set(metric.values())
        ).values_list("run__job_id", "name", "pk", "last_value", "last_step")
        if metric.get(sweep_of_job[row[0]]) == row[1]  # the metric of the trial's own sweep
    ] if metric and sweep_of_job else []  # fmt: skip
    last = {job_id: (value, step) for job_id, _name, _key, value, step in rows}
    ranked = dict(last)
    by_rank = {s.pk: s for s in sweeps if s.rank_by == RankBy.BEST}
    for maximize in (False, True):
        keys = {
            key: job_id
            for job_id, _name, key, _v, _s in rows
            if (s := by_rank.get(sweep_of_job[job_id])) is not None
            and (s.goal == SweepGoal.MAX) == maximize
        }
        if keys:
            best = best_values(list(keys), maximize=maximize)
            ranked.update({job_id: best.get(key, (None, None)) for key, job_id in keys.items()})
    return {
        s.pk: _ranked(s, by_sweep[s.pk], runs, last, ranked) for s in sweeps
    }  # fmt: skip


Pair = tuple[float | None, int | None]


def _ranked(sweep: Sweep, trials: list[Trial], runs: dict[int, int], last: dict[int, Pair],
            ranked: dict[int, Pair]) -> list[Outcome]:  # fmt: skip
    maximize = sweep.goal == SweepGoal.MAX
    none: Pair = (None, None)
    scored = sorted(
        (value, t.index)
        for t in trials
        if t.job_id is not None and (value := ranked.get(t.job_id, none)[0]) is not None
    )
    if maximize:
        scored.sort(key=lambda vi: (-vi[0], vi[1]))
    rank = {index: n for n, (_, index) in enumerate(scored, start=1)}
    out = []
    for t in trials:
        value, step = ranked.get(t.job_id, none) if t.job_id is not None else none
        newest, newest_step = last.get(t.job_id, none) if t.job_id is not None else none
        run = runs.get(t.job_id) if t.job_id is not None else None
        bracket = t.bracket if sweep.brackets > 1 else None
        out.append(Outcome(t, run, value, step, rank.get(t.index), newest, newest_step, bracket))
    return out


def best(sweep: Sweep, found: list[Outcome] | None = None) -> Outcome | None:
    """The trial ranked first (of ``found``, outcomes already read, when given)."""
    return next((r for r in (found if found is not None else outcomes(sweep)) if r.rank == 1), None)


COUNT_NAMES = (
    "waiting", "active", "succeeded", "failed", "cancelled", "stopped_early", "total",
)  # fmt: skip


def trial_counts(sweeps: Sequence[Sweep], job_ended: Collection[str]) -> dict[int, dict[str, int]]:
    """How many trials of each sweep wait, run, succeeded, failed, were cancelled or stopped
    early, and in all: one query for all of them."""
    ended = Q(job__state__in=list(job_ended))
    early = Q(stopped_step__isnull=False)
    rows = (
        Trial.objects.filter(sweep__in=[s.pk for s in sweeps])
        .values("sweep_id")
        .annotate(
            waiting=Count("pk", filter=Q(job__isnull=True)),
            active=Count("pk", filter=Q(job__isnull=False) & ~ended),
            succeeded=Count("pk", filter=Q(job__state=JobState.SUCCEEDED)),
            failed=Count("pk", filter=Q(job__state=JobState.FAILED)),
            cancelled=Count("pk", filter=Q(job__state=JobState.CANCELLED) & ~early),
            stopped_early=Count("pk", filter=early),
            total=Count("pk"),
        )
    )
    empty = dict.fromkeys(COUNT_NAMES, 0)
    found = {row.pop("sweep_id"): row for row in rows}
    return {s.pk: {**empty, **found.get(s.pk, {})} for s in sweeps}


def _cell(value: object) -> object:
    """A parameter's value as a CSV cell: text a spreadsheet will not run, numbers as they are."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return safe_cell(value) if isinstance(value, str) else value


def results_csv(sweep: Sweep) -> str:
    """Every trial as a CSV row, in trial order: its values, job, state, rank and the metric
    (the ranking value and its step, the newest and its step), for a notebook or a sheet."""
    rows = outcomes(sweep)
    names = list(sweep.parameters)
    names += sorted({n for r in rows for n in r.trial.params} - set(names))
    metric = sweep.metric or "value"
    out = io.StringIO()
    writer = csv.writer(out)
    bracketed = sweep.brackets > 1
    writer.writerow([
        "trial", *(safe_cell(n) for n in names), "job", "job_name", "state", "stopped_step",
        *(["bracket"] if bracketed else []),
        "rank", safe_cell(metric), "step", f"last_{metric}", "last_step", "run",
    ])  # fmt: skip
    for r in rows:
        job = r.trial.job
        writer.writerow([
            r.trial.index, *(_cell(r.trial.params.get(n)) for n in names),
            job.pk if job else "", safe_cell(job.name) if job else "",
            job.state if job else "waiting", _cell(r.trial.stopped_step),
            *([r.bracket] if bracketed else []), _cell(r.rank),
            _cell(r.value), _cell(r.step), _cell(r.last_value), _cell(r.last_step), _cell(r.run),
        ])  # fmt: skip
    return out.getvalue()
