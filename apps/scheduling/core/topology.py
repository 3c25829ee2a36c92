"""Network topology: which domains to try, and in which order to visit their nodes.

The reference fabric is servers (8 GPUs behind NVSwitch) under leaf switches, leaves grouped
into Scalable Units, SUs joined by the spine. A gang that stays under one leaf trains
measurably faster (>20% in production), so a "soft" job tries one node, then one leaf, one
SU, one spine, then anything; a "hard" job stops at its ``max_tier``.

Inside a domain, sub-domains are visited largest-capacity first (so a gang touches as few
leaves as possible) and nodes best-fit first (binpack) or emptiest first (spread).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import cast

from .index import ClassIndex, LeafKey, NodeState, SuKey
from .model import Packing, Tier, TopologyMode, TopologyRequirement

# Each tier's name in a pending reason (a key of ``text.PHRASES``).
TIER_PHRASES = {
    Tier.NODE: "tierNode",
    Tier.LEAF: "tierLeaf",
    Tier.SU: "tierSu",
    Tier.SPINE: "tierSpine",
    Tier.ANY: "tierPool",
}

DomainKey = LeafKey | SuKey | str | NodeState | None


def tiers_for(req: TopologyRequirement, replicas: int, *, topology_policy: bool) -> list[Tier]:
    """Tiers to try, tightest first. A single replica is always inside one node."""
    if replicas <= 1:
        return [Tier.ANY]
    if req.mode == TopologyMode.HARD:
        return [t for t in Tier if t <= req.max_tier]
    if req.mode == TopologyMode.SOFT and topology_policy:
        return list(Tier)
    return [Tier.ANY]


def tier_of(nodes: list[NodeState]) -> Tier:
    """The tightest tier that contains all the given nodes."""
    first = nodes[0]
    if all(ns is first for ns in nodes):
        return Tier.NODE
    if all(ns.leaf_key == first.leaf_key for ns in nodes):
        return Tier.LEAF
    if all(ns.su_key == first.su_key for ns in nodes):
        return Tier.SU
    if all(ns.spine_key == first.spine_key for ns in nodes):
        return Tier.SPINE
    return Tier.ANY


def domain_caps(
    cls: ClassIndex, tier: Tier
) -> dict[LeafKey, list[int]] | dict[SuKey, list[int]] | dict[str, list[int]]:
    if tier == Tier.LEAF:
        return cls.leaf_cap
    if tier == Tier.SU:
        return cls.su_cap
    return cls.spine_cap


def domain_key_of(ns: NodeState, tier: Tier) -> object:
    """The key of the leaf, unit or spine domain a node lies in (``None`` for ``ANY``; a
    ``NODE`` domain is the node itself, see ``in_domain``)."""
    if tier == Tier.LEAF:
        return ns.leaf_key
    if tier == Tier.SU:
        return ns.su_key
    if tier == Tier.SPINE:
        return ns.spine_key
    return None


def in_domain(ns: NodeState, tier: Tier, key: DomainKey) -> bool:
    if tier == Tier.ANY:
        return True
    if tier == Tier.NODE:
        return ns is key
    if tier == Tier.LEAF:
        return ns.leaf_key == key
    if tier == Tier.SU:
        return ns.su_key == key
    return ns.spine_key == key


def _sorted_nodes(nodes: list[NodeState], k: int, packing: Packing) -> list[NodeState]:
    fit = [ns for ns in nodes if len(ns.free) >= k]
    if packing != Packing.SPREAD:
        fit.sort(key=lambda ns: (len(ns.free), ns.idx))
    else:
        fit.sort(key=lambda ns: (-len(ns.free), ns.idx))
    return fit


def _leaf_order(cls: ClassIndex, leaves: list[LeafKey], kk: int) -> list[LeafKey]:
    return sorted(leaves, key=lambda lk: (-cls.leaf_cap[lk][kk], lk))


def _su_nodes(cls: ClassIndex, su: SuKey, k: int, packing: Packing) -> Iterator[NodeState]:
    kk = max(k, 1)
    for leaf in _leaf_order(cls, cls.su_leaves[su], kk):
        if k > 0 and cls.leaf_cap[leaf][kk] == 0:
            continue
        yield from _sorted_nodes(cls.leaf_nodes[leaf], k, packing)


def _spine_nodes(cls: ClassIndex, spine: str, k: int, packing: Packing) -> Iterator[NodeState]:
    kk = max(k, 1)
    sus = sorted(cls.spine_sus[spine], key=lambda su: (-cls.su_cap[su][kk], su))
    for su in sus:
        if k > 0 and cls.su_cap[su][kk] == 0:
            continue
        yield from _su_nodes(cls, su, k, packing)


def domain_nodes(
    cls: ClassIndex, tier: Tier, key: DomainKey, k: int, packing: Packing
) -> Iterator[NodeState]:
    """Nodes of a domain that have at least ``k`` whole free devices, in preference order.

    Lazy: sub-domains are only sorted when reached, so a gang that fits in the first leaf of
    an SU never looks at the others.
    """
    if tier == Tier.NODE:
        assert isinstance(key, NodeState)
        if len(key.free) >= k:
            yield key
    elif tier == Tier.LEAF:
        yield from _sorted_nodes(cls.leaf_nodes[key], k, packing)  # type: ignore[index]
    elif tier == Tier.SU:
        yield from _su_nodes(cls, key, k, packing)  # type: ignore[arg-type]
    elif tier == Tier.SPINE:
        yield from _spine_nodes(cls, key, k, packing)  # type: ignore[arg-type]
    else:
        kk = max(k, 1)
        for spine in sorted(cls.spine_sus, key=lambda s: (-cls.spine_cap[s][kk], s)):
            yield from _spine_nodes(cls, spine, k, packing)


def candidate_domains(
    cls: ClassIndex, tier: Tier, whole_need: list[tuple[int, int]], packing: Packing
) -> list[DomainKey]:
    """Domains of a tier whose free capacity can host every whole-device group.

    ``whole_need`` is ``[(devices per replica, replicas)]``. The test is necessary, not
    sufficient (CPU, memory, labels and holds are checked when nodes are visited). Binpack
    tries the smallest sufficient domain first, keeping large empty domains for large gangs.
    """
    caps = domain_caps(cls, tier)
    fits: list[tuple[int, DomainKey]]
    if len(whole_need) == 1:
        # The common case, kept tight: it runs over every leaf of the pool per gang.
        k, r = whole_need[0]
        fits = [(cap[1], key) for key, cap in caps.items() if cap[k] >= r]
    else:
        total = sum(k * r for k, r in whole_need)
        fits = [
            (cap[1], key)
            for key, cap in caps.items()
            if cap[1] >= total and all(cap[k] >= r for k, r in whole_need)
        ]
    if packing == Packing.SPREAD:
        fits = [(-free, key) for free, key in fits]
    fits.sort(key=lambda t: t[0])  # stable: ties keep the (deterministic) index order
    return [key for _, key in fits]


def domain_sizes(cls: ClassIndex, tier: Tier) -> Mapping[DomainKey, int]:
    """Number of nodes in each domain of a tier (static for the cycle)."""
    if tier == Tier.LEAF:
        return cls.leaf_size  # type: ignore[return-value]
    if tier == Tier.SU:
        return cls.su_size  # type: ignore[return-value]
    if tier == Tier.SPINE:
        return cls.spine_size  # type: ignore[return-value]
    return {None: len(cls.nodes)}


def domain_members(cls: ClassIndex, tier: Tier, key: DomainKey) -> list[NodeState]:
    """All nodes of a domain, in index order."""
    if tier == Tier.ANY:
        return cls.nodes
    if tier == Tier.NODE:
        return [cast(NodeState, key)]
    if tier == Tier.LEAF:
        leaves = [cast(LeafKey, key)]
    elif tier == Tier.SU:
        leaves = cls.su_leaves[cast(SuKey, key)]
    else:
        leaves = [leaf for su in cls.spine_sus[cast(str, key)] for leaf in cls.su_leaves[su]]
    return [ns for leaf in leaves for ns in cls.leaf_nodes[leaf]]


def could_ever_fit(cls: ClassIndex, tier: Tier, whole_need: list[tuple[int, int]]) -> bool:
    """Whether the largest domain of a tier could host the gang even if it were empty."""
    if tier == Tier.NODE:
        return sum(k * r for k, r in whole_need) <= cls.max_devices
    biggest = max(domain_sizes(cls, tier).values(), default=0)
    per_node = cls.max_devices
    return all(biggest * (per_node // k) >= r for k, r in whole_need) and biggest * per_node >= sum(
        k * r for k, r in whole_need
    )


def largest_block(cls: ClassIndex, tier: Tier, k: int) -> int:
    """Most devices usable by ``k``-device replicas inside one domain of ``tier``."""
    kk = max(k, 1)
    if tier == Tier.NODE:
        for f in range(cls.max_devices, 0, -1):
            if cls.buckets[f]:
                return (f // kk) * kk
        return 0
    if tier == Tier.ANY:
        return cls.cap[kk] * kk
    caps = domain_caps(cls, tier)
    return max((cap[kk] * kk for cap in caps.values()), default=0)
