"""Rolling updates of inference services: a new revision (runtime image, model, port and
probes) replaces the replicas a few at a time, so the service keeps answering while it changes.

* A new revision is made by a change of what the replicas run (``REVISION_FIELDS`` and
  ``SERVING_FIELDS``: the image, the model, the port, the probes) or by a rollback to an
  earlier revision's (a new number either way: the history only grows).
* Surge replicas (new pods started before old ones stop, up to ``max_surge``) need devices:
  they are admitted against the tenant's quota and free room like any replica
  (``scheduling.replicas.admit_surge``) and held until the rollout ends. When none fits the
  rollout replaces replicas in place, ``max_unavailable`` at a time; with ``max_unavailable``
  0 it waits for room, asked again every ``SURGE_RETRY_S``.
* On the simulated cluster the replicas roll in-process (``autoscale.rollout.rollout_step``,
  the Deployment controller's arithmetic). On Kubernetes the relay patches the Deployment's
  pod template and the Deployment rolls its pods; the reconciler follows its status, and
  once it is done the relay gives back the surge room where the pods left it
  (``autoscale.rollout.plan_surge_release``). A rollout whose new pods never become ready
  (the Deployment's progress deadline) fails, and the service rolls back to the revision it
  served before, automatically.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from apps.accounts.models import User
from apps.clusters.backends.spec import WorkloadStatus
from apps.inference.autoscale.replicas import ServiceSim
from apps.inference.autoscale.rollout import rollout_done, rollout_step
from apps.inference.models import InferenceService, RevisionState, RolloutState, ServiceRevision
from apps.jobs import notes
from apps.jobs import services as jobs
from apps.jobs.models import Job, OutboxAction
from apps.jobs.notes import Message, Note, Said, note
from apps.jobs.relay import ON_CLUSTER
from apps.scheduling.replicas import admit_surge, held_surge, release_surge

REVISION_FIELDS = ("runtime_image", "model_uri")
# The settings a revision's replicas run with beside its image and model (the pod template's
# port and probes): a change to any of them replaces the replicas too. The surge limits are
# not among them; they say how the next rollout goes, not what runs.
SERVING_FIELDS = (
    "port", "readiness_path", "liveness_path", "probe_initial_delay_s", "probe_period_s",
)  # fmt: skip
SURGE_RETRY_S = 30.0


def serving_spec(runtime_image: str, model_uri: str, port: int) -> dict[str, Any]:
    """What a revision puts in the job's spec: the image, its arguments (vLLM images get
    ``--model <uri> --port <port>``) and the model's URI in the environment."""
    args = ["--model", model_uri, "--port", str(port)]
    return {
        "image": runtime_image,
        "args": args if runtime_image.startswith("vllm/") else [],
        "env": {"ZS_MODEL_URI": model_uri},
    }


# The settings the cluster's workload spec carries (apps.jobs.workload reads them back).
ROLLOUT_FIELDS = (*SERVING_FIELDS, "max_surge", "max_unavailable")


def rollout_settings(values: dict[str, Any]) -> dict[str, Any]:
    return {key: values[key] for key in ROLLOUT_FIELDS}


def write_spec(job: Job, service: InferenceService) -> None:
    """The job's spec follows the service (its revision's image, arguments and model, its
    port, probes and surge limits), so any later attempt starts on what it says now."""
    serving = serving_spec(service.runtime_image, service.model_uri, service.port)
    spec = dict(job.spec)
    spec["image"], spec["args"] = serving["image"], serving["args"]
    spec["env"] = {**(spec.get("env") or {}), **serving["env"]}
    spec["inference"] = {
        **(spec.get("inference") or {}),
        **rollout_settings(vars(service)),
        "revision": service.revision,
    }
    job.spec = spec
    job.save(update_fields=["spec"])


def serving_settings(values: Any) -> dict[str, Any]:
    """``SERVING_FIELDS`` of a service (or of anything with those attributes)."""
    return {key: getattr(values, key) for key in SERVING_FIELDS}


def content_of(service: InferenceService) -> dict[str, Any]:
    """What the service's replicas run now: its image, model, port and probes."""
    return {key: getattr(service, key) for key in REVISION_FIELDS + SERVING_FIELDS}


def revision_content(revision: ServiceRevision, service: InferenceService) -> dict[str, Any]:
    """What ``revision`` ran. A setting it does not record (none since migration 0007 gave
    every revision its service's settings) is taken as the service's now."""
    return {
        **content_of(service),
        **{key: revision.settings[key] for key in SERVING_FIELDS if key in revision.settings},
        "runtime_image": revision.runtime_image,
        "model_uri": revision.model_uri,
    }


def describe_changes(before: dict[str, Any], after: dict[str, Any]) -> str:
    """``port 8000 → 8080, readiness_path /health → /ready`` for the serving settings that
    differ (image and model have their own columns and notes)."""
    return ", ".join(
        f"{key} {before[key]} → {after[key]}" for key in SERVING_FIELDS if before[key] != after[key]
    )


