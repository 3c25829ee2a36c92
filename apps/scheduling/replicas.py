"""Admit the replicas an autoscaler adds to a running service, and release them again.

A service is admitted with its base replica count (the job spec's ``replicas``, its minimum)
like any job. Replicas the autoscaler wants beyond that are admitted here, the same way: the
pure core places them on a snapshot taken under the admission lock (quota, borrowing limit,
capacity, holds and health all apply), the placement is re-checked against the rows, and each
admitted replica gets an ``Allocation`` marked ``extra``. So a scale-up can never take a
tenant past its quota or put pods where the scheduler counted nothing; when the core places
fewer than asked, the caller gets the count admitted and the core's reason.

A rolling update's surge replicas (pods of the new revision started before old ones stop)
are admitted the same way and held as ``surge`` allocations until the rollout ends: they count
against the quota and the node's room like any replica, but not as one of the service's.

Extras are never preempted on their own and never preempt: they carry the job's priority,
but asking for one only uses free room (no preemption, no holds), so a burst of one service
cannot evict another tenant's work. Released replicas are billed from their own admission.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from django.db import transaction

from apps.accounting.services import close_extra_segments
from apps.jobs.models import HOLDING, Allocation, Job
from apps.jobs.notes import Said, note
from apps.scheduling import core, snapshot
from apps.scheduling.apply import Ledger
from apps.scheduling.models import SchedulerLock

# Only free room: an extra replica is capacity on demand, not a claim worth evicting for.
EXTRA_POLICY = core.Policy(gang=False, preemption=False, delay_scheduling=False)


@dataclass(frozen=True)
class Admitted:
    replicas: int  # replicas the job holds devices for now (base + extra)
    # Why fewer than asked, in the core's words or the platform's notes (empty when all fit).
    short: Said = field(default_factory=lambda: Said(""))


def base_replicas(job: Job) -> int:
    return sum(int(g.get("replicas", 1)) for g in job.spec.get("replica_groups", []))


def held_replicas(job: Job) -> int:
    return Allocation.objects.filter(job=job, surge=False).count()


def held_surge(job: Job) -> int:
    return Allocation.objects.filter(job=job, surge=True).count()


# Surge rows' replica indices, far from the service's own (0, 1, ... in admission order).
SURGE_INDEX = 1_000_000


def _lock() -> None:
    SchedulerLock.objects.select_for_update().get_or_create(name="admission")


@transaction.atomic
def admit_replicas(job: Job, want: int, now: datetime) -> Admitted:
    """Grow the job's admitted replicas toward ``want`` (never shrinks). Takes the admission
    lock only to grow, so calling it every tick with nothing to add costs one count query."""
    return _grow(job, want, now, surge=False)


@transaction.atomic
def admit_surge(job: Job, want: int, now: datetime) -> Admitted:
    """Hold room for up to ``want`` surge replicas of a rolling update (never shrinks);
    ``replicas`` is the surge room held."""
    return _grow(job, want, now, surge=True)


def _grow(job: Job, want: int, now: datetime, *, surge: bool) -> Admitted:
    held = held_surge if surge else held_replicas
    have = held(job)
    if want <= have:
        return Admitted(have)
    _lock()
    job = Job.objects.select_related("tenant", "pool__cluster").get(pk=job.pk)
    have = held(job)
    if want <= have:
        return Admitted(have)
    first = SURGE_INDEX + have if surge else have
    added, short = _admit_more(job, want - have, first, now, surge=surge)
    return Admitted(have + added, short)


def _admit_more(job: Job, count: int, first_index: int, now: datetime, *, surge: bool
                ) -> tuple[int, Said]:  # fmt: skip
    """Place ``count`` more replicas of the job's group on free room (under the lock)."""
    if job.state not in HOLDING or held_replicas(job) == 0:
        return 0, Said.note(note("serviceNotRunning"))
    inputs = snapshot.build(now)
    group = snapshot.replica_groups(job.spec)[0]
    extra = core.PendingJob(
        job_id=f"{job.pk}+",  # not the job's own id: the snapshot runs that one already
        tenant=job.tenant.slug,
        pool=inputs.pool_keys[job.pool_id],
        priority=job.priority,
        groups=(replace(group, replicas=count),),
        submit_time=now,
    )
    decisions = core.schedule(inputs.snapshot, [extra], EXTRA_POLICY, now)
    placed = [r for p in decisions.placements for r in p.replicas]
    short = next(
        (Said(p.message, p.text.as_json()) for p in decisions.pending),
        Said.note(note("noRoom")),
    )
    if not placed:
        return 0, short
    placement = decisions.placements[0]
    why = Ledger().conflict(placement, job.tenant_id, job.pool_id)
    if why:
        return 0, Said.note(why)
    Allocation.objects.bulk_create(
        Allocation(
            job=job,
            node_id=int(r.node_id),
            replica_group=r.group,
            replica_index=first_index + i,
            accelerator_model=placement.accelerator_model,
            devices=[] if r.share_milli else list(r.devices),
            shares=[[r.devices[0], r.share_milli]] if r.share_milli else [],
            cpu_milli=r.cpu_milli,
            memory_mib=r.memory_mib,
            created_at=now,
            extra=True,
            surge=surge,
        )
        for i, r in enumerate(placed)
    )
    return len(placed), Said("") if len(placed) >= count else short


@transaction.atomic
def release_replicas(job: Job, keep: int, now: datetime) -> int:
    """Give back extra replicas beyond ``keep`` (never the base ones): call it once the
    cluster runs no more than ``keep`` replicas. Returns how many were released."""
    keep = max(keep, base_replicas(job))
    gone = Allocation.objects.filter(job=job, extra=True, surge=False, replica_index__gte=keep)
    if not gone.exists():
        return 0
    _lock()
    close_extra_segments(job=job, allocations=gone, ended_at=now, reason="ScaledDown")
    released, _ = gone.delete()
    return int(released)


@transaction.atomic
def release_surge(
    job: Job,
    now: datetime,
    *,
    moves: Sequence[tuple[int, int]] = (),
    ids: Sequence[int] | None = None,
) -> int:
    """Give back the surge room of a finished rollout (``ids``, or all of it). A move
    ``(slot, surge slot)`` first gives the slot the surge slot's node and devices, where the
    Deployment put one of the new pods (``rollout.plan_surge_release``). Billed like extras."""
    _lock()
    surge = Allocation.objects.filter(job=job, surge=True)
    if ids is not None:
        surge = surge.filter(pk__in=list(ids))
    rows = {a.pk: a for a in Allocation.objects.filter(job=job)}
    for slot_id, surge_id in moves:
        slot, room = rows.get(slot_id), rows.get(surge_id)
        if slot is None or room is None or slot.surge or not room.surge:
            continue
        Allocation.objects.filter(pk=slot_id).update(
            node_id=room.node_id,
            devices=room.devices,
            shares=room.shares,
            cpu_milli=room.cpu_milli,
            memory_mib=room.memory_mib,
            accelerator_model=room.accelerator_model,
        )
    if not surge.exists():
        return 0
    close_extra_segments(job=job, allocations=surge, ended_at=now, reason="RolloutDone")
    released, _ = surge.delete()
    return int(released)
