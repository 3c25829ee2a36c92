"""Scored node choice for jobs that land on one node: best fit and fragmentation gradient.

Bucket binpack (``placement.py``) looks only at whole free devices, one class at a time.
Jobs of one replica (a notebook, an inference replica, a small task, a GPU share) decide
most of a shared cluster's fragmentation, and for them a finer choice pays:

* ``Packing.BEST_FIT``: the node, over every compatible class, that the job leaves with the
  least free capacity, CPU and accelerators weighted equally, each over the largest node
  (the Best-fit baseline of Weng et al., "Beware of Fragmentation", USENIX ATC 2023). A
  share goes on the partly used device it fills best.
* ``Packing.FRAGMENTATION``: the node and device whose placement least increases the
  expected fragmentation of the cluster for the expected mix of task shapes (FGD, same
  paper). The fragmentation of a node for a task shape is the free accelerator capacity
  that task could not use there: all of it when the task cannot run on the node at all
  (model, CPU, not enough devices), else the free remainder of devices too small for it.
  A small best-fit term (``BEST_FIT_WEIGHT``) decides between near-equal gradients.

Nodes are grouped by what the score depends on (``index.Sig``: free CPU, whole free devices,
remaining milli of shared devices), so a choice costs one evaluation per *distinct* kind of
node, and scores are cached per (kind of node, job shape) for one workload profile.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field

from .index import ClassIndex, ClusterState, NodeState, Sig
from .model import FULL_DEVICE_MILLI, Packing, Policy, ReplicaPlacement, TaskShape, Tier
from .placement import Placed
from .request import Demand, Request

SCORED = frozenset({Packing.BEST_FIT, Packing.FRAGMENTATION})
"""Packings that choose the node of a one-replica job by score (this module)."""

MAX_SPEC_CPU = 128_000
"""CPU millicores of the largest node, the normaliser of the best-fit score."""

BEST_FIT_WEIGHT = 0.05
"""Weight of the best-fit score (0..1) next to the fragmentation gradient (in devices).

