"""The write path of governance: policies, the periodic sweep (idle GPUs, queue time limits,
runtime limits), and the owner's answers to a warning (keep running, exempt).

The sweep is level-triggered and idempotent: each pass reads the jobs as they are and moves
every flag at most one step, so running it every few seconds or every few minutes (beat, the
embedded ticker, or both at once) gives the same outcome. Stops go through the jobs state
machine (``transition`` + a delete in the outbox), so accounting closes the hold and the
scheduler sees the freed devices on its next cycle.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, fields
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import F, QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.accounting.services import held_milli
from apps.accounts.models import User
from apps.governance import rules
from apps.governance.models import (
    ACTIVE_FLAG_STATES,
    FlagState,
    IdleFlag,
    IdlePolicy,
    NoticeKind,
    QueueAction,
    QueueFlag,
)
from apps.governance.notify import notify, redeliver_due
from apps.governance.policy import (
    RULES,
    Policy,
    default_policy,
    effective_policy,
    looser_fields,
    overrides,
    unset,
)
from apps.governance.utilization import UtilizationProvider, get_provider
from apps.health.checkpoints import latest_checkpoint
from apps.jobs import homes
from apps.jobs import services as jobs
from apps.jobs.models import HOLDING, Allocation, Job, JobEvent, JobKind, JobState, OutboxAction
from apps.jobs.notes import Duration, Note, Said, note
from apps.runs import services as runs
from apps.runs.selectors import job_checkpoint_request
from apps.tenancy.models import Membership, Role, Tenant

GOVERNED_KINDS = (JobKind.TRAINING, JobKind.NOTEBOOK)
RUNTIME_WARNING_S = 30 * 60  # the owner hears of a runtime-limit stop this long before it


class PolicyError(ValueError):
    """Policy values rejected, with field errors for a 400."""

    def __init__(self, errors: dict[str, list[str]]) -> None:
        super().__init__(errors)
        self.errors = errors


class FlagActionError(ValueError):
    """A keep-running or exempt request the flag's state does not allow (409)."""


@dataclass
class SweepResult:
    warned: int = 0
    cleared: int = 0
    stopped: int = 0
    expired: int = 0
    escalated: int = 0
    timed_out: int = 0
    runtime_warned: int = 0
    reminded: int = 0
    redelivered: int = 0
    homes_deleted: int = 0

    @property
    def total(self) -> int:
        return sum(getattr(self, f.name) for f in fields(self))


# --- policies -------------------------------------------------------------------------------


@transaction.atomic
def set_default_policy(*, values: dict[str, Any]) -> IdlePolicy:
    """Create or update the platform default (values already range-checked)."""
    row = IdlePolicy.objects.select_for_update().filter(is_default=True).first()
    base = default_policy().as_dict() if row is None else {}
    row = row or IdlePolicy(is_default=True, tenant=None)
    for name, value in {**base, **values}.items():
        if name != "webhook_url":
            setattr(row, name, value)
    row.updated_at = timezone.now()
    row.save()
    return row


@transaction.atomic
def set_tenant_policy(*, tenant: Tenant, values: dict[str, Any]) -> IdlePolicy:
    """Set some of the tenant's rules (and its webhook); values looser than the default are
    refused. Only the rules in ``values`` change. A rule set to the default's value follows
    the default from now on (the dashboard's form sends every rule, changed or not, and a
    tenant at the default should not be pinned there when the default is loosened)."""
    default = default_policy()
    row = IdlePolicy.objects.select_for_update().filter(tenant=tenant).first()
    errors = looser_fields(default, values)
    if errors:
        raise PolicyError(errors)
    row = row or IdlePolicy(tenant=tenant, is_default=False)
    for name, value in values.items():
        if name in RULES:
            setattr(row, name, unset(name) if value == getattr(default, name) else value)
        else:
            setattr(row, name, value)
    row.updated_at = timezone.now()
    row.save()
    return row


