"""What a sweep's trials found: each trial's job and its value of the sweep's metric, the
newest (``rank_by: last``) or the best over its steps (``rank_by: best``)."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from apps.accounting.csvsafe import safe_cell
from apps.runs.models import ROLLUP_SHIFTS, MetricKey, MetricRollup, Run
from apps.sweeps import rules
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
    trials = list(sweep.trials.select_related("job").order_by("index"))
    job_ids = [t.job_id for t in trials if t.job_id is not None]
    runs = dict(Run.objects.filter(job_id__in=job_ids).values_list("job_id", "pk"))
    maximize = sweep.goal == SweepGoal.MAX
    last: dict[int, tuple[float | None, int | None]] = {}
    ranked: dict[int, tuple[float | None, int | None]] = {}
    if sweep.metric and job_ids:
        rows = list(
            MetricKey.objects.filter(run__job_id__in=job_ids, name=sweep.metric).values_list(
                "run__job_id", "pk", "last_value", "last_step"
            )
        )
        last = {job_id: (value, step) for job_id, _key, value, step in rows}
        ranked = last
        if sweep.rank_by == RankBy.BEST:
            best = best_values([key for _job, key, _v, _s in rows], maximize=maximize)
            ranked = {job_id: best.get(key, (None, None)) for job_id, key, _v, _s in rows}
    scored = sorted(
        (value, t.index)
        for t in trials
        if t.job_id is not None and (value := ranked.get(t.job_id, (None, None))[0]) is not None
    )
    if maximize:
        scored.sort(key=lambda vi: (-vi[0], vi[1]))
    rank = {index: n for n, (_, index) in enumerate(scored, start=1)}
    out = []
    for t in trials:
        none: tuple[float | None, int | None] = (None, None)
        value, step = ranked.get(t.job_id, none) if t.job_id is not None else none
        newest, newest_step = last.get(t.job_id, none) if t.job_id is not None else none
        run = runs.get(t.job_id) if t.job_id is not None else None
        bracket = rules.bracket_of(t.index, sweep.brackets) + 1 if sweep.brackets > 1 else None
        out.append(Outcome(t, run, value, step, rank.get(t.index), newest, newest_step, bracket))
    return out


def best(sweep: Sweep) -> Outcome | None:
    return next((r for r in outcomes(sweep) if r.rank == 1), None)


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
