"""The write path for jobs: submit, transition (compare-and-set), cancel, retry.

Every state change goes through ``transition``: it checks the one transition table, updates
the row only if it is still in the expected state (a row count of 0 means someone else moved
it first), records a JobEvent and publishes a websocket event after commit.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from apps.accounting.services import close_segment
from apps.accounts.models import User
from apps.clusters.models import ResourcePool
from apps.core.events import publish_pools_changed, publish_tenant_event
from apps.governance.policy import runtime_cap
from apps.jobs import notes
from apps.jobs.models import (
    HOLDING,
    TRANSITIONS,
    Allocation,
    Job,
    JobEvent,
    JobKind,
    JobState,
    OutboxAction,
    OutboxEntry,
    OutboxState,
    spec_devices,
)
from apps.jobs.notes import Message, note
from apps.runs.models import RUN_STATE_OF_JOB_END, Run, RunState
from apps.tenancy.models import Project, Tenant


class IllegalTransition(Exception):  # noqa: N818 - reads as the event it reports
    pass


class StaleState(Exception):  # noqa: N818
    """The job was no longer in the expected state (another actor moved it first)."""


def transition(
    job: Job,
    to: JobState,
    *,
    reason: str,
    message: Message = "",
    expected: JobState | None = None,
    extra: dict[str, Any] | None = None,
) -> Job:
    """Move ``job`` from ``expected`` (default: its current state) to ``to``, compare-and-set.

    Raises IllegalTransition for a move the table forbids and StaleState when the row was
    changed by someone else in the meantime. Must run inside a transaction."""
    message, note_key, note_args = notes.split(message)
    source = JobState(expected or job.state)
    if to not in TRANSITIONS[source]:
        raise IllegalTransition(f"job {job.pk}: {source} -> {to} is not allowed")
    now = timezone.now()
    fields: dict[str, Any] = {
        "state": to,
        "state_reason": (message or reason)[:300],
        "state_changed_at": now,
        **(extra or {}),
    }
    if to == JobState.RUNNING and job.started_at is None:
        fields["started_at"] = now
    if to in (JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED):
        fields["finished_at"] = now
    if to != JobState.QUEUED:
        fields.update(queue_position=None, expected_start_at=None, expected_start_as_of=None)
    updated = Job.objects.filter(pk=job.pk, state=source).update(**fields)
    if updated != 1:
        raise StaleState(f"job {job.pk} is no longer {source}")
    for key, value in fields.items():
        setattr(job, key, value)
    JobEvent.objects.create(
        job=job,
        from_state=source,
        to_state=to,
        reason=reason,
        message=message[:500],
        message_key=note_key,
        message_args=note_args,
    )
    if to in RUN_STATE_OF_JOB_END:
        # The job's curves end with it, whatever its process last said of itself.
        Run.objects.filter(job_id=job.pk, state=RunState.RUNNING).update(
            state=RUN_STATE_OF_JOB_END[to], updated_at=now
        )
    if source in HOLDING and to not in HOLDING:
        close_segment(job=job, ended_at=now, reason=to)  # reads the allocation: before delete
        Allocation.objects.filter(job=job).delete()
    publish_tenant_event(
        job.tenant_id,
        job.tenant.slug,
        "job.updated",
        {"id": job.pk, "state": to, "reason": reason, "message": message},
    )
    # A pool's topology shows its allocations and its queue; other moves leave it as it was.
    if (source in HOLDING) != (to in HOLDING) or (source == JobState.QUEUED) != (
        to == JobState.QUEUED
    ):
        publish_pools_changed(job.pool_id)
    return job


def record_event(
    job: Job, *, reason: str, message: Message = "", at: datetime | None = None
) -> JobEvent:
    """An event without a state change; ``at`` when the caller's clock is not now (a sweep
    that compares the event's time with the job's)."""
    text, key, args = notes.split(message)
    return JobEvent.objects.create(
        job=job,
        reason=reason,
        message=text[:500],
        message_key=key,
        message_args=args,
        created_at=at or timezone.now(),
    )


@transaction.atomic
def submit_job(
    *,
    tenant: Tenant,
    owner: User,
    name: str,
    kind: JobKind,
    pool: ResourcePool,
    priority: int,
    spec: dict[str, Any],
    project: Project | None = None,
    max_wait_s: int | None = None,
    max_runtime_s: int | None = None,
    max_retries: int = 3,
    after: list[Job] | None = None,
) -> Job:
    """Record a validated job as queued. Nothing else happens in the request: the scheduler
    loop admits it and a worker dispatches it. ``after``: jobs that must succeed first
    (validated by the caller; apps/jobs/after.py)."""
    after = after or []
    devices, milli = spec_devices(spec)
    models = spec.get("accelerator_models") or []
    job = Job.objects.create(
        tenant=tenant,
        owner=owner,
        project=project,
        name=name,
        kind=kind,
        pool=pool,
        priority=priority,
        spec=spec,
        accelerator_model=models[0] if len(models) == 1 else "",
        requested_devices=devices,
        requested_milli=milli,
        max_wait_s=max_wait_s,
        max_runtime_s=max_runtime_s,
        max_retries=max_retries,
        state=JobState.SUBMITTED,
        waiting_for_jobs=any(j.state != JobState.SUCCEEDED for j in after),
    )
    if after:
        job.after.set(after)
    transition(
        job, JobState.QUEUED, reason="Submitted", message=note("submittedBy", owner=str(owner))
    )
    return job


@transaction.atomic
def cancel_job(*, job: Job, actor: User) -> Job:
    """Cancel at any non-terminal state. Work on the cluster gets a delete action."""
    job = Job.objects.select_for_update().get(pk=job.pk)
    if job.state in (JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED):
        return job
    on_cluster = job.state in (JobState.DISPATCHING, JobState.RUNNING)
    transition(
        job, JobState.CANCELLED, reason="Cancelled", message=note("cancelledBy", actor=str(actor))
    )
    if on_cluster:
        enqueue_outbox(job, OutboxAction.DELETE)
    return job


def enqueue_outbox(job: Job, action: OutboxAction, *, at: datetime | None = None) -> OutboxEntry:
    """One outbox row per (job, action, attempt); the relay is kicked after commit."""
    entry, _ = OutboxEntry.objects.get_or_create(
        job=job,
        action=action,
        attempt=job.attempt,
        defaults={"available_at": at or timezone.now()},
    )

    def kick() -> None:
        from apps.jobs.tasks import relay_outbox

        relay_outbox.delay()

    transaction.on_commit(kick)
    return entry


def request_scale(job: Job) -> OutboxEntry:
    """Ask the relay to set the replica count of an inference service's workload. The count
    is not stored here: the relay reads the service's current ``desired_replicas``, so a burst
    of decisions becomes one cluster call with the latest one."""
    return request_outbox(job, OutboxAction.SCALE)


def request_outbox(job: Job, action: OutboxAction) -> OutboxEntry:
    """One row per (job, action, attempt) whose work the relay reads when it runs (a scale, a
    rollout). A row already waiting is left alone (including its backoff); a finished or
    failed one is made pending again."""
    entry, created = OutboxEntry.objects.select_for_update().get_or_create(
        job=job,
        action=action,
        attempt=job.attempt,
        defaults={"available_at": timezone.now()},
    )
    if not created and entry.state != OutboxState.PENDING:
        entry.state = OutboxState.PENDING
        entry.tries = 0
        entry.last_error = ""
        entry.available_at = timezone.now()
        entry.done_at = None
        entry.save(update_fields=["state", "tries", "last_error", "available_at", "done_at"])
    elif not created:
        return entry

    def kick() -> None:
        from apps.jobs.tasks import relay_outbox

        relay_outbox.delay()

    transaction.on_commit(kick)
    return entry


@transaction.atomic
def clone_job(
    *, job: Job, actor: User, owner: User | None = None, spec: dict[str, Any] | None = None
) -> Job:
    """A new queued job with the same spec (retry of a finished job, or a copy), under the
    tenant's runtime cap as it is now; owned by ``actor`` unless ``owner`` is given. A copy
    of a notebook gets a new home volume (``apps.jobs.homes.restart_notebook`` passes a
    ``spec`` that keeps the old one)."""
    if spec is None:
        spec = job.spec
        if "home_job" in (spec.get("notebook") or {}):
            notebook = {k: v for k, v in spec["notebook"].items() if k != "home_job"}
            spec = {**spec, "notebook": notebook}
    limit = job.max_runtime_s
    cap = runtime_cap(job.tenant, job.kind)
    if cap is not None:
        limit = cap if limit is None else min(limit, cap)
    return submit_job(
        tenant=job.tenant,
        owner=owner or actor,
        name=job.name,
        kind=JobKind(job.kind),
        pool=job.pool,
        priority=job.priority,
        spec=spec,
        project=job.project,
        max_wait_s=job.max_wait_s,
        max_runtime_s=limit,
        max_retries=job.max_retries,
    )