@transaction.atomic
def reset_tenant_policy(*, tenant: Tenant, rules: list[str] | None = None) -> IdlePolicy | None:
    """Make the given rules (None: every rule) follow the platform default again; the
    webhook is kept (it has no default). The tenant's row, or None when it has none."""
    row = IdlePolicy.objects.select_for_update().filter(tenant=tenant).first()
    names = [name for name in (RULES if rules is None else rules) if name in overrides(row)]
    if row is None or not names:
        return row
    for name in names:
        setattr(row, name, unset(name))
    row.updated_at = timezone.now()
    row.save()
    return row


# --- notices --------------------------------------------------------------------------------


def _tell_owner(job: Job, kind: NoticeKind, title: Note, *body: Note) -> None:
    if job.owner is not None:
        notify(tenant=job.tenant, recipient=job.owner, kind=kind, job=job, title=title, body=body)


def _named(job: Job) -> dict[str, str | int]:
    """The job as a notice names it."""
    return {"name": job.name, "job": job.pk}


# --- idle GPUs ------------------------------------------------------------------------------


def _warn(job: Job, flag: IdleFlag | None, policy: Policy, now: datetime, peak: float) -> None:
    idle_s = policy.idle_s(job.kind)
    with transaction.atomic():
        flag = flag or IdleFlag(job=job, tenant_id=job.tenant_id)
        flag.state = FlagState.WARNED
        flag.idle_since = now - timedelta(seconds=idle_s)
        flag.peak_util_pct = peak
        flag.warned_at = flag.watch_from = flag.updated_at = now
        flag.stop_at = now + timedelta(seconds=policy.grace_s)
        stop = f"{flag.stop_at:%Y-%m-%d %H:%M}"
        flag.extensions_used = 0
        flag.save()
        jobs.record_event(
            job,
            reason="IdleWarning",
            message=note(
                "idleWarning",
                threshold=f"{policy.util_threshold_pct:g}",
                idle=Duration(idle_s),
                peak=f"{peak:g}",
                stop=stop,
            ),
        )
        _tell_owner(
            job,
            NoticeKind.IDLE_WARNING,
            note("noticeIdleWarning", name=job.name, grace=Duration(policy.grace_s)),
            note(
                "noticeIdleWarningBody",
                **_named(job),
                peak=f"{peak:g}",
                idle=Duration(idle_s),
                threshold=f"{policy.util_threshold_pct:g}",
                stop=stop,
                most=policy.max_extensions,
                extension=Duration(policy.extension_s),
            ),
            *_ask_checkpoint(job, f"idle GPUs: stops at {stop} UTC"),
        )


def _ask_checkpoint(job: Job, reason: str) -> tuple[Note, ...]:
    """Asks a training job to save a checkpoint before it is stopped (the SDK hears of it with
    its next metrics batch); the sentence for the owner's notice, none for other kinds."""
    if job.kind != JobKind.TRAINING:
        return ()
    runs.request_checkpoint(run=runs.ensure_run_for_job(job), reason=reason)
    return (note("noticeCheckpointAsked"),)


def _checkpoint_note(job: Job) -> Note:
    """At a stop: whether the job was asked for a checkpoint and saved one, and where a clone
    would resume."""
    if job.kind != JobKind.TRAINING:
        return note("checkpointNotApplicable")
    ref = latest_checkpoint(job)
    where = (
        note("checkpointAt", step=ref.step, location=ref.location)
        if ref is not None
        else note("checkpointNone")
    )
    asked = job_checkpoint_request(job)
    if asked is None:
        return note("checkpointNotAsked", where=where)
    at = f"{asked.requested_at:%Y-%m-%d %H:%M}"
    if asked.served_by is not None:
        return note("checkpointSaved", at=at, step=asked.served_by.step, where=where)
    return note("checkpointNotSaved", at=at, where=where)


