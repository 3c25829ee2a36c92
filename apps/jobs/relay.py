"""The outbox relay and the reconciler: the only code that talks to a cluster about jobs.

Relay: claims pending outbox rows (``SKIP LOCKED``, deletes first), performs the action
through the cluster interface, and marks the row done only after the cluster said yes. A
crash in between leaves the row pending, and the retry is harmless because object names
derive from the job id (an existing object with our label counts as success).

Reconciler: level-triggered. It lists what the cluster runs and maps it onto job states;
anything the database and the cluster disagree on is fixed in the direction of the database's
desired state (a cancelled job's objects are deleted; a lost object restarts its job).
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from apps.clusters.backends.base import ClusterBackend, PermanentError, TransientError
from apps.clusters.backends.spec import WorkloadStatus
from apps.clusters.models import ClusterKind
from apps.clusters.registry import get_backend
from apps.jobs import logs, services, workload
from apps.jobs.models import Job, JobKind, JobState, OutboxAction, OutboxEntry, OutboxState
from apps.jobs.notes import Note, note
from apps.runs.selectors import newest_complete_checkpoint

log = logging.getLogger("zhisuan.relay")
MAX_BACKOFF_S = 60
ON_CLUSTER = (JobState.DISPATCHING, JobState.RUNNING)
MUST_NOT_RUN = (JobState.CANCELLED, JobState.FAILED, JobState.PREEMPTED, JobState.RESTARTING)


def _backoff(tries: int, hint: float | None) -> timedelta:
    return timedelta(seconds=hint if hint else min(MAX_BACKOFF_S, 2 ** min(tries, 6)))


def _after_success(entry: OutboxEntry, job: Job) -> None:
    if entry.action == OutboxAction.APPLY and job.state == JobState.ADMITTED:
        services.transition(
            job, JobState.DISPATCHING, reason="Dispatched", message=note("objectsCreated")
        )
        if job.kind == JobKind.INFERENCE and job.pool.cluster.kind == ClusterKind.KUBERNETES:
            # A new attempt's Deployment starts at the admitted count; bring it to the
            # autoscaler's current one (a no-op call when they agree).
            services.request_scale(job)
    elif entry.action == OutboxAction.DELETE and job.state in (
        JobState.PREEMPTED,
        JobState.RESTARTING,
    ):
        # The old attempt is gone from the cluster: back to the queue, priority kept.
        services.transition(
            job,
            JobState.QUEUED,
            reason="Requeued",
            message=resume_note(job),
        )


def resume_note(job: Job) -> Note:
    """What the next attempt starts from, in the words that fit the job's kind: only
    training resumes from a checkpoint; a notebook keeps its home volume; a service starts
    fresh replicas."""
    if job.kind == JobKind.NOTEBOOK:
        return note("resumeNotebook", attempt=job.attempt)
    if job.kind == JobKind.INFERENCE:
        return note("resumeReplicas", attempt=job.attempt)
    newest = newest_complete_checkpoint(job)
    if newest is None:
        return note("resumeFromStart", attempt=job.attempt)
    return note("resumeCheckpoint", attempt=job.attempt, step=newest.step)


def relay_one(backend: ClusterBackend | None = None) -> bool:
    """Process one outbox row; False when none is due."""
    backend = backend or get_backend()
    with transaction.atomic():
        entry = (
            OutboxEntry.objects.select_for_update(skip_locked=True)
            .filter(state=OutboxState.PENDING, available_at__lte=timezone.now())
            # "scale" > "delete_home" > "delete" > "apply": a scale is one cheap call;
            # deleting frees devices before new workloads are created
            .order_by("-action", "id")
            .first()
        )
        if entry is None:
            return False
        # Lock the job row only: locking its tenant and pool rows too (the default with
        # select_related) deadlocked against a cancel whose foreign-key checks share them.
        job = (
            Job.objects.select_for_update(of=("self",))
            .select_related("tenant", "pool")
            .get(pk=entry.job_id)
        )
        entry.tries += 1
        try:
            if entry.action == OutboxAction.SCALE:
                _scale(backend, entry, job)
            elif entry.action == OutboxAction.ROLLOUT:
                _rollout(backend, entry, job)
            elif entry.action == OutboxAction.APPLY:
                if job.state != JobState.ADMITTED or job.attempt != entry.attempt:
                    entry.state, entry.last_error = OutboxState.DONE, f"skipped: job {job.state}"
                else:
                    backend.apply(workload.build(job))
                    entry.state = OutboxState.DONE
            elif entry.action == OutboxAction.DELETE_HOME:
                backend.delete_notebook_home(job.pk, job.tenant.slug)
                entry.state = OutboxState.DONE
            else:
                logs.collect_job(backend, job)  # the last lines, before the pods go
                backend.delete(job.pk, job.tenant.slug, job.kind)  # type: ignore[arg-type]
                entry.state = OutboxState.DONE
        except TransientError as exc:
            entry.last_error = str(exc)[:500]
            entry.available_at = timezone.now() + _backoff(entry.tries, exc.retry_after_s)
        except (PermanentError, ValueError) as exc:
            entry.state, entry.last_error = OutboxState.FAILED, str(exc)[:500]
            log.error("outbox %s failed permanently: %s", entry, exc)
            # A failed scale leaves the service running at its old size; the next decision
            # makes the row pending again.
            if entry.action in (OutboxAction.APPLY, OutboxAction.DELETE) and job.state in (
                JobState.ADMITTED,
                JobState.DISPATCHING,
            ):
                services.transition(job, JobState.FAILED, reason="DispatchFailed", message=str(exc))
        if entry.state == OutboxState.DONE:
            entry.done_at = timezone.now()
            _after_success(entry, job)
        entry.save()
    return True


def _scale(backend: ClusterBackend, entry: OutboxEntry, job: Job) -> None:
    """Apply the service's current desired count (not the one when the row was written)."""
    from apps.inference.models import InferenceService

    service = InferenceService.objects.filter(job=job).first()
    if job.state not in ON_CLUSTER or job.attempt != entry.attempt or service is None:
        entry.state, entry.last_error = OutboxState.DONE, f"skipped: job {job.state}"
        return
    from apps.scheduling.replicas import held_replicas, release_replicas

    # Never more than the scheduler admitted (a new attempt starts again from its base), and
    # only on the nodes of the replicas that stay admitted.
    replicas = min(service.desired_replicas, held_replicas(job))
    backend.scale(job.pk, job.tenant.slug, replicas, _serve_nodes(job, replicas))
    # The cluster now runs at most that many: extras beyond it (and beyond a newer wish
    # admitted meanwhile) go back to the quota.
    service.refresh_from_db(fields=["desired_replicas"])
    release_replicas(job, max(replicas, service.desired_replicas), timezone.now())
    entry.state = OutboxState.DONE