Pure gradient descent treats every node whose gradient is within a few milli-devices of the
best as better, however empty it is; on the openb trace that spreads tasks and strands CPU.
With a small best-fit term, near-equal gradients go to the fuller node. The value was chosen
on two seeds (44, 46) of the openb default trace among 0.02, 0.05 and 0.1 (all three beat
pure gradient descent by 0.4-0.5 points there) and then checked on all ten seeds
(docs/benchmarks.md, "Trace-driven simulator")."""

Shape = tuple[int, int, int, int]  # (whole devices, share milli, cpu, memory) of one replica
ProfileRow = tuple[float, int, int, int]  # (weight, whole devices, share milli, cpu)


def _shape(d: Demand) -> Shape:
    return (d.k, d.milli, d.cpu, d.mem)


@dataclass(slots=True)
class _ModelProfile:
    """The profile as one model's nodes see it, arranged so that a node's fragmentation
    costs a few bisections: for each whole-device count and each share size, the CPU
    requests of the shapes that need it (sorted) and the prefix sums of their weights."""

    always: float  # weight of shapes that can never use this model's devices (or CPU only)
    whole: list[tuple[int, list[int], list[float]]]  # (devices, cpu sorted, weight prefix)
    shares: list[tuple[int, list[int], list[float]]]  # (milli, cpu sorted, weight prefix)


@dataclass(slots=True)
class ScoringCache:
    """Per-state caches, valid for one profile (kept across cycles by ``LiveCluster``)."""

    profile: tuple[TaskShape, ...] | None = None
    models: dict[str, _ModelProfile] = field(default_factory=dict)
    frag: dict[tuple[str, Sig], float] = field(default_factory=dict)
    delta: dict[tuple[str, Shape], dict[Sig, tuple[float, int]]] = field(default_factory=dict)

    def reset(self, profile: tuple[TaskShape, ...]) -> None:
        self.profile = profile
        self.models.clear()
        self.frag.clear()
        self.delta.clear()


def derived_profile(state: ClusterState, req: Request) -> tuple[TaskShape, ...]:
    """Without a given profile: the replicas running now and the job in hand."""
    counts: dict[TaskShape, int] = {}
    for entry in state.running.values():
        for alloc in entry.allocations:
            shape = TaskShape(
                accelerators=len(alloc.devices),
                milli=alloc.shares[0][1] if alloc.shares and not alloc.devices else 0,
                cpu_milli=alloc.cpu,
                memory_mib=alloc.mem,
            )
            counts[shape] = counts.get(shape, 0) + 1
    for d in req.demands:
        shape = TaskShape(d.k, d.milli, d.cpu, d.mem, d.group.models)
        counts[shape] = counts.get(shape, 0) + d.replicas
    return tuple(
        TaskShape(s.accelerators, s.milli, s.cpu_milli, s.memory_mib, s.models, c)
        for s, c in counts.items()
    )


def model_profile(profile: tuple[TaskShape, ...], model: str) -> _ModelProfile:
    total = sum(s.weight for s in profile) or 1.0
    always = 0.0
    whole: dict[int, list[tuple[int, float]]] = {}
    shares: dict[int, list[tuple[int, float]]] = {}
    for s in profile:
        w = s.weight / total
        if (s.accelerators == 0 and s.milli == 0) or (s.models and model not in s.models):
            always += w
        elif s.accelerators:
            whole.setdefault(s.accelerators, []).append((s.cpu_milli, w))
        else:
            shares.setdefault(s.milli, []).append((s.cpu_milli, w))

    def arrange(
        rows: dict[int, list[tuple[int, float]]],
    ) -> list[tuple[int, list[int], list[float]]]:
        out = []
        for size in sorted(rows):
            pairs = sorted(rows[size])
            prefix = [0.0]
            for _, w in pairs:
                prefix.append(prefix[-1] + w)
            out.append((size, [c for c, _ in pairs], prefix))
        return out

    return _ModelProfile(always, arrange(whole), arrange(shares))


def _model_profile(cache: ScoringCache, model: str) -> _ModelProfile:
    mp = cache.models.get(model)
    if mp is None:
        assert cache.profile is not None
        mp = cache.models[model] = model_profile(cache.profile, model)
    return mp


def node_fragmentation(sig: Sig, mp: _ModelProfile) -> float:
    """Expected free milli-devices of a node that a task of the profile could not use."""
    cpu, whole, rems = sig
    total = whole * FULL_DEVICE_MILLI + sum(rems)
    if total <= 0:
        return 0.0
    best_rem = rems[0] if rems else -1
    shared = total - whole * FULL_DEVICE_MILLI
    frag = mp.always * total
    for k, cpus, prefix in mp.whole:
        ok = prefix[bisect_right(cpus, cpu)] if whole >= k else 0.0
        frag += ok * shared + (prefix[-1] - ok) * total
    for milli, cpus, prefix in mp.shares:
        ok = prefix[bisect_right(cpus, cpu)] if whole > 0 or best_rem >= milli else 0.0
        if ok:
            frag += ok * sum(r for r in rems if r < milli)
        frag += (prefix[-1] - ok) * total
    return frag


def _frag(cache: ScoringCache, model: str, sig: Sig) -> float:
    key = (model, sig)
    value = cache.frag.get(key)
    if value is None:
        value = node_fragmentation(sig, _model_profile(cache, model))
        cache.frag[key] = value
    return value


def _fits(sig: Sig, shape: Shape) -> bool:
    cpu, whole, rems = sig
    k, milli, c, _ = shape
    if cpu < c:
        return False
    if k:
        return whole >= k
    if milli:
        return whole > 0 or (bool(rems) and rems[0] >= milli)
    return True


def _after(sig: Sig, shape: Shape, rem: int) -> Sig:
    """The node after the replica lands; ``rem``: the shared device used (-1: a fresh one)."""
    cpu, whole, rems = sig
    k, milli, c, _ = shape
    if k or not milli:
        return (cpu - c, whole - k, rems)
    if rem < 0:
        new = (*rems, FULL_DEVICE_MILLI - milli)
        return (cpu - c, whole - 1, tuple(sorted(new, reverse=True)))
    lst = list(rems)
    lst.remove(rem)
    lst.append(rem - milli)
    return (cpu - c, whole, tuple(sorted(lst, reverse=True)))


def _options(sig: Sig, shape: Shape) -> list[int]:
    """Devices a share may use on a node: partly used ones that fit (by remaining milli) and
    a fresh device (-1)."""
    _, whole, rems = sig
    milli = shape[1]
    opts = sorted({r for r in rems if r >= milli})
    if whole > 0:
        opts.append(-1)
    return opts


def _delta(cache: ScoringCache, model: str, sig: Sig, shape: Shape) -> tuple[float, int]:
    """Fragmentation gradient of placing ``shape`` on a node like ``sig``, and the shared
    device option that achieves it."""
    before = _frag(cache, model, sig)
    if not shape[1]:
        return _frag(cache, model, _after(sig, shape, -1)) - before, -1
    best = (0.0, -1)
    first = True
    for opt in _options(sig, shape):
        d = _frag(cache, model, _after(sig, shape, opt)) - before
        if first or d < best[0]:
            best, first = (d, opt), False
    return best


def _usable(ns: NodeState, d: Demand, req: Request) -> bool:
    job = req.job
    if not ns.usable_by(job):
        return False
    if d.selector and not ns.matches(d.selector):
        return False
    if d.arch is not None and ns.node.arch != d.arch:
        return False
    return ns.mem_free >= d.mem and ns.cpu_free >= d.cpu


Candidate = tuple[float, float, int, int, Sig]  # primary, tie-break, class order, option, sig


def _candidates(
    cache: ScoringCache, cls: ClassIndex, ci: int, shape: Shape, packing: Packing
) -> list[Candidate]:
    """Every kind of node of a class the replica fits on, with its score (lower is better)."""
    k, milli, c, _ = shape
    cls.enable_groups()
    by_whole = cls.sigs_by_whole
    frag = packing == Packing.FRAGMENTATION
    deltas: dict[Sig, tuple[float, int]] = {}
    if frag:
        deltas = cache.delta.setdefault((cls.model, shape), {})
    need = k * FULL_DEVICE_MILLI + milli
    out: list[Candidate] = []
    lowest = k if k else (1 if milli else 0)
    sigs = [sig for w in range(lowest, len(by_whole)) for sig in by_whole[w]]
    if milli:
        for best, same in cls.sigs_by_rem.items():
            if best >= milli:
                sigs.extend(same)
    for sig in sigs:
        cpu, whole, rems = sig
        if cpu < c:
            continue
        free = whole * FULL_DEVICE_MILLI + (sum(rems) if rems else 0) - need
        bf = 0.5 * (cpu - c) / MAX_SPEC_CPU + 0.5 * free / (8 * FULL_DEVICE_MILLI)
        if frag:
            hit = deltas.get(sig)
            if hit is None:
                hit = deltas[sig] = _delta(cache, cls.model, sig, shape)
            out.append((hit[0] / FULL_DEVICE_MILLI + BEST_FIT_WEIGHT * bf, bf, ci, hit[1], sig))
        elif milli:
            # best fit: the partly used device it fills best, else a fresh one
            opt = min((r for r in rems if r >= milli), default=-1)
            out.append((bf, 0.0, ci, opt, sig))
        else:
            out.append((bf, 0.0, ci, -1, sig))
    return out


def place_scored(
    state: ClusterState, classes: list[ClassIndex], req: Request, policy: Policy
) -> tuple[ClassIndex, Placed] | None:
    """Place a one-replica job on the best-scoring node of ``classes`` (quota already
    checked by the caller). The state holds the placement; ``None`` when nothing fits."""
    d = req.main
    shape = _shape(d)
    packing = policy.packing
    cache = state.scoring_cache
    if not isinstance(cache, ScoringCache):
        cache = state.scoring_cache = ScoringCache()
    if packing == Packing.FRAGMENTATION:
        profile = policy.workload_profile or derived_profile(state, req)
        if cache.profile is not profile:
            cache.reset(profile)
    ranked: list[Candidate] = []
    for ci, cls in enumerate(classes):
        if d.k <= cls.max_devices:
            ranked.extend(_candidates(cache, cls, ci, shape, packing))
    if not ranked:
        return None
    best = min(ranked, key=lambda r: r[:3])
    # Held nodes (delay scheduling) stay usable by higher-priority work, but with topology on
    # such work first looks at every other node: a long-running service that lands on a
    # held node keeps the starving job waiting for as long as it runs.
    spare = policy.topology and any(ns.held_by != req.job.job_id for ns in state.held)
    for avoid_held in (True, False) if spare else (False,):
        order = [best]
        tried = False
        while order:
            for _, _, ci, opt, sig in order:
                cls = classes[ci]
                members = cls.groups.get(sig) if cls.groups is not None else None
                if policy.topology and members and len(members) > 1 and len(cls.leaf_cap) > 1:
                    ns = _on_busiest_leaf(cls, members, d, req, avoid_held)
                    if ns is not None:
                        return cls, _take(state, ns, d, opt)
                    continue
                for ns in members or ():
                    if _usable(ns, d, req) and not (avoid_held and ns.held_by is not None):
                        return cls, _take(state, ns, d, opt)
            if tried:
                break
            # The best kind of node is held or lacks memory: rank everything once.
            tried = True
            order = sorted(ranked, key=lambda r: r[:3])[1:]
    return None


def _on_busiest_leaf(
    cls: ClassIndex,
    members: dict[NodeState, None],
    d: Demand,
    req: Request,
    avoid_held: bool = False,
) -> NodeState | None:
    """Among equally scored nodes, the usable one under the leaf with the fewest empty nodes.

    Scores only see a node; gangs need whole empty nodes under one leaf switch. Filling the
    leaves that are already busy keeps the emptier ones free for them (topology on only).
    """
    full = cls.max_devices
    best: NodeState | None = None
    best_empty = 0
    for ns in members:  # ties: the group's order, as without topology
        if avoid_held and ns.held_by is not None:
            continue
        empty = ns.caps[1][full]
        if (best is None or empty < best_empty) and _usable(ns, d, req):
            best, best_empty = ns, empty
    return best


def _take(state: ClusterState, ns: NodeState, d: Demand, opt: int) -> Placed:
    if d.milli:
        dev = -1
        if opt >= 0:
            dev = next(x for x, rem in sorted(ns.shares.items()) if rem == opt)
        else:
            dev = ns.free[0]
        state.take_share(ns, dev, d.milli, d.cpu, d.mem)
        devices: tuple[int, ...] = (dev,)
    else:
        devices = state.take_whole(ns, d.k, d.cpu, d.mem)
    replica = ReplicaPlacement(d.name, 0, ns.node.node_id, devices, d.milli, d.cpu, d.mem)
    return Placed([replica], [ns], Tier.NODE)
