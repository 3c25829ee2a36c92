"""Planned starts for large gangs (``Policy.plan_large``): a reservation plan in time.

Delay-scheduling holds (``delay.py``) keep nodes *now* for a few starving gangs, and each
hold is chosen alone: two large gangs drain the same nodes, a higher-priority job takes
held nodes and the hold moves, and a gang whose window ends loses its place. With declared
runtimes the scheduler knows when every node will be free, so it can do what batch
schedulers call conservative backfilling (Mu'alem and Feitelson, IEEE TPDS 2001): every
large gang gets a start time and the nodes it will start on, one gang after the other, each
on the nodes that are free soonest once the gangs before it have taken theirs; other work
runs on those nodes only if it is declared to end before that start.

Order: each gang's *fair-share target*, the time it would start if its tenant received its
guaranteed share of the devices that running jobs free (``target``): the same measure the
simulator judges large-job waits by (``sim/metrics.py``), from what the core sees. A
tenant's own gangs keep their queue order (priority, then submit time). The target is
worked out the first time the gang is planned and then carried in its reservation
(``Reservation.deadline``), so it does not drift as the cluster changes.

Quota: a gang also starts no earlier than its tenant's borrowing limit allows, given the
tenant's running work that it may not preempt (ending when it is declared to end) and the
tenant's gangs planned before it. The room left at its start (``Slot.spare``) is what the
tenant's other long work may still take meanwhile (``Scheduler``).

The plan is made again every cycle from the state; nothing here changes the state.

An experiment, off in every preset: on the 10,000-GPU LLM workload it cuts the large
jobs waiting over twice their target by a quarter to a half, and smaller jobs wait many
times longer for it (docs/benchmarks.md, "Sixteenth round").
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from .delay import INF, cover, drain_at
from .index import ClassIndex, ClusterState, NodeState, end_at
from .model import FULL_DEVICE_MILLI, LOWEST_VICTIM, Policy, Tier, TopologyMode
from .preemption import may_preempt
from .quota import QuotaKey
from .request import Request, compatible_classes
from .topology import could_ever_fit, domain_key_of

TARGET_FLOOR = 15 * 60.0
"""The shortest fair-share target: a restart and a few cycles (the simulator's too)."""


@dataclass(slots=True)
class Slot:
    """One large gang's planned start: POSIX seconds, ``inf`` when it cannot be planned."""

    req: Request
    cls: ClassIndex
    nodes: list[NodeState]
    start: float
    end: float
    deadline: float
    key: QuotaKey
    spare: int = 0  # milli-devices of its tenant's limit left at its start
    order: int = 0  # place in the plan


@dataclass(slots=True)
class _Tenant:
    """One quota key's work that a gang of the tenant may not preempt, by end time."""

    ends: list[float] = field(default_factory=list)  # sorted
    suffix: list[int] = field(default_factory=list)  # milli still held after ends[i - 1]
    planned: list[tuple[float, float, int]] = field(default_factory=list)  # start, end, milli

    def usage(self, at: float) -> int:
        """Milli-devices held at ``at`` by running work (ending after it) and planned gangs."""
        i = bisect_right(self.ends, at)
        used = self.suffix[i] if self.suffix else 0
        return used + sum(m for s, e, m in self.planned if s <= at < e)


def plannable(req: Request, policy: Policy) -> bool:
    """Gangs of ``large_patience_devices`` or more whole devices that may preempt (P0-P2)."""
    job = req.job
    return (
        req.total_whole >= policy.large_patience_devices
        and req.total_replicas > 1
        and job.priority <= policy.preemptor_max_priority
    )


def turnover(state: ClusterState) -> float:
    """Devices per second that running jobs free: the sum of devices / declared duration."""
    rate = 0.0
    for entry in state.running.values():
        job = entry.job
        if job.expected_end is None:
            continue
        span = (job.expected_end - job.started_at).total_seconds()
        if span <= 0:
            continue
        rate += sum(entry.usage.values()) / FULL_DEVICE_MILLI / span
    return rate


def target(
    devices: float,
    ahead: float,
    usable: float,
    rate: float,
    guarantee: float,
    total_guarantee: float,
    floor: float = TARGET_FLOOR,
) -> float:
    """Seconds the job would wait for its tenant's share of the turnover ``rate`` (its
    ``guarantee`` over the ``total_guarantee`` of the pool) to free ``devices`` after the
    ``ahead`` devices of its tenant's work queued before it, less the ``usable`` devices it
    could take at once; at least ``floor``. ``inf`` when nothing turns over or the tenant
    has no guarantee. The simulator judges large-job waits by this same measure
    (``sim.metrics.fair_share_expectation``)."""
    need = max(0.0, devices + ahead - usable)
    if need == 0:
        return floor
    if guarantee <= 0 or total_guarantee <= 0 or rate <= 0:
        return INF
    return max(floor, need / (rate * guarantee / total_guarantee))


class Planner:
    """Makes one cycle's plan: ``plan(requests, known deadlines)`` -> slots in plan order."""

    def __init__(self, state: ClusterState, policy: Policy, now: datetime) -> None:
        self.state, self.policy = state, policy
        self.now = now.timestamp()
        # (variant, node idx) -> when the node is free of the work a gang may not preempt;
        # a variant is the set of tenants whose P4/P5 work it may preempt (``_variant``)
        self._free_at: dict[tuple[int, int], float] = {}
        self._variants: dict[frozenset[str] | None, int] = {}
        self._evict: list[frozenset[str] | None] = []
        self._busy: dict[int, float] = {}  # node idx -> end of the gang planned there
        self._tenants: dict[QuotaKey, _Tenant] = {}

    # ------------------------------------------------------------ deadlines

    def deadlines(
        self, reqs: list[Request], queue: Iterable[Request], known: Mapping[str, float]
    ) -> dict[str, float]:
        """Each gang's fair-share target as POSIX time: ``known`` where given, else worked
        out now from its tenant's work queued before it (of its priority or higher), the
        devices it could use at once, the turnover and its tenant's share of the
        guarantees."""
        out: dict[str, float] = {}
        new = []
        for req in reqs:
            d = known.get(req.job.job_id)
            if d is None:
                new.append(req)
            else:
                out[req.job.job_id] = d
        if not new:
            return out
        rate = turnover(self.state)
        queued = list(queue)
        for req in new:
            job = req.job
            ahead = sum(
                r.accel_milli
                for r in queued
                if r.job.tenant == job.tenant
                and r.job.pool == job.pool
                and r.job.priority <= job.priority
                and r.job.submit_time <= job.submit_time
                and r.job.job_id != job.job_id
            )
            wait = self._target_for(req, ahead / FULL_DEVICE_MILLI, rate)
            out[job.job_id] = job.submit_time.timestamp() + wait
        return out

    def _target_for(self, req: Request, ahead: float, rate: float) -> float:
        tenant, pool = req.job.tenant, req.job.pool
        classes = compatible_classes(self.state, req)
        if not classes:
            return INF
        cls = classes[0]
        k = max(req.main.k, 1)
        idle = float(sum(len(ns.free) for ns in cls.nodes if len(ns.free) >= k))
        ledger = self.state.ledger
        if not ledger.enabled:  # no guarantees: the whole turnover is everyone's
            return target(req.total_whole, ahead, idle, rate, 1.0, 1.0)
        key = (tenant, pool, cls.model)
        g = ledger.guarantee(key)
        usable = max(idle, (g - ledger.usage[key]) / FULL_DEVICE_MILLI)
        return target(
            req.total_whole, ahead, usable, rate, g, ledger.total_guarantee(pool, cls.model)
        )

    # ------------------------------------------------------------------ plan

    def plan(self, reqs: list[Request], deadlines: Mapping[str, float]) -> list[Slot]:
        """Slots for ``reqs`` in order of their deadlines (then submit time and id)."""
        ordered = sorted(
            reqs,
            key=lambda r: (deadlines.get(r.job.job_id, INF), r.job.submit_time, r.job.job_id),
        )
        slots: list[Slot] = []
        for req in ordered:
            slot = self._slot(req, deadlines.get(req.job.job_id, INF))
            if slot is not None:
                slots.append(slot)
        return slots

    def _variant(self, req: Request, key: QuotaKey) -> int:
        """The tenants whose P4/P5 work ``req`` may preempt (``preemption.py``): its own,
        and those borrowing while its tenant stays within its guarantee (reclaim); any
        tenant's without quotas; none when it may not preempt."""
        policy, ledger, job = self.policy, self.state.ledger, req.job
        evict: frozenset[str] | None = frozenset()
        if may_preempt(job, policy):
            if not ledger.enabled:
                evict = None
            else:
                tenants = {job.tenant}
                if policy.reclaim and ledger.within_guarantee_after(key, req.accel_milli):
                    tenants |= ledger.borrowers(key[1], key[2])
                evict = frozenset(tenants)
        v = self._variants.get(evict)
        if v is None:
            v = self._variants[evict] = len(self._evict)
            self._evict.append(evict)
        return v

    def _free(self, ns: NodeState, variant: int) -> float:
        """When ``ns`` is free of the work a gang of ``variant`` may not preempt and of
        the gangs planned on it before."""
        at = self._free_at.get((variant, ns.idx))
        if at is None:
            evict = self._evict[variant]
            if evict is not None and not evict:
                at = self.now + drain_at(self.state, ns, self.now)
            else:
                at = self.now
                running = self.state.running
                low = max(self.policy.victim_min_priority, LOWEST_VICTIM)
                for job_id, end in ns.ends.items():
                    entry = running.get(job_id)
                    if entry is None:
                        continue
                    job = entry.job
                    if (
                        job.preemptible
                        and job.priority >= low
                        and (evict is None or job.tenant in evict)
                    ):
                        continue
                    at = max(at, end_at(end))
            self._free_at[(variant, ns.idx)] = at
        return max(at, self._busy.get(ns.idx, -INF))

    def _slot(self, req: Request, deadline: float) -> Slot | None:
        job = req.job
        runtime = job.expected_runtime
        run = INF if runtime is None else runtime.total_seconds()
        best: Slot | None = None
        for cls in compatible_classes(self.state, req):
            key = (job.tenant, job.pool, cls.model)
            ledger = self.state.ledger
            if ledger.enabled and ledger.limit(key) < req.accel_milli:
                continue
            lo = self.now
            variant = self._variant(req, key)
            found: tuple[float, list[NodeState]] | None = None
            for _ in range(4):  # nodes and quota room: a few rounds settle it
                found = self._nodes(cls, req, lo, deadline, variant)
                if found is None or not math.isfinite(found[0]):
                    break
                ready = self._room_from(key, req, found[0], run)
                if ready <= found[0]:
                    break
                lo = ready
            if found is None:
                continue
            start, nodes = found
            if best is None or start < best.start:
                best = Slot(req, cls, nodes, start, start + run, deadline, key)
        if best is None or not math.isfinite(best.start):
            return None  # no start in sight (work of unknown length): delay holds apply
        for ns in best.nodes:
            self._busy[ns.idx] = best.end
        tenant = self._tenant(best.key, req)
        tenant.planned.append((best.start, best.end, req.accel_milli))
        best.spare = max(0, self.state.ledger.limit(best.key) - tenant.usage(best.start))
        return best

    def _nodes(
        self, cls: ClassIndex, req: Request, lo: float, deadline: float, variant: int
    ) -> tuple[float, list[NodeState]] | None:
        """The start and nodes of the earliest cover in the tightest tier whose start is
        within ``Policy.plan_topology_slack`` of the earliest of any tier and, when that
        is later, not past the gang's ``deadline`` (a tighter tier never costs it its
        fair-share target); not before ``lo``."""
        topo = req.job.topology
        if topo.mode == TopologyMode.HARD:
            tiers = [t for t in (Tier.LEAF, Tier.SU, Tier.SPINE, Tier.ANY) if t <= topo.max_tier]
        elif topo.mode == TopologyMode.SOFT and self.policy.topology:
            tiers = [Tier.LEAF, Tier.SU, Tier.SPINE, Tier.ANY]
        else:
            tiers = [Tier.ANY]
        tiers = [t for t in tiers if t == Tier.ANY or could_ever_fit(cls, t, req.whole_need)]
        if not tiers:
            return None
        job_id = req.job.job_id
        ranked = sorted(
            (ns for ns in cls.nodes if ns.held_by is None or ns.held_by == job_id),
            key=lambda ns: (self._free(ns, variant), ns.idx),
        )
        per_tier: dict[Tier, tuple[float, list[NodeState]]] = {}
        for tier in tiers:
            groups: dict[object, list[NodeState]] = {}
            for ns in ranked:
                groups.setdefault(domain_key_of(ns, tier), []).append(ns)
            for members in groups.values():
                found = cover(members, req)
                if found is None:
                    continue
                start = max(lo, self._free(found[-1], variant))
                have = per_tier.get(tier)
                if have is None or start < have[0]:
                    per_tier[tier] = (start, members)
        for tier, (start, members) in per_tier.items():
            # Of the nodes free by the start: those of the leaves with the most of them
            # first, so the gang spans few leaves and leaves the others whole for smaller
            # gangs; inside a leaf, those free last (latest fit), so the nodes free sooner
            # stay for the gangs after it that could start sooner.
            ready = [ns for ns in members if self._free(ns, variant) <= start]
            ready.reverse()
            per_leaf: dict[object, int] = {}
            for ns in ready:
                per_leaf[ns.leaf_key] = per_leaf.get(ns.leaf_key, 0) + 1
            ready.sort(key=lambda ns: (-per_leaf[ns.leaf_key], ns.leaf_key))
            found = cover(ready, req)
            assert found is not None
            per_tier[tier] = (start, found)
        if not per_tier:
            return None
        soonest = min(start for start, _ in per_tier.values())
        latest = soonest + self.policy.plan_topology_slack.total_seconds()
        if latest > soonest:
            latest = min(latest, max(soonest, deadline))
        for tier in tiers:
            hit = per_tier.get(tier)
            if hit is not None and hit[0] <= latest:
                return hit
        return None

    def _tenant(self, key: QuotaKey, req: Request) -> _Tenant:
        """The tenant's running work that ``req`` may not preempt (its own P4/P5 work of
        lower priority it may), built once per quota key and cycle."""
        tenant = self._tenants.get(key)
        if tenant is not None:
            return tenant
        tenant = self._tenants[key] = _Tenant()
        tenant_id, pool, model = key
        prio = req.job.priority
        rows: list[tuple[float, int]] = []
        for entry in self.state.running.values():
            job = entry.job
            if job.tenant != tenant_id or job.pool != pool:
                continue
            milli = entry.usage.get(model, 0)
            if not milli:
                continue
            if job.preemptible and job.priority >= LOWEST_VICTIM and job.priority > prio:
                continue
            rows.append((end_at(job.expected_end), milli))
        rows.sort()
        tenant.ends = [e for e, _ in rows]
        suffix = [0] * (len(rows) + 1)
        for i in range(len(rows) - 1, -1, -1):
            suffix[i] = suffix[i + 1] + rows[i][1]
        tenant.suffix = suffix
        return tenant

    def _room_from(self, key: QuotaKey, req: Request, lo: float, run: float) -> float:
        """The earliest time from ``lo`` at which the tenant's limit has room for ``req`` for
        as long as it runs (against the gangs planned for the tenant before it)."""
        ledger = self.state.ledger
        if not ledger.enabled:
            return lo
        tenant = self._tenant(key, req)
        limit = ledger.limit(key)
        need = req.accel_milli
        moments = [lo]
        moments += [e for e in tenant.ends if e > lo and math.isfinite(e)]
        moments += [e for _, e, _ in tenant.planned if e > lo and math.isfinite(e)]
        moments.sort()
        for at in moments:
            if tenant.usage(at) + need > limit:
                continue
            end = at + run
            if all(tenant.usage(s) + need <= limit for s, _, _ in tenant.planned if at < s < end):
                return at
        return INF