def _serve_nodes(job: Job, replicas: int) -> list[str]:
    """The nodes of the replicas that stay admitted, and of a rollout's surge room."""
    from apps.scheduling.replicas import base_replicas

    nodes = job.allocations.filter(
        Q(replica_index__lt=max(replicas, base_replicas(job))) | Q(surge=True)
    )
    return sorted(set(nodes.values_list("node__name", flat=True)))


def _rollout(backend: ClusterBackend, entry: OutboxEntry, job: Job) -> None:
    """Bring the service's Deployment to its revision: its node label on the surge room's
    nodes first, then the pod template (the Deployment rolls the pods). Once the reconciler
    saw the rollout done (``finishing``), give back the surge room where the pods left it."""
    from apps.inference import rollouts
    from apps.inference.autoscale.rollout import Slot, plan_surge_release
    from apps.inference.models import InferenceService, RolloutState
    from apps.scheduling.replicas import held_replicas, release_surge

    service = InferenceService.objects.select_for_update().filter(job=job).first()
    if job.state not in ON_CLUSTER or job.attempt != entry.attempt or service is None:
        entry.state, entry.last_error = OutboxState.DONE, f"skipped: job {job.state}"
        return
    replicas = min(service.desired_replicas, held_replicas(job))
    if service.rollout_state == RolloutState.FINISHING:
        pods = backend.service_pods(job.pk, job.tenant.slug)
        slots = [Slot(a.pk, a.node.name, a.surge) for a in job.allocations.select_related("node")]
        plan = plan_surge_release(slots, pods)
        if plan.kept:
            # A pod still runs in every slot (an old one terminating, say): look again soon.
            raise TransientError(
                "rollout done but its surge room still holds pods", retry_after_s=10
            )
        release_surge(job, timezone.now(), moves=plan.moves, ids=plan.released)
        backend.scale(job.pk, job.tenant.slug, replicas, _serve_nodes(job, replicas))
        rollouts.finish(service, job, timezone.now())
    elif service.rollout_state in (RolloutState.ROLLING, RolloutState.WAITING):
        backend.scale(job.pk, job.tenant.slug, replicas, _serve_nodes(job, replicas))
        if service.rollout_state == RolloutState.ROLLING:
            backend.update_template(workload.build(job))
    entry.state = OutboxState.DONE


