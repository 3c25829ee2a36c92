"""Gang placement of one job inside one class of nodes.

A placement either puts every replica somewhere or changes nothing (gang): all changes go
through the ``ClusterState`` undo log and a failed attempt is rolled back. Replicas of one
group are placed in batches (as many as fit on the node in hand), which for identical
replicas is the same as repeated best fit but touches each node once.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import chain

from .index import ClassIndex, ClusterState, NodeState
from .model import Packing, PendingJob, Policy, ReplicaPlacement, Tier, TopologyMode
from .request import Demand, Request
from .text import Text
from .topology import (
    DomainKey,
    candidate_domains,
    could_ever_fit,
    domain_nodes,
    in_domain,
    tier_of,
    tiers_for,
)

NODE_TIER_TRIES = 16
"""How many single nodes a small multi-replica job tries before looking at leaves."""


@dataclass(slots=True)
class Placed:
    replicas: list[ReplicaPlacement]
    nodes: list[NodeState]
    tier: Tier


def room(ns: NodeState, d: Demand, job: PendingJob) -> int:
    """How many more replicas of ``d`` fit on the node right now (whole devices or CPU)."""
    if not ns.usable_by(job):
        return 0
    if d.selector and not ns.matches(d.selector):
        return 0
    if d.arch is not None and ns.node.arch != d.arch:
        return 0
    n = len(ns.free) // d.k if d.k else 1 << 30
    if d.milli:
        n = min(n, 1)
    if d.cpu:
        n = min(n, ns.cpu_free // d.cpu)
    if d.mem:
        n = min(n, ns.mem_free // d.mem)
    return max(n, 0)


def _best_fit(cls: ClassIndex, d: Demand, job: PendingJob, packing: Packing) -> NodeState | None:
    """Best (binpack) or worst (spread) fitting node via the free-count buckets."""
    k = max(d.k, 1)
    top = cls.max_devices
    order = range(k, top + 1) if packing != Packing.SPREAD else range(top, k - 1, -1)
    buckets = cls.buckets
    for f in order:
        for ns in buckets[f]:
            if room(ns, d, job) > 0:
                return ns
    return None


class _Attempt:
    """Places the demands of one request inside one domain; the caller rolls back on failure."""

    def __init__(
        self,
        state: ClusterState,
        cls: ClassIndex,
        req: Request,
        packing: Packing,
        tier: Tier,
        key: DomainKey,
        flat: bool,
    ) -> None:
        self.state, self.cls, self.req, self.packing = state, cls, req, packing
        self.job = req.job
        self.tier, self.key, self.flat = tier, key, flat
        self.out: list[ReplicaPlacement] = []
        self.nodes: list[NodeState] = []

    def run(self) -> bool:
        for d in self.req.demands:
            if d.k:
                ok = self._whole(d, d.replicas, 0)
            elif d.milli:
                ok = self._shares(d, d.replicas, 0)
            else:
                ok = self._cpu(d, d.replicas, 0)
            if not ok:
                return False
        return True

    def _emit(
        self, d: Demand, index: int, ns: NodeState, devices: tuple[int, ...], milli: int
    ) -> None:
        self.out.append(
            ReplicaPlacement(d.name, index, ns.node.node_id, devices, milli, d.cpu, d.mem)
        )
        self.nodes.append(ns)

    def _take(self, d: Demand, ns: NodeState, n: int, start: int) -> None:
        for i in range(n):
            devs = self.state.take_whole(ns, d.k, d.cpu, d.mem)
            self._emit(d, start + i, ns, devs, 0)

    def _whole(self, d: Demand, count: int, start: int) -> bool:
        done = 0
        if self.flat:
            while done < count:
                ns = _best_fit(self.cls, d, self.job, self.packing)
                if ns is None:
                    return False
                n = min(room(ns, d, self.job), count - done)
                self._take(d, ns, n, start + done)
                done += n
            return True
        for ns in domain_nodes(self.cls, self.tier, self.key, d.k, self.packing):
            n = min(room(ns, d, self.job), count - done)
            if n > 0:
                self._take(d, ns, n, start + done)
                done += n
                if done == count:
                    return True
        return done == count

    def _fresh_device_node(self, d: Demand) -> NodeState | None:
        if self.flat:
            return _best_fit(self.cls, d, self.job, self.packing)
        for ns in domain_nodes(self.cls, self.tier, self.key, 1, self.packing):
            if room(ns, d, self.job) > 0:
                return ns
        return None

    def _shares(self, d: Demand, count: int, start: int) -> bool:
        shared = self.cls.shared
        nodes = self.state.node_list
        for i in range(count):
            chosen: tuple[NodeState, int] | None = None
            # Best fit among partly used devices first: sharing is only worth it if packed.
            j = bisect_left(shared, (d.milli, -1, -1))
            while j < len(shared):
                _, idx, dev = shared[j]
                ns = nodes[idx]
                if in_domain(ns, self.tier, self.key) and room(ns, d, self.job) > 0:
                    chosen = (ns, dev)
                    break
                j += 1
            if chosen is None:
                fresh = self._fresh_device_node(d)
                if fresh is None:
                    return False
                chosen = (fresh, fresh.free[0])
            ns, dev = chosen
            self.state.take_share(ns, dev, d.milli, d.cpu, d.mem)
            self._emit(d, start + i, ns, (dev,), d.milli)
        return True

    def _cpu(self, d: Demand, count: int, start: int) -> bool:
        """CPU-only replicas of an accelerator job (a parameter server, a launcher).

        They go next to the job's accelerator replicas first, then anywhere in the domain;
        without an explicit arch they need the job's architecture (one image per job).
        """
        if self.flat or self.tier == Tier.ANY:
            rest: Iterable[NodeState] = self.state.pool_nodes.get(self.job.pool, [])
        else:
            rest = domain_nodes(self.cls, self.tier, self.key, 0, self.packing)
        arch = d.arch or self.cls.arch
        done = 0
        for ns in chain(dict.fromkeys(self.nodes), rest):
            if ns.node.arch != arch:
                continue
            n = min(room(ns, d, self.job), count - done)
            if n > 0:
                self._take(d, ns, n, start + done)
                done += n
                if done == count:
                    return True
        return done == count


def _node_candidates(
    cls: ClassIndex, req: Request, packing: Packing, limit: int
) -> list[DomainKey]:
    need = req.total_whole
    if need > cls.max_devices:
        return []
    job = req.job
    order = (
        range(need, cls.max_devices + 1)
        if packing != Packing.SPREAD
        else range(cls.max_devices, need - 1, -1)
    )
    out: list[DomainKey] = []
    for f in order:
        for ns in cls.buckets[f]:
            if ns.usable_by(job):
                out.append(ns)
                if len(out) >= limit:
                    return out
    return out


def placement_tiers(cls: ClassIndex, req: Request, policy: Policy, *, tight: bool) -> list[Tier]:
    """The topology tiers ``place_in_class`` tries, tightest first."""
    tiers = tiers_for(req.job.topology, req.total_replicas, topology_policy=policy.topology)
    if tight:
        # Patience (Policy.topology_patience): only the tightest tier that could host it.
        best = next(
            (t for t in tiers if t == Tier.ANY or could_ever_fit(cls, t, req.whole_need)),
            Tier.ANY,
        )
        tiers = [t for t in tiers if t <= best]
    return tiers


def place_in_class(
    state: ClusterState, cls: ClassIndex, req: Request, policy: Policy, *, tight: bool = False
) -> Placed | Text | None:
    """Place the whole job in ``cls``.

    Returns the placement (the state now holds it), a quota reason (nothing changed), or
    ``None`` when it does not fit (nothing changed).
    """
    job = req.job
    qkey = (job.tenant, job.pool, cls.model)
    if req.accel_milli:
        reason = state.ledger.check(qkey, req.accel_milli)
        if reason:
            return reason
    if req.main.k > cls.max_devices:
        return None
    mark = state.mark()
    if req.accel_milli:
        state.charge(qkey, req.accel_milli)
    flat_ok = job.topology.mode == TopologyMode.NONE or (
        job.topology.mode == TopologyMode.SOFT and not policy.topology
    )
    tiers = placement_tiers(cls, req, policy, tight=tight)
    for tier in tiers:
        keys: list[DomainKey]
        if tier != Tier.ANY and not could_ever_fit(cls, tier, req.whole_need):
            continue
        if tier == Tier.ANY:
            keys = [None]
        elif tier == Tier.NODE:
            # Only a preference when looser tiers follow; a hard one-node job tries every node.
            tries = NODE_TIER_TRIES if len(tiers) > 1 else len(cls.nodes)
            keys = _node_candidates(cls, req, policy.packing, tries)
        else:
            keys = candidate_domains(cls, tier, req.whole_need, policy.packing)
        for key in keys:
            inner = state.mark()
            attempt = _Attempt(
                state, cls, req, policy.packing, tier, key, flat_ok and tier == Tier.ANY
            )
            if attempt.run():
                return Placed(attempt.out, attempt.nodes, tier_of(attempt.nodes))
            state.rollback(inner)
    state.rollback(mark)
    return None


def place_cpu_only(state: ClusterState, req: Request) -> Placed | None:
    """Jobs without accelerators: first fit over the pool's nodes (no class index needed).

    A hard topology requirement is checked on the result; CPU-only gangs are rare and small.
    """
    job = req.job
    mark = state.mark()
    out: list[ReplicaPlacement] = []
    nodes: list[NodeState] = []
    for d in req.demands:
        done = 0
        for ns in state.pool_nodes.get(job.pool, []):
            n = min(room(ns, d, job), d.replicas - done)
            for i in range(n):
                devs = state.take_whole(ns, 0, d.cpu, d.mem)
                out.append(
                    ReplicaPlacement(d.name, done + i, ns.node.node_id, devs, 0, d.cpu, d.mem)
                )
                nodes.append(ns)
            done += max(n, 0)
            if done == d.replicas:
                break
        if done < d.replicas:
            state.rollback(mark)
            return None
    tier = tier_of(nodes)
    if job.topology.mode == TopologyMode.HARD and tier > job.topology.max_tier:
        state.rollback(mark)
        return None
    return Placed(out, nodes, tier)


def place_partial(state: ClusterState, cls: ClassIndex, req: Request, policy: Policy) -> Placed:
    """Gang off: place replicas one at a time, each charged to the quota, until one fails."""
    job = req.job
    qkey = (job.tenant, job.pool, cls.model)
    attempt = _Attempt(state, cls, req, policy.packing, Tier.ANY, None, True)
    for d in req.demands:
        per_replica = d.k * 1000 + d.milli
        for i in range(d.replicas):
            if per_replica and state.ledger.check(qkey, per_replica):
                break
            mark = state.mark()
            if per_replica:
                state.charge(qkey, per_replica)
            if d.k:
                ok = attempt._whole(d, 1, i)
            elif d.milli:
                ok = attempt._shares(d, 1, i)
            else:
                ok = attempt._cpu(d, 1, i)
            if not ok:
                state.rollback(mark)
                break
    tier = tier_of(attempt.nodes) if attempt.nodes else Tier.ANY
    return Placed(attempt.out, attempt.nodes, tier)
