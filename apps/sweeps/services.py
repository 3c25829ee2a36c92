"""Submitting, advancing and cancelling sweeps.

A grid's or a random sweep's trials are all drawn when it is submitted (so the seed alone says
what they are); a tpe sweep draws its first ``startup_trials`` so, and chooses each later one
when it starts, from the results so far (``choose``). A trial becomes a job only when there is
room for it under ``parallel``: the first ones at once, the rest by ``advance``, which the
scheduling loop calls once per cycle before its snapshot. A job made later meets the same
checks as one submitted by hand, with its owner's role at that time; if it is refused (the
pool shrank, the owner left the tenant) the sweep stops and says why, and its running trials
finish.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.accounts.models import User
from apps.audit import services as audit
from apps.audit.models import AuditAction
from apps.jobs import services as jobs
from apps.jobs.api.serializers import JobSerializer
from apps.jobs.models import TERMINAL, Job, JobKind, JobState
from apps.sweeps import adaptive, selectors, space, stopping
from apps.sweeps.models import ENDED, Sweep, SweepGoal, SweepState, Trial
from apps.sweeps.space import Value, fill
from apps.tenancy.models import Role, Tenant
from apps.tenancy.selectors import role_in

log = logging.getLogger("zhisuan.sweeps")
JOB_ENDED = TERMINAL  # the jobs app's own set of ended states


@dataclass(frozen=True)
class Submitter:
    """What the job serializer's checks read from a view: the tenant and the caller's role."""

    tenant: Tenant
    role: Role | None


def trial_body(
    sweep_name: str, template: dict[str, Any], index: int, params: dict[str, Value]
) -> dict[str, Any]:
    """The job body of trial ``index``: the template filled in, named ``<sweep>-<index>``."""
    return {**fill(template, params), "name": f"{sweep_name}-{index}", "kind": JobKind.TRAINING}


def job_errors(body: dict[str, Any], submitter: Submitter) -> tuple[dict[str, Any], JobSerializer]:
    """The serializer's field errors for a job body ({} when it would be accepted), and the
    validated serializer."""
    serializer = JobSerializer(data=body, context={"view": submitter})
    if serializer.is_valid():
        return {}, serializer
    return dict(serializer.errors), serializer


def _launch(sweep: Sweep, trial: Trial, now: datetime, actor: User | None) -> Job | None:
    """Trial ``trial`` as a queued job, audited as its owner's submission; None (and the sweep
    stopped) when it is refused. The caller holds the sweep's row lock."""
    owner = sweep.owner
    role = role_in(owner, sweep.tenant) if owner is not None else None
    if owner is None or role is None or role == Role.VIEWER:
        _stop(sweep, now, _("Its owner can no longer submit jobs in this tenant."))
        return None
    body = trial_body(sweep.name, sweep.template, trial.index, trial.params)
    errors, serializer = job_errors(body, Submitter(sweep.tenant, role))
    if errors:
        said = "; ".join(_said(errors))
        _stop(
            sweep,
            now,
            _("Trial {index} was refused: {errors}").format(index=trial.index, errors=said)[:500],
        )
        return None
    job: Job = serializer.save(tenant=sweep.tenant, owner=owner)
    trial.job, trial.launched_at = job, now
    trial.save(update_fields=["job", "launched_at"])
    audit.record(
        actor=actor or owner,
        action=AuditAction.CREATE,
        instance=job,
        tenant=sweep.tenant,
        before=None,
        after=audit.snapshot(job),
    )
    return job


def _said(errors: Any, path: str = "") -> list[str]:
    """Field errors, nested or not, as ``field: message`` lines."""
    if isinstance(errors, dict):
        return [
            line
            for key, value in errors.items()
            for line in _said(value, f"{path}.{key}" if path else str(key))
        ]
    if isinstance(errors, list):
        return [line for item in errors for line in _said(item, path)]
    return [f"{path}: {errors}" if path else str(errors)]


