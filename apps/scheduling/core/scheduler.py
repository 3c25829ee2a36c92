"""The scheduling cycle: ``schedule(snapshot, queue, policy, now) -> Decisions``.

Order of the queue: priority P0 first; inside a priority, starving large jobs first (so their
holds are in place before smaller jobs of the same priority look at the cluster), then the
tenant with the smallest dominant share of its guarantee (fair share), then submit time.
With ``Policy.tenant_first`` the same, by priority band (P0-P2, P3, P4/P5) instead of by
priority: inside a band, starving large jobs by priority first, then the tenant with the
smallest share, and a tenant's own jobs by priority, then submit time.
A job that does not fit is skipped, not waited for (backfill), unless a hold protects the
capacity it waits for.

For each job: place it (gang, topology, binpack, quota); else, if it is P0-P2, try to make
room by preemption; else, with gang off, place what fits; else, if it is starving, hold nodes
for it; and give the reason it stays pending.
"""

from __future__ import annotations

import gc
import heapq
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import NamedTuple

from .delay import (
    INF,
    choose_hold,
    drain_of,
    hold_expiry,
    is_starving,
    starvation_threshold_for,
    topology_patience_for,
)
from .fragmentation import fragmentation_of
from .index import ClassIndex, ClassKey, ClusterState, NodeState
from .model import (
    HIGHEST_PREEMPTOR,
    LOWEST_VICTIM,
    ClusterSnapshot,
    Decisions,
    PendingCode,
    PendingJob,
    PendingReason,
    Placement,
    Policy,
    Preemption,
    PreemptionKind,
    Reservation,
    Tier,
    TopologyMode,
)
from .placement import Placed, place_cpu_only, place_in_class, place_partial, placement_tiers
from .plan import Planner, Slot, plannable
from .preemption import apply_victims, find_victims, may_preempt
from .quota import QuotaKey, fmt_devices
from .reasons import capacity, fmt_duration, held_until, hold_drain, no_match, over_max_wait
from .request import Request, build_request, compatible_classes
from .scoring import SCORED, place_scored
from .text import EMPTY, Items, Text, phrase, say
from .topology import could_ever_fit, tier_of


def _band(priority: int) -> int:
    """Priority band: 0 for P0-P2 (they may preempt), 1 for P3, 2 for P4/P5 (victims)."""
    if priority <= HIGHEST_PREEMPTOR:
        return 0
    return 2 if priority >= LOWEST_VICTIM else 1


def _queue_order(req: Request) -> tuple[int, datetime, str]:
    """Order inside a group of the queue (and inside a tenant): priority, then submit time."""
    return req.job.priority, req.job.submit_time, req.job.job_id


class _QuotaHold(NamedTuple):
    """A starving job that keeps its tenant's quota room in a pool (see ``Scheduler``)."""

    job_id: str
    priority: int
    devices: int  # whole devices it needs
    # kept while it waits for nodes, not for room: only the room it needs is kept
    # (``Policy.keep_room_while_held``), milli-devices, in the models it may run on
    room: int = 0
    models: frozenset[str] = frozenset()


@dataclass(slots=True)
class _Room:
    """The quota room a planned gang (``Policy.plan_large``) needs at its start: its
    tenant's long work may take only ``spare`` milli-devices of it meanwhile."""

    start: float  # POSIX seconds
    spare: int
    order: int  # the gang's place in the plan


@contextmanager
def _gc_paused(pause: bool) -> Iterator[None]:
    """Pause the cyclic garbage collector for the duration of a build or a cycle.

    The index allocates a few objects per node and a cycle a few per job; with the collector
    on, generation-2 collections walk the whole heap (snapshot included) again and again, so
    the cost per decision grows with the cluster: measured 2.5x slower at 100,000 GPUs. The
    core creates little cyclic garbage, and it is collected as soon as the collector resumes.
    """
    if not pause or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


