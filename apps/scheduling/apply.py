"""Apply the core's decisions in one transaction, re-checked inside the admission lock.

The core ran on a snapshot that may be stale by the time we write: a job may have been
cancelled, another loop may have admitted work onto the same devices, or an admin may have
cut a quota. So every placement is re-validated here, under ``SchedulerLock``, against the
rows as they are now; anything that no longer holds is skipped and retried next cycle.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from itertools import count

from django.db import transaction

from apps.clusters.models import Node
from apps.core.events import publish_pools_changed
from apps.jobs import services as jobs
from apps.jobs.models import HOLDING, Allocation, Job, JobState, OutboxAction
from apps.jobs.notes import Note, note, scheduler_note
from apps.quotas.models import Quota
from apps.scheduling import core
from apps.scheduling.models import Hold, SchedulerLock

log = logging.getLogger("zhisuan.scheduler")
FULL = core.FULL_DEVICE_MILLI


@dataclass
class Applied:
    admitted: list[int] = field(default_factory=list)
    preempted: list[int] = field(default_factory=list)
    skipped: dict[int, str] = field(default_factory=dict)


class Ledger:
    """Device and quota usage as the database says now (inside the lock)."""

    def __init__(self) -> None:
        self.device_milli: defaultdict[tuple[int, int], int] = defaultdict(int)
        self.whole: set[tuple[int, int]] = set()
        self.usage: defaultdict[tuple[int, int, str], int] = defaultdict(int)
        rows = Allocation.objects.filter(job__state__in=HOLDING).values_list(
            "node_id", "devices", "shares", "accelerator_model", "job__tenant_id", "job__pool_id"
        )
        for node_id, devices, shares, model, tenant_id, pool_id in rows:
            self._add(node_id, devices, shares, (tenant_id, pool_id, model))
        self.limits = {
            (q.tenant_id, q.pool_id, q.accelerator_model): q.guarantee + q.borrow_limit
            for q in Quota.objects.all()
        }

    def _add(
        self, node_id: int, devices: list[int], shares: list[list[int]], key: tuple[int, int, str]
    ) -> None:
        for d in devices:
            self.whole.add((node_id, d))
            self.device_milli[(node_id, d)] += FULL
        for d, milli in shares:
            self.device_milli[(node_id, d)] += milli
        self.usage[key] += FULL * len(devices) + sum(m for _d, m in shares)

    def conflict(self, placement: core.Placement, tenant_id: int, pool_id: int) -> Note | None:
        want: defaultdict[tuple[int, int], int] = defaultdict(int)
        total = 0
        for r in placement.replicas:
            node = int(r.node_id)
            if r.share_milli:
                want[(node, r.devices[0])] += r.share_milli
                total += r.share_milli
            else:
                for d in r.devices:
                    if self.device_milli[(node, d)] or want[(node, d)]:
                        return note("deviceTaken", device=d, node=node)
                    want[(node, d)] += FULL
                total += FULL * len(r.devices)
        for key, milli in want.items():
            if key in self.whole or self.device_milli[key] + milli > FULL:
                return note("deviceTaken", device=key[1], node=key[0])
        if placement.accelerator_model:
            qkey = (tenant_id, pool_id, placement.accelerator_model)
            limit = self.limits.get(qkey)
            if limit is None or self.usage[qkey] + total > limit * FULL:
                return note("quotaChanged")
        return None

    def take(self, placement: core.Placement, tenant_id: int, pool_id: int) -> None:
        for r in placement.replicas:
            shares = [[r.devices[0], r.share_milli]] if r.share_milli else []
            devices = [] if r.share_milli else list(r.devices)
            self._add(
                int(r.node_id), devices, shares, (tenant_id, pool_id, placement.accelerator_model)
            )


def _preempt(decision: core.Preemption, applied: Applied) -> None:
    victim = Job.objects.filter(pk=int(decision.victim_job_id), state__in=HOLDING).first()
    if victim is None:
        return
    on_cluster = victim.state in (JobState.DISPATCHING, JobState.RUNNING)
    try:
        jobs.transition(
            victim,
            JobState.PREEMPTED,
            reason="Preempted",
            message=scheduler_note(decision.reason),
            extra={"attempt": victim.attempt + 1},
        )
    except jobs.StaleState:
        return
    if on_cluster:
        jobs.enqueue_outbox(victim, OutboxAction.DELETE)
    else:
        # Never reached the cluster: straight back to the queue, priority kept.
        jobs.transition(victim, JobState.QUEUED, reason="Requeued", message=note("afterPreemption"))
    applied.preempted.append(victim.pk)


def _admit(
    placement: core.Placement,
    ledger: Ledger,
    pool_ids: dict[str, int],
    now: datetime,
    applied: Applied,
) -> None:
    job_id = int(placement.job_id)
    job = Job.objects.select_related("tenant").filter(pk=job_id, state=JobState.QUEUED).first()
    if job is None:
        applied.skipped[job_id] = "no longer queued"
        return
    why = ledger.conflict(placement, job.tenant_id, pool_ids[placement.pool])
    if why:
        applied.skipped[job_id] = why.text
        return
    try:
        jobs.transition(
            job,
            JobState.ADMITTED,
            reason="Admitted",
            message=note(
                "placed",
                nodes=len({r.node_id for r in placement.replicas}),
                tier=placement.tier.name.lower(),
            ),
            extra={
                "admitted_at": now,
                "waiting_for_jobs": False,  # its predecessors succeeded since the last settle
                "pending_code": "",
                "pending_message": "",
                "pending_detail": [],
            },
        )
    except jobs.StaleState:
        applied.skipped[job_id] = "changed concurrently"
        return
    ledger.take(placement, job.tenant_id, job.pool_id)
    Allocation.objects.bulk_create(
        Allocation(
            job=job,
            node_id=int(r.node_id),
            replica_group=r.group,
            replica_index=r.replica_index,
            accelerator_model=placement.accelerator_model,
            devices=[] if r.share_milli else list(r.devices),
            shares=[[r.devices[0], r.share_milli]] if r.share_milli else [],
            cpu_milli=r.cpu_milli,
            memory_mib=r.memory_mib,
        )
        for r in placement.replicas
    )
    jobs.enqueue_outbox(job, OutboxAction.APPLY)
    applied.admitted.append(job_id)


def _record_pending(decisions: core.Decisions) -> None:
    """Why each job still waits, and its place in the order the core considered the queue.
    A job waiting for others to succeed (code ``after``) has no place: it is not competing.

    Only rows whose values changed are written: in a steady queue a cycle writes nothing."""
    places = count(1)
    order = {
        int(p.job_id): (None if p.code == core.PendingCode.AFTER else next(places), p)
        for p in decisions.pending
    }
    current = Job.objects.filter(pk__in=order, state=JobState.QUEUED).values_list(
        "pk", "pool_id", "queue_position", "pending_code", "pending_message"
    )
    changed: list[Job] = []
    for pk, pool_id, position, code, message in current:
        new_position, reason = order[pk]
        new = (new_position, reason.code.value, reason.message[:500])
        # The detail is written with the message it says in other words: comparing the
        # message is enough.
        if (position, code, message) != new:
            changed.append(
                Job(
                    pk=pk,
                    queue_position=new[0],
                    pending_code=new[1],
                    pending_message=new[2],
                    pending_detail=reason.text.as_json(),
                )
            )
        if code != new[1]:
            publish_pools_changed(pool_id)  # the topology's queue is counted by reason
    # Informational fields only: bulk_update never touches ``state``.
    Job.objects.bulk_update(
        changed,
        ["queue_position", "pending_code", "pending_message", "pending_detail"],
        batch_size=200,
    )


def _record_holds(decisions: core.Decisions) -> None:
    # The holds of this cycle replace every other (expired ones and those of jobs that left
    # the queue included): the core only reserves for queued jobs it still wants to hold for.
    before = {
        job_id: (pool_id, sorted(node_ids))
        for job_id, pool_id, node_ids in Hold.objects.values_list(
            "job_id", "job__pool_id", "node_ids"
        )
    }
    after = {int(r.job_id): sorted(int(n) for n in r.node_ids) for r in decisions.reservations}
    for job_id, (pool_id, node_ids) in before.items():
        if after.get(job_id) != node_ids:
            publish_pools_changed(pool_id)  # the topology outlines held nodes
    if new := set(after) - set(before):
        publish_pools_changed(*Job.objects.filter(pk__in=new).values_list("pool_id", flat=True))
    keep = []
    for r in decisions.reservations:
        Hold.objects.update_or_create(
            job_id=int(r.job_id),
            defaults={
                "priority": r.priority,
                "node_ids": [int(n) for n in r.node_ids],
                "expires_at": r.expires_at,
                "reason": r.reason[:300],
            },
        )
        keep.append(int(r.job_id))
    Hold.objects.exclude(job_id__in=keep).delete()


@transaction.atomic
def apply(decisions: core.Decisions, pool_ids: dict[str, int], now: datetime) -> Applied:
    SchedulerLock.objects.select_for_update().get_or_create(name="admission")
    # Lock the nodes touched, in a fixed order, so health actions (cordon) serialise with us.
    touched = sorted({int(r.node_id) for p in decisions.placements for r in p.replicas})
    list(Node.objects.select_for_update().filter(pk__in=touched).order_by("pk").values_list("pk"))
    applied = Applied()
    for preemption in decisions.preemptions:
        _preempt(preemption, applied)
    ledger = Ledger()
    for placement in decisions.placements:
        if placement.partial:
            continue  # gang is on in the product; a partial placement is never admitted
        _admit(placement, ledger, pool_ids, now, applied)
    _record_pending(decisions)
    _record_holds(decisions)
    if applied.skipped:
        log.info("admission skipped %d placement(s): %s", len(applied.skipped), applied.skipped)
    return applied
