"""What a sweep's trials found: each trial's job and the newest value of the sweep's metric."""

from __future__ import annotations

from dataclasses import dataclass

from apps.runs.models import MetricKey, Run
from apps.sweeps.models import Sweep, SweepGoal, Trial


@dataclass(frozen=True)
class Outcome:
    trial: Trial
    run: int | None
    value: float | None
    step: int | None
    rank: int | None


def outcomes(sweep: Sweep) -> list[Outcome]:
    """Every trial in order, with its run and the metric's newest value (none before the job
    reports it); ``rank`` 1 is the best value for the sweep's goal."""
    trials = list(sweep.trials.select_related("job").order_by("index"))
    job_ids = [t.job_id for t in trials if t.job_id is not None]
    runs = dict(Run.objects.filter(job_id__in=job_ids).values_list("job_id", "pk"))
    found: dict[int, tuple[float | None, int | None]] = {}
    if sweep.metric and job_ids:
        rows = MetricKey.objects.filter(run__job_id__in=job_ids, name=sweep.metric).values_list(
            "run__job_id", "last_value", "last_step"
        )
        found = {job_id: (value, step) for job_id, value, step in rows}
    scored = sorted(
        (value, t.index)
        for t in trials
        if t.job_id is not None and (value := found.get(t.job_id, (None, None))[0]) is not None
    )
    if sweep.goal == SweepGoal.MAX:
        scored.sort(key=lambda vi: (-vi[0], vi[1]))
    rank = {index: n for n, (_, index) in enumerate(scored, start=1)}
    out = []
    for t in trials:
        value, step = found.get(t.job_id, (None, None)) if t.job_id is not None else (None, None)
        run = runs.get(t.job_id) if t.job_id is not None else None
        out.append(Outcome(t, run, value, step, rank.get(t.index)))
    return out


def best(sweep: Sweep) -> Outcome | None:
    return next((r for r in outcomes(sweep) if r.rank == 1), None)