def relay(limit: int = 200, backend: ClusterBackend | None = None) -> int:
    done = 0
    while done < limit and relay_one(backend):
        done += 1
    return done


def _restart_or_fail(job: Job, message: str) -> None:
    if job.failures >= job.max_retries:
        services.transition(
            job, JobState.FAILED, reason="RetriesExhausted", message=f"{message}; no retries left"
        )
        return
    services.transition(
        job,
        JobState.RESTARTING,
        reason="Restarting",
        message=message,
        extra={"attempt": job.attempt + 1, "failures": job.failures + 1},
    )
    # Delete the failed attempt's objects; the relay requeues the job once they are gone.
    services.enqueue_outbox(job, OutboxAction.DELETE)


def _apply_status(job: Job, status: WorkloadStatus) -> None:
    if status.kind == "inference" and status.phase == "running":
        from apps.inference import rollouts

        rollouts.observe(job, status)
    if status.phase == "running" and job.state == JobState.DISPATCHING:
        services.transition(job, JobState.RUNNING, reason="Running", message=status.message)
    elif status.phase == "succeeded":
        services.transition(job, JobState.SUCCEEDED, reason="Succeeded", message=status.message)
    elif status.phase == "failed":
        _restart_or_fail(job, status.message or "replica failed")


def reconcile(backend: ClusterBackend | None = None, grace_s: float = 30.0) -> int:
    """One level-triggered pass. Returns how many jobs changed state."""
    backend = backend or get_backend()
    statuses, _rv = backend.list_status()
    by_job = {s.job_id: s for s in statuses}
    changed = 0
    now = timezone.now()
    for job in Job.objects.filter(state__in=ON_CLUSTER).select_related("tenant"):
        status = by_job.get(job.pk)
        with transaction.atomic():
            locked = (
                Job.objects.select_for_update(of=("self",)).select_related("tenant").get(pk=job.pk)
            )
            if locked.state not in ON_CLUSTER:
                continue
            try:
                if status is None:
                    if (now - locked.state_changed_at).total_seconds() > grace_s:
                        _restart_or_fail(locked, "workload disappeared from the cluster")
                        changed += 1
                    continue
                before = locked.state
                _apply_status(locked, status)
                changed += int(locked.state != before)
            except services.StaleState:
                continue
    # Objects of jobs that must not run: delete them (idempotent). Admitted and queued jobs
    # are left alone, since their new objects may be being created right now.
    gone = Job.objects.filter(pk__in=list(by_job), state__in=MUST_NOT_RUN)
    for job in gone:
        if not OutboxEntry.objects.filter(
            job=job, action=OutboxAction.DELETE, state=OutboxState.PENDING
        ).exists():
            with transaction.atomic():
                OutboxEntry.objects.update_or_create(
                    job=job,
                    action=OutboxAction.DELETE,
                    attempt=job.attempt,
                    defaults={"state": OutboxState.PENDING, "available_at": timezone.now()},
                )
    return changed
