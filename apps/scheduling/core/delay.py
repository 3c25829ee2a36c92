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

from datetime import datetime

from .index import ClassIndex, ClusterState, NodeState
from .model import PendingJob, Policy, Reservation, Tier, TopologyMode
from .request import Request
from .topology import could_ever_fit, domain_caps, domain_members, domain_sizes


def hold_expiry(job: PendingJob, policy: Policy) -> datetime:
    return job.submit_time + policy.starvation_threshold + policy.max_hold


def is_starving(req: Request, policy: Policy, now: datetime) -> bool:
    """A large job that waited past the threshold and whose hold window is still open."""
    job = req.job
    return (
        policy.delay_scheduling
        and req.total_whole >= policy.large_job_devices
        and now - job.submit_time >= policy.starvation_threshold
        and now < hold_expiry(job, policy)
    )


def _eligible(ns: NodeState, req: Request) -> bool:
    job = req.job
    if ns.held_by is not None and ns.held_by != job.job_id:
        return False
    d = req.main
    return not d.selector or ns.matches(d.selector)


def _cover(nodes: list[NodeState], req: Request) -> list[NodeState] | None:
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


def choose_hold(
    state: ClusterState, cls: ClassIndex, req: Request, prior: Reservation | None
) -> list[NodeState] | None:
    """Nodes to hold for ``req`` in ``cls``: inside the tightest topology domain the job
    accepts, the domain with the most free devices now, and in it the nodes with the most
    free devices (they are ready soonest).

    Domains are ranked by the index aggregates and only the chosen one is sorted, so a hold
    costs ``O(domains + nodes in one domain)``.
    """
    if prior is not None:
        again = [state.nodes[n] for n in prior.node_ids if n in state.nodes]
        if all(ns.cls is cls and _eligible(ns, req) for ns in again) and _cover(again, req):
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
        caps = domain_caps(cls, tier) if tier != Tier.ANY else {None: cls.cap}
        ranked = sorted(sizes, key=lambda key: -caps[key][1])  # type: ignore[index]
        for key in ranked:
            if sizes[key] * cls.max_devices < req.total_whole:
                continue
            nodes = [ns for ns in domain_members(cls, tier, key) if _eligible(ns, req)]
            nodes.sort(key=lambda ns: (-len(ns.free), ns.idx))
            cover = _cover(nodes, req)
            if cover is not None:
                return cover
    return None