def _stop(sweep: Sweep, now: datetime, why: str) -> None:
    sweep.state, sweep.note, sweep.finished_at = SweepState.STOPPED, why, now
    sweep.save(update_fields=["state", "note", "finished_at"])


def _active(sweep: Sweep) -> int:
    return sweep.trials.filter(job__isnull=False).exclude(job__state__in=JOB_ENDED).count()


def choose(sweep: Sweep, index: int) -> dict[str, Value]:
    """The values of trial ``index`` of a tpe sweep, from the trials before it: those that
    succeeded (the value that ranks them, by the sweep's ``rank_by``), those stopped early
    (their newest value, at its step), and those queued or running (values, no result yet);
    failed and cancelled trials are left out."""
    results = []
    for o in selectors.outcomes(sweep):
        job = o.trial.job
        if job is None or not o.trial.params:
            continue
        if job.state == JobState.SUCCEEDED and o.value is not None:
            results.append(adaptive.Result(o.trial.params, adaptive.COMPLETE, o.value))
        elif o.trial.stopped_step is not None and o.last_value is not None:
            pruned = adaptive.Result(
                o.trial.params, adaptive.PRUNED, o.last_value, o.last_step or 0
            )
            results.append(pruned)
        elif job.state not in JOB_ENDED:
            results.append(adaptive.Result(o.trial.params, adaptive.RUNNING))
    return adaptive.suggest(
        space.parse_space(sweep.parameters),
        results,
        maximize=sweep.goal == SweepGoal.MAX,
        seed=(sweep.seed * 1009 + index) % 2**31,
    )


def fill_slots(sweep: Sweep, now: datetime, actor: User | None = None) -> list[Job]:
    """Launch the next trials while fewer than ``parallel`` are queued or running; finish the
    sweep when every trial has run. The caller holds the sweep's row lock."""
    made: list[Job] = []
    if sweep.state != SweepState.RUNNING:
        return made
    room = sweep.parallel - _active(sweep)
    waiting = list(sweep.trials.filter(job__isnull=True, launched_at__isnull=True)[: max(room, 0)])
    for trial in waiting:
        if not trial.params:  # a tpe trial past the startup: chosen now, from the results
            trial.params = choose(sweep, trial.index)
            trial.save(update_fields=["params"])
        job = _launch(sweep, trial, now, actor)
        if job is None:
            return made
        made.append(job)
    if not waiting and room == sweep.parallel:  # nothing left to start, nothing running
        sweep.state, sweep.finished_at = SweepState.FINISHED, now
        sweep.save(update_fields=["state", "finished_at"])
    return made


def advance(now: datetime | None = None) -> int:
    """Once per scheduling cycle: every running sweep gets the trials it has room for.
    Returns the jobs made."""
    now = now or timezone.now()
    made = 0
    for pk in Sweep.objects.filter(state=SweepState.RUNNING).values_list("pk", flat=True):
        try:
            with transaction.atomic():
                sweep = (
                    Sweep.objects.select_for_update(of=("self",))
                    .select_related("tenant", "owner")
                    .get(pk=pk)
                )
                stopping.check(sweep, now)  # a trial stopped early frees its slot at once
                made += len(fill_slots(sweep, now))
        except Exception:
            # The scheduling cycle calls this: one sweep's fault must not stop admission for
            # the whole cluster. Its transaction is rolled back; the next cycle tries again.
            log.exception("sweep %s: advancing failed", pk)
    return made


@transaction.atomic
def cancel(sweep: Sweep, actor: User) -> Sweep:
    """No more trials start, and the queued and running ones are cancelled. A sweep that
    already ended is left as it is."""
    sweep = Sweep.objects.select_for_update().get(pk=sweep.pk)
    if sweep.state in ENDED:
        return sweep
    now = timezone.now()
    sweep.state, sweep.finished_at = SweepState.CANCELLED, now
    sweep.save(update_fields=["state", "finished_at"])
    live = Job.objects.filter(trial__sweep=sweep).exclude(state__in=JOB_ENDED)
    for job in live:
        jobs.cancel_job(job=job, actor=actor)
    return sweep
