"""Delay scheduling: holding freed capacity for a starving large job.

Without it, a 64-GPU job waits forever in a busy cluster: every time a device frees up a
1-GPU job takes it, and 64 free devices under one leaf never appear. Once a large job has
waited ``starvation_threshold``, the scheduler picks the nodes it will eventually use and
*holds* them: free devices there may only go to the holder or to strictly higher priority
work (priority keeps its meaning).

The hold is bounded without any stored state: it lasts from ``submit + threshold`` to
``submit + threshold + max_hold``. The nodes chosen in the previous cycle are passed back in
the snapshot (``ClusterSnapshot.reservations``) and reused while they still qualify, so the
held set does not wander and actually drains.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta

from .index import ClassIndex, ClusterState, NodeState, end_at
from .model import PendingJob, Policy, Reservation, Tier, TopologyMode
from .request import Request
from .topology import DomainKey, could_ever_fit, domain_caps, domain_members, domain_sizes


def topology_patience_for(devices: int, policy: Policy) -> timedelta:
    """How long a soft-topology gang of ``devices`` whole devices waits for its tightest tier
    (``Policy.topology_patience``, or ``large_topology_patience`` for large gangs)."""
    if policy.large_topology_patience is not None and devices >= policy.large_patience_devices:
        return policy.large_topology_patience
    return policy.topology_patience


def starvation_threshold_for(devices: int, policy: Policy) -> timedelta:
    """How long a job of ``devices`` whole devices waits before it may hold nodes
    (``Policy.starvation_threshold``, or ``large_starvation_threshold`` for large gangs)."""
    if policy.large_starvation_threshold is not None and devices >= policy.large_patience_devices:
        return policy.large_starvation_threshold
    return policy.starvation_threshold


def hold_expiry(job: PendingJob, policy: Policy, devices: int = 0) -> datetime:
    return job.submit_time + starvation_threshold_for(devices, policy) + policy.max_hold


def is_starving(req: Request, policy: Policy, now: datetime) -> bool:
    """A large job that waited past the threshold and whose hold window is still open."""
    job = req.job
    return (
        policy.delay_scheduling
        and req.total_whole >= policy.large_job_devices
        and now - job.submit_time >= starvation_threshold_for(req.total_whole, policy)
        and now < hold_expiry(job, policy, req.total_whole)
    )


def drain_of(state: ClusterState, nodes: list[NodeState], now: datetime) -> float:
    """Seconds until every one of ``nodes`` is expected to be free of other work; ``inf``
    without declared runtimes (or without nodes)."""
    if not state.timed or not nodes:
        return INF
    now_ts = now.timestamp()
    return max(drain_at(state, ns, now_ts) for ns in nodes)


def _eligible(ns: NodeState, req: Request) -> bool:
    job = req.job
    if ns.held_by is not None and ns.held_by != job.job_id:
        return False
    d = req.main
    return not d.selector or ns.matches(d.selector)


def cover(nodes: list[NodeState], req: Request) -> list[NodeState] | None:
    """The shortest prefix of ``nodes`` whose device counts (once drained) host the job."""
    left = {i: d.replicas for i, d in enumerate(req.demands) if d.k}
    chosen: list[NodeState] = []
    for ns in nodes:
        slots = ns.node.accelerator_count
        used = False
        for i in list(left):
            k = req.demands[i].k
            n = min(slots // k, left[i])
            if n:
                used = True
                slots -= n * k
                left[i] -= n
                if left[i] == 0:
                    del left[i]
        if used:
            chosen.append(ns)
        if not left:
            return chosen
    return None


INF = float("inf")


def node_drain(state: ClusterState, ns: NodeState, now: datetime) -> float:
    """Seconds from ``now`` until the last job on the node is expected to end: 0 when none
    runs there, ``inf`` when one declared no runtime (``RunningJob.expected_end``)."""
    return drain_at(state, ns, now.timestamp())


def drain_at(state: ClusterState, ns: NodeState, now: float) -> float:
    """``node_drain`` with ``now`` as POSIX time (hot loops convert it once)."""
    ends = ns.ends
    if not ends:
        return 0.0
    running = state.running
    top = ns.top_end
    if top is None:
        top = ns.top_end = max(
            ((jid, end_at(end)) for jid, end in ends.items()), key=lambda entry: entry[1]
        )
    if top[0] in running:
        return max(0.0, top[1] - now)
    # The last to end was released in this cycle (a victim, or a trial): look at the rest.
    at = max((end_at(end) for j, end in ends.items() if j in running), default=0.0)
    return max(0.0, at - now)


def _drains_after(
    state: ClusterState, nodes: list[NodeState], now: datetime, prior: Reservation
) -> bool:
    """Whether some of ``nodes`` is expected to be busy past the end of the hold."""
    now_ts, left = now.timestamp(), (prior.expires_at - now).total_seconds()
    return any(drain_at(state, ns, now_ts) > left for ns in nodes)


def choose_hold(
    state: ClusterState,
    cls: ClassIndex,
    req: Request,
    prior: Reservation | None,
    now: datetime | None = None,
) -> list[NodeState] | None:
    """Nodes to hold for ``req`` in ``cls``, inside the tightest topology domain the job
    accepts.

    Without runtimes (``now`` None, or no job ever declared one): the domain with the
    most free devices now, and in it the nodes with the most free devices. With ``now`` and
    declared runtimes (``RunningJob.expected_end``): in every domain of the tier, the nodes
    that are expected to drain soonest (free ones first, work of unknown length last), and
    the domain whose chosen nodes drain soonest: a hold on nodes that run a week-long job
    would hold capacity idle for nothing. The previous cycle's nodes are kept while they
    still qualify (and, with runtimes, can drain before the hold ends).
    """
    timed = now is not None and state.timed
    if prior is not None:
        again = [state.nodes[n] for n in prior.node_ids if n in state.nodes]
        if (
            all(ns.cls is cls and _eligible(ns, req) for ns in again)
            and cover(again, req)
            # With runtimes, only while it can still drain before the hold ends: work that
            # started there since (a higher-priority job, an older starving one) may not.
            and not (timed and now is not None and _drains_after(state, again, now, prior))
        ):
            return again
    topo = req.job.topology
    if topo.mode == TopologyMode.HARD:
        tiers = [t for t in (Tier.LEAF, Tier.SU, Tier.SPINE) if t <= topo.max_tier]
    elif topo.mode == TopologyMode.SOFT:
        tiers = [Tier.LEAF, Tier.SU, Tier.SPINE, Tier.ANY]
    else:
        tiers = [Tier.ANY]
    for tier in tiers:
        if tier != Tier.ANY and not could_ever_fit(cls, tier, req.whole_need):
            continue
        sizes = domain_sizes(cls, tier)
        if timed and now is not None:
            best = _soonest(state, cls, tier, sizes, req, now)
            if best is not None:
                return best
            continue
        caps = domain_caps(cls, tier) if tier != Tier.ANY else {None: cls.cap}
        ranked = sorted(sizes, key=lambda key: -caps[key][1])  # type: ignore[index]
        for key in ranked:
            if sizes[key] * cls.max_devices < req.total_whole:
                continue
            nodes = [ns for ns in domain_members(cls, tier, key) if _eligible(ns, req)]
            nodes.sort(key=lambda ns: (-len(ns.free), ns.idx))
            chosen = cover(nodes, req)
            if chosen is not None:
                return chosen
    return None


def _soonest(
    state: ClusterState,
    cls: ClassIndex,
    tier: Tier,
    sizes: Mapping[DomainKey, int],
    req: Request,
    now: datetime,
) -> list[NodeState] | None:
    """The cover that drains soonest over the domains of one tier (see ``choose_hold``).

    A cover takes a domain's nodes in drain order and needs at least ``fewest`` of them, so
    once some domain's cover drains by ``best``, a domain with fewer than ``fewest`` eligible
    nodes drained by then cannot do better: it is left as soon as that is certain.
    """
    best: tuple[float, int] | None = None
    chosen: list[NodeState] | None = None
    drain: dict[int, float] = {}
    now_ts = now.timestamp()
    fewest = -(-req.total_whole // max(cls.max_devices, 1))
    for key in sorted(sizes, key=str):
        size = sizes[key]
        if size * cls.max_devices < req.total_whole:
            continue
        ranked = []  # (drain, -free devices, idx, node): the order nodes are taken in
        spare = size - fewest  # nodes that may still be left out (ineligible or too late)
        for ns in domain_members(cls, tier, key):
            if not _eligible(ns, req):
                spare -= 1
            else:
                d = drain.get(ns.idx)
                if d is None:
                    d = drain[ns.idx] = drain_at(state, ns, now_ts)
                if best is not None and d > best[0]:
                    spare -= 1
                ranked.append((d, -len(ns.free), ns.idx, ns))
            if spare < 0:
                break
        if spare < 0:
            continue
        ranked.sort()
        found = cover([r[3] for r in ranked], req)
        if found is None:
            continue
        rank = (drain[found[-1].idx], -sum(len(ns.free) for ns in found))
        if best is None or rank < best:
            best, chosen = rank, found
    return chosen