def _locked_job(pk: int) -> Job:
    """The job's row locked (not its tenant's or owner's, which come along for notices and
    events). In a transaction."""
    return Job.objects.select_for_update(of=("self",)).select_related("tenant", "owner").get(pk=pk)


def _stop(flag_id: int, now: datetime) -> bool:
    with transaction.atomic():
        flag = IdleFlag.objects.select_for_update().get(pk=flag_id)
        job = _locked_job(flag.job_id)
        if flag.state not in ACTIVE_FLAG_STATES or job.state != JobState.RUNNING:
            return False
        milli = sum(held_milli(Allocation.objects.filter(job=job)).values())
        checkpoint = _checkpoint_note(job)
        jobs.record_event(job, reason="IdleCheckpoint", message=checkpoint)
        jobs.transition(job, JobState.CANCELLED, reason="IdleStopped", message=note("idleStopped"))
        jobs.enqueue_outbox(job, OutboxAction.DELETE)
        IdleFlag.objects.filter(pk=flag.pk).update(
            state=FlagState.STOPPED,
            stopped_at=now,
            device_milli=milli,
            checkpoint_note=checkpoint.text[:300],
            updated_at=now,
        )
        _tell_owner(
            job,
            NoticeKind.IDLE_STOPPED,
            note("noticeIdleStopped", name=job.name),
            note("noticeIdleStoppedBody", **_named(job), gpus=f"{milli / 1000:g}"),
            note("noticeCheckpoint", checkpoint=checkpoint),
        )
    return True


def _remind(flag: IdleFlag, job: Job, policy: Policy, now: datetime) -> bool:
    """One grace period before an extended stop, the owner of a job still idle is told again
    (once per extension): the extension's stop would otherwise come unannounced."""
    if flag.state != FlagState.EXTENDED or flag.reminded_at is not None:
        return False
    assert flag.watch_from is not None and flag.stop_at is not None
    due = rules.reminder_due(
        extended_at_s=flag.watch_from.timestamp(),
        stop_at_s=flag.stop_at.timestamp(),
        now_s=now.timestamp(),
        grace_s=policy.grace_s,
    )
    if not due:
        return False
    with transaction.atomic():
        # Claimed by a conditional update: two passes at once remind once, and a click that
        # moved the stop meanwhile (a new stop_at) leaves the claim to the next pass.
        claimed = IdleFlag.objects.filter(
            pk=flag.pk, state=FlagState.EXTENDED, reminded_at__isnull=True, stop_at=flag.stop_at
        ).update(reminded_at=now, updated_at=now)
        if not claimed:
            return False
        stop = f"{flag.stop_at:%Y-%m-%d %H:%M}"
        left = max(policy.max_extensions - flag.extensions_used, 0)
        jobs.record_event(
            job, reason="IdleReminder", message=note("idleReminder", stop=stop, left=left)
        )
        _tell_owner(
            job,
            NoticeKind.IDLE_WARNING,
            note("noticeIdleReminder", name=job.name, stop=stop),
            note(
                "noticeIdleReminderBody",
                **_named(job),
                stop=stop,
                left=left,
                most=policy.max_extensions,
            ),
        )
    return True


