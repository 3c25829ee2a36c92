"""A changed cluster for a what-if replay: more or fewer nodes, other quotas, more work.

"Would four more servers have cut our queue?", "can we retire this rack?" and "what if
this team could borrow more?" are asked of the same history, so a replay can run on the
cluster's nodes with some pools grown or shrunk (``resize``) and some quotas set anew
(``requota``; ``guarantee_problems`` holds them to the product's rule that guarantees never
exceed what a pool has). Added servers copy the pool's most common node shape (accelerator
model and count, CPU, memory, arch, labels) and come as new leaf switches and Scalable
Units of the sizes of the pool's largest, the way servers are bought: a rack at a time,
cabled to switches of their own. Removed servers are the pool's last ones (in the
order given, the node list's order), so the first leaves stay whole.

"What if next quarter brings 30% more jobs?" is asked with ``scale_load``: the same work
in the same pattern, more (or less) of it. Each job that arrived in the window is replayed
``factor`` times on average, the whole part always and one more with the fractional part
as its chance (a factor under 1 keeps each job with that chance); a copy arrives within
half an hour of its original, so the day's rhythm stays, without every copy landing at the
same second as a burst no team submits. Work already running when the window opened is the
cluster's state, not arriving work, and is neither copied nor dropped.

"When should we take four servers down for the driver upgrade?" is asked with
``maintenance``: some of a pool's servers out of service from a time in the window for some
hours, their running work stopped at the start (drained) or left to finish (cordoned only).
A pool's maintenance windows take its servers in the node list's order, the first window
the first ones, the next the ones after (a rolling upgrade); a replay asks it at several
start times to find the one the queue feels least.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, replace

from apps.scheduling.core import Node, Quota
from apps.scheduling.sim.workload import NodeFailure, SimJob


def gettext_noop(message: str) -> str:
    """Marks a message for the platform's translation catalogue (``make messages`` finds it
    by this name); the simulator itself stays plain Python and says it in English."""
    return message


class ScenarioError(ValueError):
    """A change that cannot be made (an unknown pool, removing more nodes than it has): the
    English, and the marked ``template`` with its ``values`` for the API to say it in its
    reader's language (``apps.scheduling.whatif.said``)."""

    def __init__(self, template: str, **values: object) -> None:
        super().__init__(template.format(**values))
        self.template = template
        self.values = values


QuotaKey = tuple[str, str, str]  # tenant, pool, accelerator model


def quota_key(q: Quota) -> QuotaKey:
    return (q.tenant, q.pool, q.accelerator_model)


@dataclass(frozen=True, slots=True)
class NodeChange:
    """``nodes`` servers added to (> 0) or removed from (< 0) the pool ``pool``."""

    pool: str
    nodes: int


def _shape(n: Node) -> tuple[object, ...]:
    return (
        n.accelerator_model,
        n.accelerator_vendor,
        n.accelerator_count,
        n.cpu_milli,
        n.memory_mib,
        n.arch,
        tuple(sorted(n.labels.items())),
    )


def _template(pool_nodes: list[Node]) -> Node:
    """The pool's most common shape; on a tie, the shape of the first node."""
    counts = Counter(_shape(n) for n in pool_nodes)
    best = max(counts.values())
    return next(n for n in pool_nodes if counts[_shape(n)] == best)


def largest_domains(nodes: tuple[Node, ...] | list[Node]) -> tuple[int, int]:
    """The nodes of the largest leaf switch and the largest Scalable Unit (0: none named)."""
    leaves = Counter((n.pool, n.leaf_switch) for n in nodes if n.leaf_switch)
    units = Counter((n.pool, n.scalable_unit) for n in nodes if n.scalable_unit)
    return max(leaves.values(), default=0), max(units.values(), default=0)


