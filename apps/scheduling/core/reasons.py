"""Pending reasons a person can act on.

"Unschedulable" helps nobody. A reason says what the job needs, what the cluster has at the
level that matters (per leaf for a leaf-bound gang, per replica size otherwise) and, when
the limit is a quota or a hold, whose. Built only for jobs that stay pending, from the index
aggregates, so it costs nothing per placed job.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from .delay import INF, drain_of
from .index import ClassIndex, ClusterState
from .model import PendingCode, PendingJob, Policy, Tier
from .placement import placement_tiers
from .request import Request, describe_constraints
from .text import EMPTY, Items, Phrase, Text, Time, phrase, say
from .topology import TIER_PHRASES, largest_block


def fmt_duration(delta: timedelta) -> str:
    minutes = int(delta.total_seconds() // 60)
    if minutes < 60:
        return f"{minutes}m"
    return f"{minutes // 60}h{minutes % 60:02d}m"


def no_match(state: ClusterState, req: Request) -> Text:
    pool = req.job.pool
    if pool not in state.pools:
        return say("poolMissing", pool=pool)
    offered = sorted(f"{c.model}/{c.vendor}/{c.arch}" for c in state.pool_classes.get(pool, ()))
    has: Items | Phrase = Items(tuple(offered)) if offered else phrase("noAcceleratorNodes")
    return say("noMatch", pool=pool, wanted=describe_constraints(req), offered=has)


def _held_free(state: ClusterState, cls: ClassIndex, job: PendingJob, k: int) -> tuple[int, Items]:
    """Devices usable by ``k``-device replicas that holds keep from ``job``, and the holders."""
    if not state.held:
        return 0, Items(())
    held = 0
    holders: set[str] = set()
    for ns in state.held:
        if ns.cls is cls and ns.held_by is not None and not ns.usable_by(job):
            usable = (len(ns.free) // k) * k
            if usable:
                held += usable
                holders.add(ns.held_by)
    return held, Items(tuple(sorted(holders)))


def capacity(
    state: ClusterState, cls: ClassIndex, req: Request, policy: Policy, *, tight: bool = False
) -> tuple[PendingCode, Text]:
    """Why ``req`` does not fit in ``cls`` right now. ``tight``: the job takes only its
    tightest tier this cycle (soft topology within its patience, or waiting for held nodes
    to drain), as ``place_in_class`` was told."""
    job = req.job
    d = req.main
    model = cls.model
    if d.k > cls.max_devices:
        return PendingCode.CAPACITY, say(
            "replicaTooBig", group=d.name, k=d.k, model=model, pool=job.pool, most=cls.max_devices
        )
    if d.milli:
        best = cls.shared[-1][0] if cls.shared else 0
        return PendingCode.CAPACITY, say(
            "sharesShort",
            replicas=d.replicas,
            milli=d.milli,
            model=model,
            best=best,
            free=cls.cap[1],
            pool=job.pool,
        )
    if not d.k:
        return PendingCode.RESOURCES, say(
            "cpuShort", pool=job.pool, cpu=d.cpu, mem=d.mem, group=d.name
        )
    need = req.total_whole
    shape = (
        phrase("shapeReplicas", need=need, model=model, replicas=d.replicas, k=d.k)
        if len(req.whole_need) == 1
        else phrase("shapeTotal", need=need, model=model)
    )
    limit = placement_tiers(cls, req, policy, tight=tight)[-1]
    held, holders = _held_free(state, cls, job, d.k)
    if limit != Tier.ANY:
        block = largest_block(cls, limit, d.k)
        if block < need:
            # Only a soft-topology job is ever tight: a hard one never takes a looser tier.
            wait = say("softTopologyWait") if tight else EMPTY
            return PendingCode.TOPOLOGY, (
                say("topologyShort", shape=shape, tier=phrase(TIER_PHRASES[limit]), block=block)
                + wait
            )
    else:
        usable = cls.cap[d.k] * d.k
        if usable < need:
            return PendingCode.CAPACITY, say(
                "capacityShort", shape=shape, pool=job.pool, usable=usable, k=d.k, free=cls.cap[1]
            )
    if held:
        return PendingCode.HELD, say("heldShort", shape=shape, held=held, model=model, jobs=holders)
    asks = Items(
        tuple(
            phrase("askLabels", group=x.name, cpu=x.cpu, mem=x.mem, labels=str(dict(x.selector)))
            if x.selector
            else phrase("ask", group=x.name, cpu=x.cpu, mem=x.mem)
            for x in req.demands
        )
    )
    return PendingCode.RESOURCES, say("resourcesShort", model=model, asks=asks)


def hold_drain(state: ClusterState, node_ids: tuple[str, ...], now: datetime) -> Text:
    """When the nodes held for a job are expected to be free, from the runtime limits of the
    work on them (nothing without declared runtimes): a researcher's estimate of the start."""
    if not state.timed:
        return EMPTY
    nodes = [state.nodes[n] for n in node_ids if n in state.nodes]
    drain = drain_of(state, nodes, now)
    if drain == INF:
        return say("drainUnknown")
    if drain <= 0:
        return EMPTY
    return say("drainWithin", wait=fmt_duration(timedelta(seconds=drain)))


def over_max_wait(job: PendingJob, now: datetime) -> Text | None:
    if job.max_wait is None:
        return None
    waited = now - job.submit_time
    if waited <= job.max_wait:
        return None
    return say("overMaxWait", waited=fmt_duration(waited), limit=fmt_duration(job.max_wait))


def held_until(node_count: int, until: datetime) -> Text:
    return say("heldUntil", nodes=node_count, until=Time(until))
