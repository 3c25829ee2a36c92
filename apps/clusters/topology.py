"""A pool's network topology with what each node holds, and its scheduling state.

What an operator looks at when a large job waits: spine -> Scalable Unit -> leaf switch ->
nodes, each node's devices used, free and out of service, and per domain how many nodes are
wholly free (a gang of whole-node replicas starts only on those) and how many free devices
are *stranded* on nodes that have fewer free than a whole-node replica needs (the same
measure as the scheduling core's ``fragmentation``, per domain). Beside it, the largest gang
of whole nodes that could start now inside one leaf, one unit or anywhere in the pool, and
the pool's queue by pending reason.

Counts only: no job, tenant or owner is named, so every signed-in user may read it (like
the pool's capacity). Five queries whatever the pool's size.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from django.db import models
from django.db.models import Count, Q, Sum
from django.db.models.functions import Coalesce
from django.utils import timezone

from apps.clusters.models import Device, Node, NodeHealth, ResourcePool
from apps.jobs.models import Allocation, Job, JobState
from apps.scheduling.models import Hold

REPLICA_SIZE = 8
"""Devices of the whole-node replica that fragmentation is measured against (8-GPU servers)."""


class NodeState(models.TextChoices):
    FREE = "free"  # every device free
    PARTIAL = "partial"  # some used, some free
    FULL = "full"  # no device free
    UNAVAILABLE = "unavailable"  # faulty or cordoned: the scheduler places nothing here
    SPARE = "spare"  # a hot spare, held back from scheduling


@dataclass(slots=True)
class Counts:
    nodes: int = 0
    devices: int = 0  # accelerators of the schedulable (non-spare) nodes
    used: int = 0  # held by jobs (a device with fractional shares counts once)
    free: int = 0  # usable now
    unavailable: int = 0  # on faulty or cordoned nodes, or unhealthy devices
    stranded: int = 0  # free, on nodes with fewer free than a whole-node replica needs
    whole_free_nodes: int = 0
    spare_nodes: int = 0

    def add(self, other: Counts) -> None:
        for f in fields(Counts):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))


@dataclass(slots=True)
class NodeView:
    id: int
    name: str
    model: str
    devices: int
    used: int
    free: int
    broken: int
    state: NodeState
    health: str
    cordoned: bool
    held: bool  # kept by a delay-scheduling hold for a starving large job

    def counts(self) -> Counts:
        if self.state == NodeState.SPARE:
            return Counts(spare_nodes=1)
        threshold = max(1, min(REPLICA_SIZE, self.devices))
        return Counts(
            nodes=1,
            devices=self.devices,
            used=self.used,
            free=self.free,
            unavailable=self.devices - self.used - self.free,
            stranded=self.free if 0 < self.free < threshold else 0,
            whole_free_nodes=1 if self.state == NodeState.FREE else 0,
        )


@dataclass(slots=True)
class Domain:
    name: str
    counts: Counts = field(default_factory=Counts)
    children: list[Domain] = field(default_factory=list)
    nodes: list[NodeView] = field(default_factory=list)


def _natural(name: str) -> list[Any]:
    """Sort key that puts leaf2 before leaf10."""
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name)]


def _node_state(node: Node, used: int, broken: int) -> NodeState:
    if node.is_spare:
        return NodeState.SPARE
    every_device_down = 0 < node.accelerator_count <= broken
    if node.health == NodeHealth.FAULTY or node.cordoned or every_device_down:
        return NodeState.UNAVAILABLE
    if used == 0 and broken == 0:
        return NodeState.FREE
    if used + broken >= node.accelerator_count:
        return NodeState.FULL
    return NodeState.PARTIAL


Path = tuple[str, str, str]
"""Spine, Scalable Unit and leaf switch of a node."""


PlacedNode = tuple[NodeView, Path]


def node_views(pools: Sequence[ResourcePool]) -> dict[int, list[PlacedNode]]:
    """Every node of the pools as the view shows it, with where it sits, by pool id; four
    queries however many pools and nodes."""
    nodes = list(Node.objects.filter(pool__in=pools))
    broken: defaultdict[int, set[int]] = defaultdict(set)
    for node_id, index in (
        Device.objects.filter(node__pool__in=pools)
        .exclude(health=NodeHealth.HEALTHY)
        .values_list("node_id", "index")
    ):
        broken[node_id].add(index)
    taken: defaultdict[int, set[int]] = defaultdict(set)
    for node_id, devices, shares in Allocation.objects.filter(node__pool__in=pools).values_list(
        "node_id", "devices", "shares"
    ):
        taken[node_id].update(int(d) for d in devices)
        taken[node_id].update(int(d) for d, _ in shares)
    held: set[int] = set()
    for node_ids in Hold.objects.filter(
        job__pool__in=pools, expires_at__gt=timezone.now()
    ).values_list("node_ids", flat=True):
        held.update(int(n) for n in node_ids)
    views: dict[int, list[PlacedNode]] = {p.pk: [] for p in pools}
    for n in nodes:
        every = set(range(n.accelerator_count))
        used = len(taken[n.pk] & every)
        down = len((broken[n.pk] & every) - taken[n.pk])
        state = _node_state(n, used, down)
        free = 0 if state in (NodeState.SPARE, NodeState.UNAVAILABLE) else len(every) - used - down
        view = NodeView(
            id=n.pk,
            name=n.name,
            model=n.accelerator_model,
            devices=n.accelerator_count,
            used=used,
            free=free,
            broken=down,
            state=state,
            health=n.health,
            cordoned=n.cordoned,
            held=n.pk in held,
        )
        views[n.pool_id or 0].append((view, (n.spine, n.scalable_unit, n.leaf_switch)))
    return views


def _group(nodes: Iterable[PlacedNode]) -> list[Domain]:
    """Spine -> unit -> leaf domains with their counts, in natural name order."""
    tree: dict[str, dict[str, dict[str, list[NodeView]]]] = {}
    for view, (spine, unit, leaf) in nodes:
        tree.setdefault(spine, {}).setdefault(unit, {}).setdefault(leaf, []).append(view)
    spines = []
    for spine in sorted(tree, key=_natural):
        s = Domain(spine)
        for unit in sorted(tree[spine], key=_natural):
            u = Domain(unit)
            for leaf in sorted(tree[spine][unit], key=_natural):
                members = sorted(tree[spine][unit][leaf], key=lambda v: _natural(v.name))
                lf = Domain(leaf, nodes=members)
                for v in members:
                    lf.counts.add(v.counts())
                u.children.append(lf)
                u.counts.add(lf.counts)
            s.children.append(u)
            s.counts.add(u.counts)
        spines.append(s)
    return spines


def _largest(nodes: Iterable[PlacedNode]) -> list[dict[str, Any]]:
    """Per accelerator model, the most devices a gang of whole-node replicas could take now
    inside one leaf, one Scalable Unit, and anywhere in the pool."""
    per: dict[str, dict[str, defaultdict[tuple[str, ...], int]]] = {}
    for view, (spine, unit, leaf) in nodes:
        if view.state == NodeState.SPARE or not view.model:
            continue
        sums = per.setdefault(
            view.model, {t: defaultdict(int) for t in ("leaf", "scalable_unit", "pool")}
        )
        whole = view.devices if view.state == NodeState.FREE else 0
        sums["leaf"][(spine, unit, leaf)] += whole
        sums["scalable_unit"][(spine, unit)] += whole
        sums["pool"][()] += whole
    return [
        {"model": model, **{tier: max(v.values(), default=0) for tier, v in sums.items()}}
        for model, sums in sorted(per.items())
    ]


def _queues(pools: Sequence[ResourcePool]) -> dict[int, dict[str, Any]]:
    """Each pool's queued jobs and the devices they ask for, by pending code (one query).
    The pool's total leaves out jobs that wait for others to succeed (``Job.after``): they
    ask for nothing yet, and an operator sizing the backlog should not count them."""
    asking = Q(waiting_for_jobs=False)
    rows = (
        Job.objects.filter(pool__in=pools, state=JobState.QUEUED)
        .values("pool_id", "pending_code")
        .annotate(
            jobs=Count("id"),
            devices=Coalesce(Sum("requested_devices"), 0),
            asking=Coalesce(Sum("requested_devices", filter=asking), 0),
        )
        .order_by("pool_id", "-jobs", "pending_code")
    )
    queues: dict[int, dict[str, Any]] = {
        p.pk: {"jobs": 0, "devices": 0, "by_code": []} for p in pools
    }
    for r in rows:
        queue = queues[r["pool_id"]]
        queue["jobs"] += r["jobs"]
        queue["devices"] += r["asking"]
        queue["by_code"].append(
            {"code": r["pending_code"], "jobs": r["jobs"], "devices": r["devices"]}
        )
    return queues


@dataclass(slots=True)
class PoolState:
    """What the metrics read of a pool: its totals, largest gangs now and queue."""

    pool: ResourcePool
    summary: Counts
    largest_gang: list[dict[str, Any]]
    queue: dict[str, Any]


def pool_states() -> list[PoolState]:
    """Every pool's state, in five queries however many pools (a scrape reads them all)."""
    pools = list(ResourcePool.objects.select_related("cluster").order_by("pk"))
    views, queues = node_views(pools), _queues(pools)
    states = []
    for pool in pools:
        total = Counts()
        for view, _ in views[pool.pk]:
            total.add(view.counts())
        states.append(PoolState(pool, total, _largest(views[pool.pk]), queues[pool.pk]))
    return states


def _domain_dict(d: Domain) -> dict[str, Any]:
    out: dict[str, Any] = {"name": d.name, "summary": d.counts}
    if d.nodes:
        out["nodes"] = d.nodes
    return out


def pool_topology(pool: ResourcePool) -> dict[str, Any]:
    """The pool's topology tree with counts, its largest startable gangs and its queue."""
    placed = node_views([pool])[pool.pk]
    spines = _group(placed)
    total = Counts()
    for s in spines:
        total.add(s.counts)
    return {
        "pool": {"id": pool.pk, "name": pool.name},
        "replica_size": REPLICA_SIZE,
        "summary": total,
        "largest_gang": _largest(placed),
        "queue": _queues([pool])[pool.pk],
        "spines": [
            {
                **_domain_dict(s),
                "units": [
                    {**_domain_dict(u), "leaves": [_domain_dict(lf) for lf in u.children]}
                    for u in s.children
                ],
            }
            for s in spines
        ],
    }