def _added(pool: str, pool_nodes: list[Node], count: int) -> list[Node]:
    template = _template(pool_nodes)
    per_leaf, per_su = largest_domains(pool_nodes)
    name = pool.replace("/", "-")
    # A pool without a known topology (no leaf or no SU names) stays without one.
    return [
        replace(
            template,
            node_id=f"whatif-{name}-{i}",
            free_devices=None,
            healthy=True,
            cordoned=False,
            leaf_switch=f"whatif-{name}-leaf{i // per_leaf}" if per_leaf else "",
            scalable_unit=f"whatif-{name}-su{i // per_su}" if per_su else "",
        )
        for i in range(count)
    ]


def resize(nodes: tuple[Node, ...], changes: list[NodeChange]) -> tuple[Node, ...]:
    """``nodes`` with each change made; raises ``ScenarioError`` for one that cannot be."""
    out = list(nodes)
    seen: set[str] = set()
    for change in changes:
        if change.pool in seen:
            raise ScenarioError(
                gettext_noop("pool {pool} is changed more than once"), pool=change.pool
            )
        seen.add(change.pool)
        pool_nodes = [n for n in out if n.pool == change.pool]
        if change.nodes > 0:
            if not pool_nodes:
                raise ScenarioError(
                    gettext_noop("pool {pool} has no node to copy"), pool=change.pool
                )
            out.extend(_added(change.pool, pool_nodes, change.nodes))
        elif change.nodes < 0:
            if -change.nodes > len(pool_nodes):
                raise ScenarioError(
                    gettext_noop("pool {pool} has {count} nodes; cannot remove {remove}"),
                    pool=change.pool,
                    count=len(pool_nodes),
                    remove=-change.nodes,
                )
            gone = {id(n) for n in pool_nodes[change.nodes :]}
            out = [n for n in out if id(n) not in gone]
    return tuple(out)


def requota(quotas: tuple[Quota, ...], changes: list[Quota]) -> tuple[Quota, ...]:
    """``quotas`` with each change's tenant x pool x model set to its guarantee and
    borrowing limit (a quota the tenant did not have is added)."""
    new = {quota_key(q): q for q in changes}
    if len(new) != len(changes):
        raise ScenarioError(gettext_noop("a tenant's quota in a pool is changed more than once"))
    kept = tuple(new.pop(quota_key(q), q) for q in quotas)
    return kept + tuple(new.values())


def guarantee_problems(
    nodes: tuple[Node, ...], quotas: tuple[Quota, ...], changed: list[Quota]
) -> list[ScenarioError]:
    """Where the guarantees of a pool's model add up to more than the pool has of it, for
    the pools and models whose quotas were ``changed``. A pool shrunk under its guarantees
    alone is replayed as it is: "what if we retire these servers?" asks what happens then."""
    capacity: Counter[tuple[str, str]] = Counter()
    for n in nodes:
        capacity[(n.pool, n.accelerator_model)] += n.accelerator_count
    touched = {(q.pool, q.accelerator_model) for q in changed}
    guaranteed: Counter[tuple[str, str]] = Counter()
    for q in quotas:
        guaranteed[(q.pool, q.accelerator_model)] += q.guarantee
    return [
        ScenarioError(
            gettext_noop(
                "Guarantees in {pool} for {model} would total {total}, but the replayed pool "
                "has {capacity}."
            ),
            pool=pool,
            model=model,
            total=total,
            capacity=capacity[(pool, model)],
        )
        for (pool, model), total in sorted(guaranteed.items())
        if total > capacity[(pool, model)] and (pool, model) in touched
    ]


MAX_LOAD = 5.0
"""The largest load factor: five times the window's work already asks about a cluster the
history says little of."""

COPY_SPREAD_S = 1800.0
"""A copy arrives up to this long before or after its original."""


@dataclass(frozen=True, slots=True)
class LoadChange:
    """What ``scale_load`` did: the factor, and the jobs it added and dropped."""

    factor: float
    added: int
    dropped: int