def _idle_pass(provider: UtilizationProvider, now: datetime, result: SweepResult) -> None:
    # Flags of jobs that ended on their own are closed first.
    IdleFlag.objects.filter(state__in=ACTIVE_FLAG_STATES).exclude(
        job__state=JobState.RUNNING
    ).update(state=FlagState.CLEARED, updated_at=now)
    default = default_policy()
    policies: dict[int, Policy] = {}
    running = Job.objects.filter(state=JobState.RUNNING, kind__in=GOVERNED_KINDS).select_related(
        "tenant", "owner"
    )
    flags = {f.job_id: f for f in IdleFlag.objects.filter(job__in=running)}
    for job in running:
        if job.tenant_id not in policies:
            policies[job.tenant_id] = effective_policy(job.tenant, default)
        policy = policies[job.tenant_id]
        flag = flags.get(job.pk)
        if flag is not None and flag.state == FlagState.EXEMPT:
            continue
        if flag is not None and flag.state in ACTIVE_FLAG_STATES:
            assert flag.watch_from is not None and flag.stop_at is not None
            busy = provider.peak_util(job, flag.watch_from, now, min_coverage=0)
            if rules.reads_busy(busy, policy.util_threshold_pct):
                IdleFlag.objects.filter(pk=flag.pk).update(state=FlagState.CLEARED, updated_at=now)
                jobs.record_event(
                    job, reason="IdleCleared", message=note("idleCleared", busy=f"{busy:g}")
                )
                result.cleared += 1
            elif now >= flag.stop_at and _stop(flag.pk, now):
                result.stopped += 1
            elif _remind(flag, job, policy, now):
                result.reminded += 1
            continue
        idle_s = policy.idle_s(job.kind)
        start = now - timedelta(seconds=idle_s)
        if job.state_changed_at > start:  # running for less than one idle period
            continue
        peak = provider.peak_util(job, start, now)
        if rules.reads_idle(peak, policy.util_threshold_pct):
            _warn(job, flag, policy, now, peak)
            result.warned += 1


def keep_running(*, flag: IdleFlag) -> IdleFlag:
    """One 'keep running' click: push the stop out by one extension, within the budget."""
    with transaction.atomic():
        flag = (
            IdleFlag.objects.select_for_update(of=("self", "job"))
            .select_related("job", "tenant")
            .get(pk=flag.pk)
        )
        if flag.state not in ACTIVE_FLAG_STATES:
            raise FlagActionError(
                _("The flag is {state}: there is no pending stop to defer.").format(
                    state=flag.state
                )
            )
        policy = effective_policy(flag.tenant)
        if not rules.may_extend(flag.extensions_used, policy.max_extensions):
            raise FlagActionError(
                _("No extensions left ({used} of {most} used).").format(
                    used=flag.extensions_used, most=policy.max_extensions
                )
            )
        now = timezone.now()
        assert flag.stop_at is not None
        flag.extensions_used += 1
        flag.stop_at = max(flag.stop_at, now) + timedelta(seconds=policy.extension_s)
        flag.watch_from = flag.updated_at = now
        flag.reminded_at = None  # the new stop gets its own reminder
        flag.state = FlagState.EXTENDED
        flag.save()
        jobs.record_event(
            flag.job,
            reason="IdleExtended",
            message=note(
                "idleExtended",
                used=flag.extensions_used,
                most=policy.max_extensions,
                stop=f"{flag.stop_at:%Y-%m-%d %H:%M}",
            ),
        )
    return flag


def exempt(*, flag: IdleFlag, actor: User, reason: str) -> IdleFlag:
    """Exempt the job from idle stops for the rest of its life (reason recorded)."""
    with transaction.atomic():
        flag = IdleFlag.objects.select_for_update().select_related("job").get(pk=flag.pk)
        if flag.state == FlagState.STOPPED:
            raise FlagActionError(_("The job was already stopped."))
        flag.state = FlagState.EXEMPT
        flag.exempt_reason = reason[:300]
        flag.exempted_by = actor
        flag.stop_at = None
        flag.updated_at = timezone.now()
        flag.save()
        jobs.record_event(
            flag.job,
            reason="IdleExempt",
            message=note("idleExempt", actor=str(actor), reason=reason),
        )
    return flag


def exempt_job(*, job: Job, actor: User, reason: str) -> IdleFlag:
    """Exempt a job before any warning (e.g. a debugging session known to sit idle)."""
    flag, _created = IdleFlag.objects.get_or_create(
        job=job, defaults={"tenant_id": job.tenant_id, "state": FlagState.EXEMPT}
    )
    return exempt(flag=flag, actor=actor, reason=reason)


# --- queue time limits ----------------------------------------------------------------------


