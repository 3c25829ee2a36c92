"""Notebook home volumes: restart a notebook with its files, delete them, expire old ones.

A notebook's home volume holds the files its owner made; the cluster keeps it when the
notebook stops (idle governance, a runtime limit, Stop), so a stop need not lose work. A
volume is named by the notebook that made it, the *home job*: a notebook whose spec has no
``notebook.home_job``. A restart is a new job that mounts the same volume: its spec records
``notebook.home_job``, and a restart of the restart points at the same home job, so a chain of
restarts shares one volume. At most one notebook of a chain is active at a time (the volume is
ReadWriteOnce, and two servers writing the same files would corrupt them).

Deleting a home is explicit (its owner or a tenant admin) or done by the retention setting
``NOTEBOOK_HOME_RETENTION_DAYS`` after the last notebook of the chain ended. Both mark every
job of the chain (``home_deleted_at``) and leave the cluster call to the outbox relay.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Max, Q, QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.accounts.models import User
from apps.jobs import services
from apps.jobs.models import TERMINAL, Job, JobKind, OutboxAction, state_word
from apps.jobs.notes import Note, note


class HomeConflict(Exception):  # noqa: N818  # an outcome the API answers with 409
    """The home cannot be restarted or deleted in the state it is in now."""


def home_job_id(job: Job) -> int | None:
    """The id of the notebook whose volume ``job`` mounts (its own id for a first notebook);
    None for training jobs and services."""
    if job.kind != JobKind.NOTEBOOK:
        return None
    home = (job.spec.get("notebook") or {}).get("home_job")
    return int(home) if home else job.pk


def sharing(home: int) -> QuerySet[Job]:
    """Every notebook that mounts (or made) the home volume of notebook ``home``."""
    return Job.objects.filter(Q(pk=home) | Q(spec__notebook__home_job=home), kind=JobKind.NOTEBOOK)


def _lock_home(job: Job) -> tuple[Job, int]:
    """Lock the home job's row: restarts and deletes of one chain happen one at a time."""
    home = home_job_id(job)
    if home is None:
        raise HomeConflict(_("Only notebooks have a home volume."))
    owner = Job.objects.select_for_update(of=("self",)).filter(pk=home).first()
    if owner is None:  # pragma: no cover - the home job is never deleted while jobs point at it
        raise HomeConflict(_("The notebook that made this home volume no longer exists."))
    return owner, home


def _active(home: int) -> Job | None:
    return sharing(home).exclude(state__in=TERMINAL).order_by("-id").first()


def restart_notebook(*, job: Job, actor: User) -> Job:
    """A new queued notebook like ``job`` that mounts its home volume, owned by ``job``'s
    owner (the files are theirs; an admin restarting it does not take them over). A notebook
    that never started made no volume: its restart starts with a new one."""
    with transaction.atomic():
        owner_job, home = _lock_home(job)
        if job.state not in TERMINAL:
            raise HomeConflict(
                _("Notebook {name} is {state}; stop it first.").format(
                    name=job.name, state=state_word(job.state)
                )
            )
        if owner_job.home_deleted_at is not None:
            raise HomeConflict(_("Its home volume was deleted; clone it to start with a new one."))
        active = _active(home)
        if active is not None:
            raise HomeConflict(
                _("Notebook #{job} ({state}) already uses this home volume.").format(
                    job=active.pk, state=state_word(active.state)
                )
            )
        spec: dict[str, Any] = dict(job.spec)
        notebook = dict(spec.get("notebook") or {})
        if owner_job.started_at is not None:
            notebook["home_job"] = home
        else:
            notebook.pop("home_job", None)
        spec["notebook"] = notebook
        restarted = services.clone_job(job=job, actor=actor, owner=job.owner, spec=spec)
        if "home_job" in notebook:
            services.record_event(
                restarted,
                reason="RestartedWithFiles",
                message=note("homeFrom", actor=str(actor), job=home),
            )
        return restarted


def delete_home(*, job: Job, actor: User) -> int:
    """Delete the home volume ``job`` mounts: mark its chain and ask the relay to remove the
    volume. Returns how many jobs were marked (0 when it was already deleted)."""
    with transaction.atomic():
        owner_job, home = _lock_home(job)
        if owner_job.home_deleted_at is not None:
            return 0
        active = _active(home)
        if active is not None:
            raise HomeConflict(
                _("Notebook #{job} ({state}) uses this home volume; stop it first.").format(
                    job=active.pk, state=state_word(active.state)
                )
            )
        return _mark_deleted(
            owner_job, home, timezone.now(), note("homeDeletedBy", actor=str(actor))
        )


def _mark_deleted(owner_job: Job, home: int, now: datetime, why: Note) -> int:
    """Mark every notebook of the chain, with an event on each that says why its files are
    gone, and leave the cluster call to the relay."""
    chain = list(sharing(home).filter(home_deleted_at__isnull=True))
    for member in chain:
        services.record_event(member, reason="HomeDeleted", message=why)
    Job.objects.filter(pk__in=[member.pk for member in chain]).update(home_deleted_at=now)
    if owner_job.started_at is not None:  # one that never ran made no volume
        services.enqueue_outbox(owner_job, OutboxAction.DELETE_HOME)
    return len(chain)


def expire(now: datetime | None = None, days: int | None = None) -> int:
    """Delete the homes whose last notebook ended more than ``days`` ago (the setting
    ``NOTEBOOK_HOME_RETENTION_DAYS``; 0 keeps them). Returns how many homes were deleted."""
    now = now or timezone.now()
    days = settings.NOTEBOOK_HOME_RETENTION_DAYS if days is None else days
    if days <= 0:
        return 0
    cutoff = now - timedelta(days=days)
    candidates = (
        Job.objects.filter(
            kind=JobKind.NOTEBOOK,
            state__in=TERMINAL,
            home_deleted_at__isnull=True,
            finished_at__lt=cutoff,
        )
        .filter(Q(spec__notebook__home_job__isnull=True))
        .values_list("pk", flat=True)
    )
    deleted = 0
    for home in list(candidates):
        with transaction.atomic():
            owner_job = Job.objects.select_for_update(of=("self",)).get(pk=home)
            if owner_job.home_deleted_at is not None or _active(home) is not None:
                continue
            last = sharing(home).aggregate(last=Max("finished_at"))["last"]
            if last is None or last >= cutoff:
                continue
            _mark_deleted(owner_job, home, now, note("homeExpired", days=days))
            deleted += 1
    return deleted