def new_revision(
    service: InferenceService,
    content: dict[str, Any],
    *,
    actor: User | None,
    rollback_of: int | None = None,
    why: Message = "",
    now: datetime | None = None,
) -> ServiceRevision:
    """Make the next revision, running ``content`` (any of the image, model, port and probes;
    the rest stay), and start rolling it out (call inside a transaction, with the service row
    locked). A rollout still running is superseded: the new one replaces the replicas of both
    earlier revisions."""
    now = now or timezone.now()
    job = Job.objects.select_for_update(of=("self",)).get(pk=service.job_id)
    before = content_of(service)
    service.revision += 1
    for key in REVISION_FIELDS + SERVING_FIELDS:
        if key in content:
            setattr(service, key, content[key])
    changes = describe_changes(before, content_of(service))
    if not why and changes:
        why = note("revisionSettings", changes=changes)
    # A rollout still running stops where it is (the revision that served keeps its state
    # until the new one serves everywhere).
    ServiceRevision.objects.filter(
        service=service, state__in=(RevisionState.ROLLING, RevisionState.PENDING)
    ).update(state=RevisionState.SUPERSEDED, finished_at=now)
    running = job.state in ON_CLUSTER
    text, key, key_args = notes.split(why)
    revision = ServiceRevision.objects.create(
        service=service,
        number=service.revision,
        runtime_image=service.runtime_image,
        model_uri=service.model_uri,
        settings=serving_settings(service),
        state=RevisionState.ROLLING if running else RevisionState.PENDING,
        created_at=now,
        created_by=actor,
        rollback_of=rollback_of,
        message=text[:500],
        message_key=key,
        message_args=key_args,
    )
    write_spec(job, service)
    args: dict[str, Any] = {
        "revision": service.revision,
        "image": service.runtime_image,
        "model": service.model_uri,
    }
    started: Note
    if rollback_of is not None:
        started = note("rolloutRollback", of=rollback_of, **args)
    elif (before["runtime_image"], before["model_uri"]) == (args["image"], args["model"]):
        started = note("rolloutSettings", revision=service.revision, changes=changes)
    else:
        started = note("rolloutStarted", **args)
    jobs.record_event(job, reason="RolloutStarted", message=started, at=now)
    if running:
        service.rollout_state = RolloutState.ROLLING
        service.updated_replicas = 0
        service.rollout_reason, service.rollout_detail = "", []
    else:
        # Nothing runs (a surge room went with the job's devices): the next start is on it.
        service.rollout_state = RolloutState.IDLE
        service.updated_replicas = 0
        service.rollout_reason, service.rollout_detail = "", []
        jobs.record_event(
            job,
            reason="RolloutPending",
            message=note("rolloutPending", revision=service.revision),
            at=now,
        )
    service.updated_at = now
    service.save()
    return revision


def finish(service: InferenceService, job: Job, now: datetime) -> None:
    """The service's revision serves on every replica (its rollout ended, or the service
    started on it)."""
    ServiceRevision.objects.filter(service=service, state=RevisionState.COMPLETE).exclude(
        number=service.revision
    ).update(state=RevisionState.SUPERSEDED)
    ServiceRevision.objects.filter(service=service, number=service.revision).update(
        state=RevisionState.COMPLETE, finished_at=now
    )
    first = service.serving_revision == 0  # the service's first start: nothing was replaced
    changes = {
        "rollout_state": RolloutState.IDLE,
        "serving_revision": service.revision,
        "updated_replicas": 0,
        "rollout_reason": "",
        "rollout_detail": [],
    }
    _save(service, changes)
    if not first:
        jobs.record_event(
            job,
            reason="RolloutComplete",
            message=note("rolloutComplete", revision=service.revision),
        )


def _save(service: InferenceService, changes: dict[str, Any]) -> None:
    """Write the changed fields only (the autoscaler's tick writes the replica counts)."""
    changed = {k: v for k, v in changes.items() if getattr(service, k) != v}
    if changed:
        InferenceService.objects.filter(pk=service.pk).update(**changed)
        for key, value in changed.items():
            setattr(service, key, value)


def surge_room(
    service: InferenceService, now: datetime, last_try: float | None, held: int
) -> tuple[int, Said, float | None]:
    """The surge room the rollout may use now (``held`` is what it holds), why not more, and
    when it was last asked for. It grows towards ``max_surge`` when the last try is
    ``SURGE_RETRY_S`` old."""
    if held >= service.max_surge:
        return held, Said(""), last_try
    if last_try is not None and now.timestamp() - last_try < SURGE_RETRY_S:
        return held, Said(service.rollout_reason, service.rollout_detail), last_try
    admitted = admit_surge(service.job, service.max_surge, now)
    return admitted.replicas, admitted.short, now.timestamp()


def _short_changes(
    service: InferenceService, state: str, surge: int, short: Said
) -> dict[str, Any]:
    less = surge < service.max_surge
    return {
        "rollout_state": state,
        "rollout_reason": short.english[:300] if less else "",
        "rollout_detail": short.detail if less else [],
    }