def _queue_pass(now: datetime, result: SweepResult) -> None:
    default = default_policy()
    # A job that starts after others waits in the queue only once they have succeeded.
    waiting = Job.objects.filter(
        state=JobState.QUEUED,
        max_wait_s__isnull=False,
        queue_flag__isnull=True,
        waiting_for_jobs=False,
    ).select_related("tenant", "owner")
    for candidate in waiting:
        assert candidate.max_wait_s is not None
        since = candidate.state_changed_at
        if candidate.released_at is not None:  # let in after its predecessors succeeded
            since = max(since, candidate.released_at)
        waited = (now - since).total_seconds()
        if waited < candidate.max_wait_s:
            continue
        policy = effective_policy(candidate.tenant, default)
        with transaction.atomic():
            job_row = _locked_job(candidate.pk)
            if job_row.state != JobState.QUEUED or QueueFlag.objects.filter(job=job_row).exists():
                continue
            blocking: Said | Note = (
                Said(job_row.pending_message, job_row.pending_detail)
                if job_row.pending_message
                else note("noPendingReason")
            )
            QueueFlag.objects.create(
                job=job_row,
                tenant_id=job_row.tenant_id,
                action=policy.queue_action,
                waited_s=int(waited),
                pending_code=job_row.pending_code,
                pending_message=job_row.pending_message,
                created_at=now,
            )
            summary: dict[str, Duration | Said | Note] = {
                "waited": Duration(waited),
                "limit": Duration(job_row.max_wait_s or 0),
                "blocking": blocking,
            }
            if policy.queue_action == QueueAction.EXPIRE:
                jobs.transition(
                    job_row, JobState.FAILED, reason="QueueExpired",
                    message=note("queueExpired", **summary),
                )  # fmt: skip
                _tell_owner(
                    job_row,
                    NoticeKind.QUEUE_EXPIRED,
                    note("noticeQueueExpired", name=job_row.name),
                    note("noticeQueueExpiredBody", **_named(job_row), **summary),
                )
                result.expired += 1
            else:
                jobs.record_event(
                    job_row, reason="QueueEscalated", message=note("queueEscalated", **summary)
                )
                admins = Membership.objects.filter(
                    tenant=job_row.tenant, role=Role.TENANT_ADMIN
                ).select_related("user")
                recipients = {m.user for m in admins}
                if job_row.owner is not None:
                    recipients.add(job_row.owner)
                for user in sorted(recipients, key=lambda u: u.pk):
                    notify(
                        tenant=job_row.tenant, recipient=user, kind=NoticeKind.QUEUE_ESCALATED,
                        job=job_row, title=note("noticeQueueEscalated", name=job_row.name),
                        body=[note("noticeQueueEscalatedBody", **_named(job_row), **summary)],
                    )  # fmt: skip
                result.escalated += 1


# --- runtime limits -------------------------------------------------------------------------


def _runtime_pass(now: datetime, result: SweepResult) -> None:
    """Stops every job that has held its accelerators for its ``max_runtime_s`` since its
    admission. The scheduler planned with that end (which nodes drain for a waiting large
    job, which work may use a gathering gang's quota room), so it is kept, like a batch
    system's time limit; retries do not apply, the owner clones the job to go on. Shortly
    before, the owner is told once per run (``_warn_runtime``)."""
    limited = Job.objects.filter(
        state__in=HOLDING, max_runtime_s__isnull=False, admitted_at__isnull=False
    ).only("pk", "admitted_at", "max_runtime_s")
    soon: list[tuple[Job, float]] = []
    for candidate in limited:
        assert candidate.admitted_at is not None and candidate.max_runtime_s is not None
        held = (now - candidate.admitted_at).total_seconds()
        left = candidate.max_runtime_s - held
        if left <= 0:
            result.timed_out += _stop_at_limit(candidate, held)
        # Warned a quarter of the limit ahead when that is shorter (a 1 h job: 15 min).
        elif left <= min(RUNTIME_WARNING_S, candidate.max_runtime_s / 4):
            soon.append((candidate, left))
    if not soon:
        return
    # One query for the runs already warned, so a warned job costs no lock per pass.
    told = set(_warned_runs([c.pk for c, _rest in soon]).values_list("job_id", flat=True))
    for candidate, left in soon:
        if candidate.pk not in told:
            result.runtime_warned += _warn_runtime(candidate, left, now)


