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
from .quota import fmt_devices
from .request import Request, describe_constraints
from .topology import TIER_NAMES, largest_block


def fmt_duration(delta: timedelta) -> str:
    minutes = int(delta.total_seconds() // 60)
    if minutes < 60:
        return f"{minutes}m"
    return f"{minutes // 60}h{minutes % 60:02d}m"


def no_match(state: ClusterState, req: Request) -> str:
    pool = req.job.pool
    if pool not in state.pools:
        return f"pool '{pool}' does not exist"
    offered = sorted(f"{c.model}/{c.vendor}/{c.arch}" for c in state.pool_classes.get(pool, ()))
    has = ", ".join(offered) if offered else "no schedulable accelerator nodes"
    return (
        f"no schedulable node in pool '{pool}' matches {describe_constraints(req)}; "
        f"the pool has {has}"
    )


def _held_free(state: ClusterState, cls: ClassIndex, job: PendingJob, k: int) -> tuple[int, str]:
    """Devices usable by ``k``-device replicas that holds keep from ``job``, and the holders."""
    if not state.held:
        return 0, ""
    held = 0
    holders: set[str] = set()
    for ns in state.held:
        if ns.cls is cls and ns.held_by is not None and not ns.usable_by(job):
            usable = (len(ns.free) // k) * k
            if usable:
                held += usable
                holders.add(ns.held_by)
    return held, ", ".join(sorted(holders))


def capacity(
    state: ClusterState, cls: ClassIndex, req: Request, policy: Policy, *, tight: bool = False
) -> tuple[PendingCode, str]:
    """Why ``req`` does not fit in ``cls`` right now. ``tight``: the job takes only its
    tightest tier this cycle (soft topology within its patience, or waiting for held nodes
    to drain), as ``place_in_class`` was told."""
    job = req.job
    d = req.main
    model = cls.model
    if d.k > cls.max_devices:
        return PendingCode.CAPACITY, (
            f"each '{d.name}' replica needs {d.k} {model} on one node, but the largest {model} "
            f"node in pool '{job.pool}' has {cls.max_devices}"
        )
    if d.milli:
        best = cls.shared[-1][0] if cls.shared else 0
        return PendingCode.CAPACITY, (
            f"needs {d.replicas} x {d.milli}m shares of {model}; the most left on a shared "
            f"device is {best}m and {cls.cap[1]} whole {model} are free in pool '{job.pool}'"
        )
    if not d.k:
        return PendingCode.RESOURCES, (
            f"no node in pool '{job.pool}' has {d.cpu}m CPU and {d.mem}Mi memory free for "
            f"'{d.name}'"
        )
    need = req.total_whole
    shape = (
        f"{need} {model} ({d.replicas} x {d.k})"
        if len(req.whole_need) == 1
        else (f"{need} {model}")
    )
    limit = placement_tiers(cls, req, policy, tight=tight)[-1]
    held, holders = _held_free(state, cls, job, d.k)
    if limit != Tier.ANY:
        where = TIER_NAMES[limit]
        block = largest_block(cls, limit, d.k)
        if block < need:
            # Only a soft-topology job is ever tight: a hard one never takes a looser tier.
            wait = (
                "; soft topology: it waits for that within its topology patience (or while "
                "nodes held for it drain), then takes any placement"
                if tight
                else ""
            )
            return PendingCode.TOPOLOGY, (
                f"needs {shape} under {where}; largest free block under {where} is {block}{wait}"
            )
    else:
        usable = cls.cap[d.k] * d.k
        if usable < need:
            return PendingCode.CAPACITY, (
                f"needs {shape} in pool '{job.pool}'; {usable} free on nodes that can host a "
                f"{d.k}-device replica ({cls.cap[1]} free in total)"
            )
    if held:
        return PendingCode.HELD, (
            f"needs {shape}; {held} of the free {model} are held for starving job(s) {holders}"
        )
    asks = "; ".join(
        f"'{x.name}': {x.cpu}m CPU, {x.mem}Mi"
        + (f", labels {dict(x.selector)}" if x.selector else "")
        for x in req.demands
    )
    return PendingCode.RESOURCES, (
        f"enough free {model} by count, but no placement also gives each replica its CPU, "
        f"memory and labels ({asks})"
    )


def hold_drain(state: ClusterState, node_ids: tuple[str, ...], now: datetime) -> str:
    """When the nodes held for a job are expected to be free, from the runtime limits of the
    work on them (nothing without declared runtimes): a researcher's estimate of the start."""
    if not state.timed:
        return ""
    nodes = [state.nodes[n] for n in node_ids if n in state.nodes]
    drain = drain_of(state, nodes, now)
    if drain == INF:
        return "; some of them run work without a runtime limit, so when they drain is unknown"
    if drain <= 0:
        return ""
    return (
        f"; the runtime limits of the work on them free them within "
        f"{fmt_duration(timedelta(seconds=drain))}"
    )


def over_max_wait(job: PendingJob, now: datetime) -> str | None:
    if job.max_wait is None:
        return None
    waited = now - job.submit_time
    if waited <= job.max_wait:
        return None
    return f"waited {fmt_duration(waited)}, over its max wait of {fmt_duration(job.max_wait)}"


def quota_summary(state: ClusterState, req: Request, model: str) -> str:
    job = req.job
    key = (job.tenant, job.pool, model)
    return (
        f"{fmt_devices(state.ledger.usage[key])} of {fmt_devices(state.ledger.limit(key))} "
        f"{model} quota in use"
    )