def _waiting(service: InferenceService, job: Job, short: Said) -> None:
    """No surge room and no replica may be missing: the rollout waits for room."""
    if service.rollout_state != RolloutState.WAITING:
        jobs.record_event(
            job,
            reason="RolloutWaiting",
            message=note("rolloutWaiting", revision=service.revision, why=short),
        )
    _save(service, _short_changes(service, RolloutState.WAITING, 0, short))


def step_simulated(
    service: InferenceService,
    sim: ServiceSim,
    desired: int,
    now: datetime,
    last_try: float | None,
) -> float | None:
    """One control-loop step of a rollout on the simulated cluster (``sim`` is the service's
    ``ServiceSim``, begun on this revision). Returns when surge room was last asked for."""
    job = service.job
    surge, short, asked = surge_room(service, now, last_try, held_surge(job))
    if surge == 0 and service.max_unavailable == 0:
        _waiting(service, job, short)
        return asked
    step = rollout_step(
        desired=desired,
        outdated=sim.outdated,
        fresh_ready=sim.ready - sim.outdated,
        fresh_loading=len(sim.loading),
        surge=surge,
        unavailable=service.max_unavailable,
    )
    sim.roll(step.start, step.stop_outdated, step.stop_fresh)
    fresh_ready = sim.ready - sim.outdated
    if rollout_done(desired=desired, outdated=sim.outdated, fresh_ready=fresh_ready):
        release_surge(job, now)
        finish(service, job, now)
        return None
    changes = _short_changes(service, RolloutState.ROLLING, surge, short)
    changes["updated_replicas"] = fresh_ready + len(sim.loading)
    _save(service, changes)
    return asked


def step_kubernetes(
    service: InferenceService, now: datetime, last_try: float | None
) -> float | None:
    """One control-loop step of a rollout on Kubernetes: hold the surge room (or wait for it)
    and ask the relay to patch the Deployment when the room changed. The Deployment rolls the
    pods; ``observe`` follows it."""
    if service.rollout_state == RolloutState.FINISHING:
        return last_try
    job = service.job
    before = held_surge(job)
    surge, short, asked = surge_room(service, now, last_try, before)
    if surge == 0 and service.max_unavailable == 0:
        _waiting(service, job, short)
        return asked
    if service.rollout_state == RolloutState.WAITING or surge != before or last_try is None:
        # The Deployment is patched (again) with the room there is now: new surge nodes get
        # the service's label before more pods need them.
        request_rollout(job)
    _save(service, _short_changes(service, RolloutState.ROLLING, surge, short))
    return asked


def request_rollout(job: Job) -> None:
    """Ask the relay to bring the Deployment to the service's revision (or, when finishing,
    to give back the surge room); one row per attempt, made pending again like a scale."""
    jobs.request_outbox(job, OutboxAction.ROLLOUT)


@transaction.atomic
def observe(job: Job, status: WorkloadStatus) -> None:
    """What the reconciler saw of a service's Deployment: the rollout's progress, its end (the
    relay then gives back the surge room) or its failure (back to the revision that served)."""
    # Only a rolling service is locked: the reconciler calls this for every running one.
    service = (
        InferenceService.objects.select_for_update()
        .filter(job=job, rollout_state=RolloutState.ROLLING)
        .first()
    )
    if service is None:
        return
    if status.revision != service.revision:
        return  # the relay has not patched the template yet
    if status.rollout_failed:
        fail(service, job, status.message)
    elif status.rolled_out:
        _save(
            service,
            {"rollout_state": RolloutState.FINISHING, "updated_replicas": status.replicas_updated},
        )
        request_rollout(job)
    else:
        _save(service, {"updated_replicas": status.replicas_updated})


def fail(service: InferenceService, job: Job, why: str) -> None:
    """The rollout's new pods never became ready: the revision failed, and the service rolls
    back to the one that served before (unless this was an automatic rollback: no loops)."""
    now = timezone.now()
    current = ServiceRevision.objects.get(service=service, number=service.revision)
    ServiceRevision.objects.filter(pk=current.pk).update(
        state=RevisionState.FAILED, finished_at=now, message=why[:500], message_key="",
        message_args={},
    )  # fmt: skip
    jobs.record_event(
        job,
        reason="RolloutFailed",
        message=note("rolloutFailed", revision=service.revision, why=why or "-"),
    )
    good = ServiceRevision.objects.filter(service=service, number=service.serving_revision).first()
    automatic = current.rollback_of is not None and current.created_by_id is None
    if good is None or good.number == current.number or automatic:
        # Left for a person: a new revision or a rollback starts the next rollout.
        _save(service, {"rollout_state": RolloutState.FAILED, "updated_replicas": 0})
        return
    new_revision(
        service,
        revision_content(good, service),
        actor=None,
        rollback_of=good.number,
        why=note("rolloutAutoRollback", revision=current.number),
        now=now,
    )
    request_rollout(job)