def scale_load(
    jobs: tuple[SimJob, ...],
    factor: float,
    *,
    seed: int,
    horizon: float,
    carried: frozenset[str] = frozenset(),
) -> tuple[tuple[SimJob, ...], LoadChange]:
    """``jobs`` with the arriving ones (all but ``carried``) replayed ``factor`` times on
    average (see the module's docstring); copies are named ``<job id>+<n>``. The same seed
    gives the same jobs, and a job is copied or dropped alike in every workload it is part
    of. Returned in arrival order."""
    if not 0 < factor <= MAX_LOAD:
        raise ScenarioError(
            gettext_noop("the load factor must be above 0 and at most {most}"),
            most=f"{MAX_LOAD:g}",
        )
    whole = int(factor)
    part = factor - whole
    out: list[SimJob] = []
    added = dropped = 0
    for job in jobs:
        if job.job_id in carried:
            out.append(job)
            continue
        # Each job draws from its own stream: a window moved by an hour changes the draws
        # of the jobs that came in or left, not of every job after them.
        rng = random.Random(f"{seed}:{job.job_id}")
        times = whole + (1 if rng.random() < part else 0)
        if times == 0:
            dropped += 1
            continue
        out.append(job)
        for n in range(1, times):
            shift = rng.uniform(-COPY_SPREAD_S, COPY_SPREAD_S)
            submit = min(max(job.submit + shift, 0.0), max(horizon - 1.0, 0.0))
            out.append(replace(job, job_id=f"{job.job_id}+{n}", submit=submit))
            added += 1
    out.sort(key=lambda j: j.submit)  # stable: originals keep their order
    return _linked(out), LoadChange(factor=factor, added=added, dropped=dropped)


def _linked(jobs: list[SimJob]) -> tuple[SimJob, ...]:
    """Pipeline steps (``SimJob.after``) after a load change: a copy ``<id>+<n>`` starts
    after the n-th copies of the steps before it where they were made, else after the
    originals; a step that was dropped holds nothing back."""
    ids = {j.job_id for j in jobs}
    out = []
    for job in jobs:
        if not job.after:
            out.append(job)
            continue
        _, plus, n = job.job_id.rpartition("+")
        after = []
        for before in job.after:
            copy = f"{before}+{n}"
            if plus and copy in ids:
                after.append(copy)
            elif before in ids:
                after.append(before)
        out.append(replace(job, after=tuple(after)))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Maintenance:
    """``nodes`` servers of ``pool`` out of service from ``start`` s into the window for
    ``hours``; ``drain``: their running work stops at the start (else it runs on, and the
    servers take no new work)."""

    pool: str
    nodes: int
    start: float
    hours: float
    drain: bool = True


def maintenance(nodes: tuple[Node, ...], windows: list[Maintenance]) -> tuple[NodeFailure, ...]:
    """The outages of ``windows`` on ``nodes`` (the module's docstring), one per server;
    raises ``ScenarioError`` where a pool has too few servers."""
    taken: Counter[str] = Counter()
    failures: list[NodeFailure] = []
    for w in windows:
        if w.nodes < 1 or w.hours <= 0 or w.start < 0:
            raise ScenarioError(
                gettext_noop("a maintenance window needs a node, a positive length and a start")
            )
        pool_nodes = [n for n in nodes if n.pool == w.pool]
        first = taken[w.pool]
        if first + w.nodes > len(pool_nodes):
            raise ScenarioError(
                gettext_noop(
                    "pool {pool} has {count} nodes; its maintenance windows ask for {want}"
                ),
                pool=w.pool,
                count=len(pool_nodes),
                want=first + w.nodes,
            )
        taken[w.pool] += w.nodes
        failures += [
            NodeFailure(w.start, n.node_id, w.hours * 3600, drain_after=0.0 if w.drain else None)
            for n in pool_nodes[first : first + w.nodes]
        ]
    return tuple(failures)