def _warned_runs(job_ids: list[int]) -> QuerySet[JobEvent]:
    """The warnings given in the jobs' current runs (since their last admission)."""
    return JobEvent.objects.filter(
        job__in=job_ids, reason="RuntimeLimitSoon", created_at__gte=F("job__admitted_at")
    )


def _same_run(candidate: Job) -> Job | None:
    """The job locked, if it still holds its accelerators in the run ``candidate`` was read
    in (requeued and admitted again since: a new run, with a new limit). In a transaction."""
    job = _locked_job(candidate.pk)
    if job.state not in HOLDING or job.admitted_at != candidate.admitted_at:
        return None
    return job


def _stop_at_limit(candidate: Job, held: float) -> int:
    """Stops the job at its runtime limit; 1 if stopped now."""
    assert candidate.max_runtime_s is not None
    with transaction.atomic():
        job = _same_run(candidate)
        if job is None:
            return 0
        on_cluster = job.state in (JobState.DISPATCHING, JobState.RUNNING)
        summary = {"held": Duration(held), "limit": Duration(candidate.max_runtime_s)}
        checkpoint = _checkpoint_note(job)
        jobs.transition(
            job, JobState.FAILED, reason="RuntimeLimit", message=note("runtimeLimit", **summary)
        )
        if on_cluster:
            jobs.enqueue_outbox(job, OutboxAction.DELETE)
        _tell_owner(
            job,
            NoticeKind.RUNTIME_LIMIT,
            note("noticeRuntimeLimit", name=job.name),
            note("noticeRuntimeLimitBody", **_named(job), **summary),
            note("noticeCheckpoint", checkpoint=checkpoint),
        )
        return 1


def _warn_runtime(candidate: Job, left: float, now: datetime) -> int:
    """Tells the owner that the job will be stopped at its runtime limit and asks the job
    for a checkpoint; the event marks the run as warned. 1 if told now."""
    with transaction.atomic():
        job = _same_run(candidate)
        if job is None or _warned_runs([job.pk]).exists():  # another sweep may have told it
            return 0
        stop_at = now + timedelta(seconds=left)
        when: dict[str, str | Duration] = {
            "left": Duration(left),
            "stop": f"{stop_at:%Y-%m-%d %H:%M}",
        }
        jobs.record_event(
            job, reason="RuntimeLimitSoon", message=note("runtimeLimitSoon", **when), at=now
        )
        _tell_owner(
            job,
            NoticeKind.RUNTIME_LIMIT_SOON,
            note("noticeRuntimeLimitSoon", name=job.name),
            note("noticeRuntimeLimitSoonBody", **_named(job), **when),
            *_ask_checkpoint(job, f"runtime limit: stops at {when['stop']} UTC"),
        )
        return 1


_last_sweep = [float("-inf")]


def sweep_if_due(interval_s: float = 30.0) -> SweepResult | None:
    """For the embedded ticker (1 s): idle periods are hours, so one pass per interval is
    plenty and keeps the per-tick cost at zero queries most of the time."""
    now = time.monotonic()
    if now - _last_sweep[0] < interval_s:
        return None
    _last_sweep[0] = now
    return sweep()


def sweep(*, provider: UtilizationProvider | None = None) -> SweepResult:
    """One governance pass over every tenant (idle GPUs, queue time limits, runtime limits)."""
    now = timezone.now()
    result = SweepResult()
    _idle_pass(provider or get_provider(), now, result)
    _queue_pass(now, result)
    _runtime_pass(now, result)
    result.homes_deleted = homes.expire(now)
    result.redelivered = redeliver_due(now)
    return result