class Scheduler:
    """One cycle. Building it indexes the snapshot; ``run`` decides. Use each instance once.

    ``source`` is a snapshot, or a state kept across cycles (``on_state``, which also passes
    the previous cycle's ``reservations``: a snapshot carries its own).
    """

    def __init__(
        self,
        source: ClusterSnapshot | ClusterState,
        policy: Policy,
        now: datetime,
        *,
        pause_gc: bool = True,
        reservations: Sequence[Reservation] = (),
        quiet: bool = False,
    ) -> None:
        if isinstance(source, ClusterState):
            state = source
            state.begin_cycle()
        else:
            with _gc_paused(pause_gc):
                state = ClusterState(source, quotas_enabled=policy.quotas)
            reservations = source.reservations
        self._setup(state, policy, now, reservations, pause_gc)
        self._quiet = quiet

    @classmethod
    def on_state(
        cls,
        state: ClusterState,
        policy: Policy,
        now: datetime,
        reservations: Sequence[Reservation] = (),
        *,
        pause_gc: bool = True,
        quiet: bool = False,
    ) -> Scheduler:
        """A cycle on a state kept across cycles (see ``LiveCluster``) instead of a snapshot.

        ``quiet``: pending reasons carry their code but no message (a simulator decides
        millions of pending jobs and reads none of them); decisions are the same.
        """
        return cls(state, policy, now, pause_gc=pause_gc, reservations=reservations, quiet=quiet)

    def _setup(
        self,
        state: ClusterState,
        policy: Policy,
        now: datetime,
        reservations: Sequence[Reservation],
        pause_gc: bool,
    ) -> None:
        self.policy = policy
        self.now = now
        self._pause_gc = pause_gc
        self.state = state
        self._prior = {r.job_id: r for r in reservations if r.expires_at > now}
        self._placements: list[Placement] = []
        self._preemptions: list[Preemption] = []
        self._reservations: list[Reservation] = []
        self._pending: list[PendingReason] = []
        self._blocked: dict[str, str] = {}  # pool -> job that blocks it (backfill off)
        # Negative caches, valid until the next change of the state: in a busy cluster many
        # queued jobs have the same shape, and once one did not fit, the next cannot either.
        self._nofit: set[tuple[object, ...]] = set()
        self._novictims: set[tuple[object, ...]] = set()
        self._holders: set[str] = set()
        # how long work may run on the nodes of each hold of this cycle and still leave
        # them before their holder could start (``Policy.hold_backfill``)
        self._budgets: list[timedelta] = []
        # (tenant, pool) -> a starving job that only its own tenant's quota blocks; that
        # tenant's other large jobs (``large_job_devices``) of its priority or lower wait
        # too, so the room its finishing jobs free goes to the starving job. Smaller jobs
        # are not held back: they are many and short, and holding them back for hours cost
        # far more waiting than it gave the large job. (With
        # ``Policy.lend_quota_room_to_preemptible`` the room of a very large gang goes only
        # to work it can take back by preemption or that ends soon: ``_quota_held_from``.)
        self._quota_holds: dict[tuple[str, str], _QuotaHold] = {}
        self._placed_ids: set[str] = set()
        self._tight = False  # the job in hand only takes its tightest tier (patience)
        # quiet cycles: (shape, tenant, patient) -> code of a job that failed since the last
        # change of the state; the job in hand's key
        self._fastfail: dict[tuple[object, ...], PendingCode] = {}
        self._fast_key: tuple[object, ...] | None = None
        self._used = False
        # ``Policy.plan_large``: the planned gangs of this cycle, their reservations, and per
        # quota key the room each planned gang needs at its start
        self._slots: dict[str, Slot] = {}
        self._planned: list[Reservation] = []
        self._rooms: dict[QuotaKey, list[_Room]] = {}
        self._deadlines = {
            r.job_id: r.deadline.timestamp() for r in reservations if r.deadline is not None
        }

    # --------------------------------------------------------------- ordering

    def run(self, queue: Sequence[PendingJob]) -> Decisions:
        if self._used:
            raise RuntimeError("a Scheduler decides one cycle; build a new one per snapshot")
        self._used = True
        with _gc_paused(self._pause_gc):
            return self._run(queue)

    def _run(self, queue: Sequence[PendingJob]) -> Decisions:
        # The groups served one after the other: each priority, or with
        # ``Policy.tenant_first`` each priority band, whose tenants take turns by share.
        by_band = self.policy.tenant_first and self.policy.fair_share
        levels: dict[int, list[Request]] = {}
        seen: set[str] = set()
        for job in queue:
            if job.job_id in seen:
                self._pend(job, PendingCode.INVALID, say("duplicateId"))
                continue
            seen.add(job.job_id)
            if job.job_id in self.state.running:
                self._pend(job, PendingCode.INVALID, say("alreadyRunning"))
                continue
            if job.after:
                # Not a candidate yet: it neither takes room nor holds nodes nor counts in
                # its tenant's share until the jobs before it have succeeded.
                self._pend(job, PendingCode.AFTER, say("afterJobs", jobs=Items(job.after)))
                continue
            req = self.state.request_for(job, build_request)
            if isinstance(req, Text):
                self._pend(job, PendingCode.INVALID, req)
                continue
            levels.setdefault(_band(job.priority) if by_band else job.priority, []).append(req)
        if self.policy.plan_large:
            for req in self._plan([r for level in levels.values() for r in level]):
                self._process(req)
            levels = {
                k: [r for r in level if r.job.job_id not in self._slots]
                for k, level in levels.items()
            }
        for key in sorted(levels):
            level = levels[key]
            starving = [r for r in level if is_starving(r, self.policy, self.now)]
            starving.sort(key=_queue_order)
            for req in starving:
                self._process(req)
            ids = {r.job.job_id for r in starving}
            self._run_level([r for r in level if r.job.job_id not in ids])
        return Decisions(
            placements=tuple(self._placements),
            preemptions=tuple(self._preemptions),
            reservations=tuple(self._planned + self._reservations),
            pending=tuple(self._pending),
            fragmentation=fragmentation_of(self.state, self.policy.fragmentation_replica_size),
            warnings=tuple(self.state.warnings),
        )

    def _run_level(self, level: list[Request]) -> None:
        level.sort(key=_queue_order)
        if not self.policy.fair_share:
            for req in level:
                self._process(req)
            return
        # Dominant-resource fair share: always serve the (tenant, pool) whose usage is the
        # smallest fraction of its guarantee. A share only changes when that tenant gets
        # something (or loses a victim), so stale heap entries are re-checked when popped.
        queues: dict[tuple[str, str], deque[Request]] = {}
        for req in level:
            queues.setdefault((req.job.tenant, req.job.pool), deque()).append(req)
        share = self.state.ledger.share
        heap = [
            (share(*key), q[0].job.submit_time, q[0].job.job_id, key) for key, q in queues.items()
        ]
        heapq.heapify(heap)
        while heap:
            value, submit, job_id, key = heapq.heappop(heap)
            now_value = share(*key)
            if now_value != value:
                heapq.heappush(heap, (now_value, submit, job_id, key))
                continue
            q = queues[key]
            self._process(q.popleft())
            if q:
                heapq.heappush(heap, (share(*key), q[0].job.submit_time, q[0].job.job_id, key))

    # -------------------------------------------------------------- one job

    def _process(self, req: Request) -> None:
        job, st, policy = req.job, self.state, self.policy
        if not policy.backfill and job.pool in self._blocked:
            blocker = self._blocked[job.pool]
            self._pend(job, PendingCode.BLOCKED, say("blockedBehind", job=blocker, pool=job.pool))
            return
        if req.has_shares and not policy.sharing:
            self._pend(job, PendingCode.SHARING_DISABLED, say("sharingDisabled"))
            return
        quota_hold = self._quota_holds.get((job.tenant, job.pool))
        if quota_hold is not None and self._quota_held_from(req, quota_hold):
            self._pend(
                job,
                PendingCode.QUOTA,
                say(
                    "quotaKeptStarving",
                    tenant=job.tenant,
                    pool=job.pool,
                    job=quota_hold.job_id,
                    priority=quota_hold.priority,
                ),
            )
            return
        if self._rooms and self._room_kept_from(req):
            self._pend(
                job,
                PendingCode.QUOTA,
                say("quotaKeptPlanned", tenant=job.tenant, pool=job.pool),
            )
            return
        self._fast_key = None
        # this cycle's holds so far (none is added before this job is decided)
        backfills = self._backfills(job)
        # Quiet cycles: a job of the same shape, tenant and topology patience failed and
        # nothing changed since, so this one fails the same way (starving jobs hold nodes:
        # never skipped).
        if (
            self._quiet
            and job.job_id not in self._holders
            and not is_starving(req, policy, self.now)
        ):
            patient = job.topology.mode == TopologyMode.SOFT and (
                self.now - job.submit_time < topology_patience_for(req.total_whole, policy)
            )
            key: tuple[object, ...] = (req.shape, job.tenant, patient, backfills)
            code = self._fastfail.get(key)
            if code is not None:
                self._pend(job, code, EMPTY)
                return
            self._fast_key = key
        scored = policy.packing in SCORED and req.total_replicas == 1
        if not req.needs_accelerator:
            if scored:
                cpu_classes = list(st.pool_classes.get(job.pool, ()))
                hit = place_scored(st, cpu_classes, req, policy)
                if hit is not None:
                    self._commit(req, "", hit[1])
                    return
            placed_cpu = place_cpu_only(st, req)
            if placed_cpu is not None:
                self._commit(req, "", placed_cpu)
                return
            d = req.main
            self._fail(
                req,
                PendingCode.RESOURCES,
                say("cpuShortEvery", pool=job.pool, cpu=d.cpu, mem=d.mem, group=d.name),
            )
            return
        classes = compatible_classes(st, req)
        if not classes:
            self._fail(req, PendingCode.NO_MATCH, no_match(st, req))
            return
        quota_fail: dict[ClassKey, Text] = {}
        tight = (
            policy.topology
            and job.topology.mode == TopologyMode.SOFT
            and req.total_replicas > 1
            and (
                self.now - job.submit_time < topology_patience_for(req.total_whole, policy)
                or self._waits_for_hold(req)
            )
        )
        self._tight = tight
        shape: tuple[object, ...] | None = None
        if job.job_id not in self._holders:
            shape = (req.shape, "tight") if tight else req.shape
            if backfills:
                # it may use some held nodes that jobs of its shape declared longer may not
                shape = (shape, backfills)
        if scored:
            self._place_scored(req, classes, quota_fail, shape)
            if job.job_id in self._placed_ids:
                return
        for cls in [] if scored else classes:
            if shape is not None and (cls.key, shape) in self._nofit:
                reason = st.ledger.check((job.tenant, job.pool, cls.model), req.accel_milli)
                if reason:
                    quota_fail[cls.key] = reason
                continue
            res = place_in_class(st, cls, req, policy, tight=tight)
            if isinstance(res, Placed):
                self._commit(req, cls.model, res)
                return
            if isinstance(res, Text):
                quota_fail[cls.key] = res
            elif shape is not None:
                self._nofit.add((cls.key, shape))
        note = EMPTY
        if may_preempt(job, policy):
            for cls in classes:
                vkey = (cls.key, shape, job.tenant)
                if shape is not None and vkey in self._novictims:
                    continue
                if self._preempt(req, cls):
                    return
                if shape is not None:
                    self._novictims.add(vkey)
            note = say("noPreemptRoom")
        code, why = self._explain(req, classes, quota_fail)
        why += note
        if not policy.gang and job.topology.mode != TopologyMode.HARD:
            for cls in classes:
                if cls.key in quota_fail and len(quota_fail) < len(classes):
                    continue
                partial = place_partial(st, cls, req, policy)
                if partial.replicas:
                    self._commit(req, cls.model, partial, partial=True)
                    self._pend(
                        job,
                        PendingCode.PARTIAL,
                        say(
                            "gangOff",
                            placed=len(partial.replicas),
                            total=req.total_replicas,
                            rest=why,
                        ),
                    )
                    return
        slot = self._slots.get(job.job_id)
        if slot is not None:
            if code != PendingCode.QUOTA:
                code = PendingCode.RESERVED
            if not self._quiet:
                wait = timedelta(seconds=max(0.0, slot.start - self.now.timestamp()))
                why += say("plannedStart", wait=fmt_duration(wait), nodes=len(slot.nodes))
            self._fail(req, code, why)
            return
        starving = is_starving(req, policy, self.now)
        quota_hold = self._quota_hold_for(req, classes, code, starving)
        if quota_hold is not None:
            self._quota_holds.setdefault((job.tenant, job.pool), quota_hold)
        hold_anyway = (
            starving
            and code == PendingCode.QUOTA
            and policy.hold_while_quota_blocked
            and self._own_room_covers(req, classes)
        )
        if (starving and code != PendingCode.QUOTA) or hold_anyway:
            held = self._hold(req, classes, {} if hold_anyway else quota_fail)
            if held is not None:
                code = PendingCode.RESERVED
                why += held_until(len(held.node_ids), held.expires_at)
                if not self._quiet:
                    why += hold_drain(self.state, held.node_ids, self.now)
        self._fail(req, code, why)

    def _place_scored(
        self,
        req: Request,
        classes: list[ClassIndex],
        quota_fail: dict[ClassKey, Text],
        shape: tuple[object, ...] | None,
    ) -> None:
        """One-replica jobs under a scored packing: the best node over every class."""
        st, job = self.state, req.job
        open_classes = []
        for cls in classes:
            reason = st.ledger.check((job.tenant, job.pool, cls.model), req.accel_milli)
            if reason:
                quota_fail[cls.key] = reason
            else:
                open_classes.append(cls)
        key = ("scored", shape)
        if not open_classes or (shape is not None and key in self._nofit):
            return
        hit = place_scored(st, open_classes, req, self.policy)
        if hit is None:
            if shape is not None:
                self._nofit.add(key)
            return
        cls, placed = hit
        st.charge((job.tenant, job.pool, cls.model), req.accel_milli)
        self._commit(req, cls.model, placed)

    def _explain(
        self, req: Request, classes: list[ClassIndex], quota_fail: dict[ClassKey, Text]
    ) -> tuple[PendingCode, Text]:
        open_classes = [c for c in classes if c.key not in quota_fail]
        if not open_classes:
            return PendingCode.QUOTA, quota_fail[classes[0].key]
        if self._quiet:
            return PendingCode.CAPACITY, EMPTY
        k = max(req.main.k, 1)
        best = max(open_classes, key=lambda c: (k <= c.max_devices, c.cap[min(k, c.max_devices)]))
        return capacity(self.state, best, req, self.policy, tight=self._tight)

    def _preempt(self, req: Request, cls: ClassIndex) -> bool:
        st, policy, job = self.state, self.policy, req.job

        def fits() -> bool:
            return isinstance(place_in_class(st, cls, req, policy, tight=self._tight), Placed)

        loosest = max(placement_tiers(cls, req, policy, tight=self._tight), default=None)
        victims = find_victims(
            st, cls, job, req.total_whole, req.accel_milli, fits, policy, req.whole_need, loosest
        )
        if not victims:
            return False
        mark = st.mark()
        kinds = apply_victims(st, victims, job, cls.model, req.accel_milli, policy)
        placed = (
            place_in_class(st, cls, req, policy, tight=self._tight) if kinds is not None else None
        )
        if kinds is None or not isinstance(placed, Placed):
            st.rollback(mark)
            return False
        for entry, kind in zip(victims, kinds, strict=True):
            victim = entry.job
            if kind == PreemptionKind.RECLAIM:
                why = phrase(
                    "reclaimedBy",
                    tenant=job.tenant,
                    job=job.job_id,
                    priority=job.priority,
                    victimTenant=victim.tenant,
                    model=cls.model,
                    pool=job.pool,
                )
            else:
                why = phrase(
                    "preemptedBy",
                    job=job.job_id,
                    priority=job.priority,
                    tenant=job.tenant,
                    devices=fmt_devices(req.accel_milli),
                    model=cls.model,
                    pool=job.pool,
                    victimPriority=victim.priority,
                )
            self._preemptions.append(
                Preemption(victim.job_id, victim.tenant, job.job_id, kind, why)
            )
            for alloc in entry.allocations:
                st.freed_by.setdefault(alloc.ns.idx, set()).add(victim.job_id)
        self._commit(req, cls.model, placed)
        return True

    def _quota_hold_for(
        self, req: Request, classes: list[ClassIndex], code: PendingCode, starving: bool
    ) -> _QuotaHold | None:
        """The quota room a job that did not start keeps from its tenant's later work: all
        of it when its own tenant's limit holds it back (starving, or past its threshold
        under ``Policy.quota_hold_until_start``); while it waits for nodes instead, only the
        room it needs (``Policy.keep_room_while_held``, gangs of ``large_patience_devices``
        or more). None: it keeps none."""
        policy, job = self.policy, req.job
        if not policy.quotas:
            return None
        if code == PendingCode.QUOTA:
            if starving or self._keeps_quota_room(req, classes):
                return _QuotaHold(job.job_id, job.priority, req.total_whole)
            return None
        if (
            policy.keep_room_while_held
            and req.total_whole >= policy.large_patience_devices
            and (starving or self._keeps_quota_room(req, classes))
            and self._room_could_suffice(req, classes)
        ):
            models = frozenset(c.model for c in classes)
            return _QuotaHold(job.job_id, job.priority, req.total_whole, req.accel_milli, models)
        return None

    def _quota_held_from(self, req: Request, hold: _QuotaHold) -> bool:
        """Whether a job of the holder's tenant and pool stays out of the quota room kept
        for the holder: higher-priority work never does."""
        policy, job = self.policy, req.job
        if hold.job_id == job.job_id or job.priority < hold.priority:
            return False
        if hold.room:
            # Only work that would leave the tenant less than the holder's room, in a model
            # the holder may run on.
            ledger = self.state.ledger
            if all(
                cls.model not in hold.models
                or ledger.check((job.tenant, job.pool, cls.model), req.accel_milli + hold.room)
                is None
                for cls in compatible_classes(self.state, req)
            ):
                return False
        if policy.lend_quota_room_to_preemptible and hold.devices >= policy.large_patience_devices:
            if job.priority >= LOWEST_VICTIM and hold.priority <= HIGHEST_PREEMPTOR:
                return False  # it can be preempted back
            short = job.expected_runtime is not None and (
                job.expected_runtime <= policy.quota_room_backfill
            )
            return not short
        return req.total_whole >= policy.large_job_devices

    def _keeps_quota_room(self, req: Request, classes: list[ClassIndex]) -> bool:
        """``Policy.quota_hold_until_start``: a large gang past its threshold keeps its
        tenant's quota room after its hold window, while the room could ever be enough."""
        policy, job = self.policy, req.job
        if not policy.quota_hold_until_start or req.total_whole < policy.large_patience_devices:
            return False
        if self.now - job.submit_time < starvation_threshold_for(req.total_whole, policy):
            return False
        return self._room_could_suffice(req, classes)

    def _room_could_suffice(self, req: Request, classes: list[ClassIndex]) -> bool:
        """Whether some class could ever host the job, within its tenant's limit there: else
        keeping quota room for it would hold the tenant's other work back for nothing."""
        job, ledger = req.job, self.state.ledger
        return any(
            ledger.limit((job.tenant, job.pool, c.model)) >= req.accel_milli
            and could_ever_fit(c, Tier.ANY, req.whole_need)
            for c in classes
        )

    def _own_room_covers(self, req: Request, classes: list[ClassIndex]) -> bool:
        """Whether the tenant's own lower-priority P4/P5 work could free the quota room the
        job lacks (so holding nodes while quota-blocked is not waste: preemption frees the
        room once the nodes drain)."""
        job, st = req.job, self.state
        if not may_preempt(job, self.policy):
            return False
        ledger = st.ledger
        shortfall = {
            cls.model: ledger.usage[key] + req.accel_milli - ledger.limit(key)
            for cls in classes
            for key in [(job.tenant, job.pool, cls.model)]
        }
        if any(short <= 0 for short in shortfall.values()):
            return True
        own: dict[str, int] = {}  # model -> milli of the tenant's work it may preempt
        for entry in st.running.values():
            v = entry.job
            if (
                v.tenant == job.tenant
                and v.pool == job.pool
                and v.preemptible
                and v.priority >= LOWEST_VICTIM
                and v.priority > job.priority
            ):
                for model, milli in entry.usage.items():
                    own[model] = own.get(model, 0) + milli
        return any(short <= own.get(model, 0) for model, short in shortfall.items())

    def _placeable_loosely(self, req: Request, cls: ClassIndex) -> bool:
        """Whether the job fits in ``cls`` now at any tier (a trial, rolled back)."""
        st = self.state
        mark = st.mark()
        res = place_in_class(st, cls, req, self.policy, tight=False)
        st.rollback(mark)
        return isinstance(res, Placed)

    def _waits_for_hold(self, req: Request) -> bool:
        """Past its topology patience, a gang still takes only its tightest tier while the
        nodes it held last cycle lie in that tier and are expected to be free within
        ``Policy.drain_wait`` (declared runtimes): it starts there when they drain rather
        than on scattered free nodes now. When it could start now elsewhere, only within
        ``Policy.placeable_drain_wait``."""
        policy = self.policy
        prior = self._prior.get(req.job.job_id)
        if not policy.drain_wait or prior is None or not prior.node_ids:
            return False
        st = self.state
        nodes = [st.nodes[n] for n in prior.node_ids if n in st.nodes]
        cls = nodes[0].cls if nodes else None
        if cls is None or len(nodes) != len(prior.node_ids):
            return False
        if any(ns.cls is not cls for ns in nodes):
            return False
        tightest = next(
            (t for t in (Tier.LEAF, Tier.SU, Tier.SPINE) if could_ever_fit(cls, t, req.whole_need)),
            Tier.ANY,
        )
        if tier_of(nodes) > tightest:
            return False
        drain = drain_of(st, nodes, self.now)
        if drain > policy.drain_wait.total_seconds():
            return False
        short = policy.placeable_drain_wait
        if short is None or drain <= short.total_seconds():
            return True
        return not self._placeable_loosely(req, cls)

    def _backfills(self, job: PendingJob) -> int:
        """On the nodes of how many of this cycle's holds ``job`` may run before they drain
        (``Policy.hold_backfill``): placement differs between jobs of one shape only by it."""
        runtime = job.expected_runtime
        if runtime is None or not self._budgets:
            return 0
        return sum(1 for budget in self._budgets if runtime <= budget)

    def _hold_budget(self, nodes: list[NodeState]) -> timedelta | None:
        """How long other work may run on ``nodes`` and still be gone when they are expected
        to drain for their holder (``Policy.hold_backfill``; None: no such work)."""
        if not self.policy.hold_backfill:
            return None
        drain = drain_of(self.state, nodes, self.now)
        return timedelta(seconds=drain) if 0 < drain < INF else None

    def _hold(
        self, req: Request, classes: list[ClassIndex], quota_fail: dict[ClassKey, Text]
    ) -> Reservation | None:
        if len(self._reservations) >= self.policy.max_holds:
            return None
        st, job = self.state, req.job
        open_classes = [c for c in classes if c.key not in quota_fail]
        open_classes.sort(key=lambda c: -c.cap[1])
        for cls in open_classes:
            nodes = choose_hold(st, cls, req, self._prior.get(job.job_id), self.now)
            if not nodes:
                continue
            budget = self._hold_budget(nodes)
            for ns in nodes:
                st.hold(ns, job.job_id, job.priority, budget)
            if budget is not None:
                self._budgets.append(budget)
            st.commit()
            self._changed()
            self._holders.add(job.job_id)
            expires = hold_expiry(job, self.policy, req.total_whole)
            waited = fmt_duration(self.now - job.submit_time)
            backfill = ""
            if budget is not None:
                backfill = f" (or to work declared to end within {fmt_duration(budget)})"
            reservation = Reservation(
                job_id=job.job_id,
                priority=job.priority,
                node_ids=tuple(ns.node.node_id for ns in nodes),
                expires_at=expires,
                reason=(
                    f"held for job {job.job_id} (P{job.priority}, {req.total_whole} "
                    f"{cls.model}) after {waited} waiting: free devices on these nodes go only "
                    f"to it or to higher-priority work{backfill} until {expires.isoformat()}"
                ),
            )
            self._reservations.append(reservation)
            return reservation
        return None

    # ------------------------------------------------------------------ plan

    def _plan(self, reqs: list[Request]) -> list[Request]:
        """``Policy.plan_large``: plan the large gangs of the queue (``plan.py``), hold the
        nodes of each planned start and note the quota room it needs; returns them in plan
        order, to be decided before the rest of the queue."""
        cands = [r for r in reqs if r.needs_accelerator and plannable(r, self.policy)]
        if not cands:
            return []
        st, now = self.state, self.now
        planner = Planner(st, self.policy, now)
        deadlines = planner.deadlines(cands, reqs, self._deadlines)
        slots = planner.plan(cands, deadlines)
        now_ts = now.timestamp()
        for order, slot in enumerate(slots):
            job = slot.req.job
            slot.order = order
            self._slots[job.job_id] = slot
            self._holders.add(job.job_id)
            budget = timedelta(seconds=slot.start - now_ts) if slot.start > now_ts else None
            for ns in slot.nodes:
                if ns.held_by is None:
                    st.hold(ns, job.job_id, -1, budget, job.tenant)
            if budget is not None:
                self._budgets.append(budget)
            if budget is not None and st.ledger.enabled:
                self._rooms.setdefault(slot.key, []).append(_Room(slot.start, slot.spare, order))
            deadline = slot.deadline
            target = datetime.fromtimestamp(deadline, now.tzinfo) if deadline < INF else None
            start = datetime.fromtimestamp(slot.start, now.tzinfo)
            self._planned.append(
                Reservation(
                    job_id=job.job_id,
                    priority=job.priority,
                    node_ids=tuple(ns.node.node_id for ns in slot.nodes),
                    expires_at=target if target is not None and target > start else start,
                    reason=(
                        f"planned start for job {job.job_id} (P{job.priority}, "
                        f"{slot.req.total_whole} {slot.cls.model}) at {start.isoformat()}: "
                        "free devices on these nodes go only to it or to work declared to "
                        "end before then"
                    ),
                    deadline=target,
                )
            )
        st.commit()
        self._changed()
        return [s.req for s in slots]

    def _room_kept_from(self, req: Request) -> bool:
        """Whether the job would take quota room that a gang of its tenant planned before
        it (any planned gang, for work that is not planned) needs at its start: it runs
        past that start and leaves less than the room spare then. Work the gang may
        preempt back (P4/P5) is not kept out, nor jobs smaller than ``large_job_devices``:
        they are many and short, and keeping them out cost them far more waiting than it
        gave the gang (as for delay-scheduling quota holds)."""
        job = req.job
        if job.priority >= LOWEST_VICTIM or req.total_whole < self.policy.large_job_devices:
            return False
        end, before = self._room_terms(req)
        for cls in compatible_classes(self.state, req):
            rooms = self._rooms.get((job.tenant, job.pool, cls.model))
            if not rooms or all(
                r.order >= before or end <= r.start or req.accel_milli <= r.spare for r in rooms
            ):
                return False
        return True

    def _room_terms(self, req: Request) -> tuple[float, float]:
        """When the job would end if it started now, and the plan order of the rooms it
        must leave (those before its own slot; every room for work that is not planned)."""
        runtime = req.job.expected_runtime
        end = INF if runtime is None else self.now.timestamp() + runtime.total_seconds()
        slot = self._slots.get(req.job.job_id)
        return end, INF if slot is None else float(slot.order)

    def _take_room(self, req: Request, model: str) -> None:
        job = req.job
        rooms = self._rooms.get((job.tenant, job.pool, model))
        if not rooms or job.priority >= LOWEST_VICTIM:
            return
        end, before = self._room_terms(req)
        for room in rooms:
            if room.order < before and end > room.start:
                room.spare -= req.accel_milli

    # ---------------------------------------------------------------- output

    def _commit(self, req: Request, model: str, placed: Placed, *, partial: bool = False) -> None:
        job = req.job
        freed = self.state.freed_by
        waits: set[str] = set()
        for ns in placed.nodes:
            waits |= freed.get(ns.idx, set())
        self._placements.append(
            Placement(
                job_id=job.job_id,
                tenant=job.tenant,
                pool=job.pool,
                accelerator_model=model,
                replicas=tuple(placed.replicas),
                tier=placed.tier,
                waits_for=tuple(sorted(waits)),
                partial=partial,
            )
        )
        self._placed_ids.add(job.job_id)
        if self._rooms:
            self._take_room(req, model)
        self.state.commit()
        self._changed()

    def _changed(self) -> None:
        self._fastfail.clear()
        self._nofit.clear()
        self._novictims.clear()

    def _fail(self, req: Request, code: PendingCode, why: Text) -> None:
        if self._fast_key is not None:
            self._fastfail[self._fast_key] = code
        if not self.policy.backfill:
            self._blocked.setdefault(req.job.pool, req.job.job_id)
        self._pend(req.job, code, why)

    def _pend(self, job: PendingJob, code: PendingCode, why: Text) -> None:
        if self._quiet:
            waited = job.max_wait is not None and self.now - job.submit_time > job.max_wait
            self._pending.append(PendingReason(job.job_id, code, EMPTY, over_max_wait=waited))
            return
        late = over_max_wait(job, self.now)
        if late:
            why += late
        self._pending.append(PendingReason(job.job_id, code, why, over_max_wait=late is not None))


def schedule(
    snapshot: ClusterSnapshot,
    queue: Sequence[PendingJob],
    policy: Policy,
    now: datetime,
    *,
    pause_gc: bool = True,
) -> Decisions:
    """Decide one scheduling cycle. Pure: the inputs are not changed."""
    return Scheduler(snapshot, policy, now, pause_gc=pause_gc).run(queue)
