"""Topology: one leaf, then one Scalable Unit, then the spine; hard never crosses."""

from apps.scheduling.core import PendingCode, Tier, TopologyMode

from .helpers import job, nodes, pending, placed, run, running, snap, where, whole

SOFT, HARD = TopologyMode.SOFT, TopologyMode.HARD


def _cluster(busy):
    # 8 nodes: leaf0 = n0,n1 | leaf1 = n2,n3 (SU 0) | leaf2 = n4,n5 | leaf3 = n6,n7 (SU 1)
    return snap(nodes(8), [running(f"r{n}", {f"n0000{n}": range(8)}) for n in busy])


def _nodes_of(p):
    return sorted({r.node_id for r in p.replicas})


def test_soft_prefers_one_leaf_over_best_fit_nodes_in_several_leaves():
    # Free: n0 (leaf0), n2, n3 (leaf1). Plain best fit would take n0 and n2.
    cluster = _cluster([1, 4, 5, 6, 7])
    d = run(cluster, [job("g", whole(2, 8), topology=SOFT)])
    p = placed(d)["g"]
    assert _nodes_of(p) == ["n00002", "n00003"]
    assert p.tier == Tier.LEAF
    no_topo = run(cluster, [job("g", whole(2, 8))])
    assert _nodes_of(placed(no_topo)["g"]) == ["n00000", "n00002"]
    assert placed(no_topo)["g"].tier == Tier.SU


def test_topology_policy_off_ignores_soft_requirements():
    d = run(_cluster([1, 4, 5, 6, 7]), [job("g", whole(2, 8), topology=SOFT)], topology=False)
    assert _nodes_of(placed(d)["g"]) == ["n00000", "n00002"]


def test_soft_packs_small_gangs_onto_one_node_first():
    d = run(_cluster([]), [job("g", whole(2, 4), topology=SOFT)])
    assert placed(d)["g"].tier == Tier.NODE


def test_soft_falls_back_to_one_su_then_the_spine():
    d = run(_cluster([1, 3, 5, 7]), [job("g", whole(2, 8), topology=SOFT)])
    assert placed(d)["g"].tier == Tier.SU
    assert _nodes_of(placed(d)["g"]) == ["n00000", "n00002"]
    d = run(_cluster([1, 2, 3, 5, 6, 7]), [job("g", whole(2, 8), topology=SOFT)])
    assert placed(d)["g"].tier == Tier.SPINE


def test_hard_leaf_never_crosses_a_leaf():
    d = run(_cluster([1, 3, 5, 7]), [job("g", whole(2, 8), topology=HARD, max_tier=Tier.LEAF)])
    assert d.placements == ()
    reason = pending(d)["g"]
    assert reason.code == PendingCode.TOPOLOGY
    assert reason.message == (
        "needs 16 A800 (2 x 8) under one leaf switch; largest free block under one leaf switch is 8"
    )


def test_hard_su_may_cross_leaves_but_not_scalable_units():
    gang = job("g", whole(2, 8), topology=HARD, max_tier=Tier.SU)
    d = run(_cluster([1, 3, 5, 7]), [gang])
    assert placed(d)["g"].tier == Tier.SU
    d = run(_cluster([1, 2, 3, 5, 6, 7]), [gang])
    assert d.placements == ()
    assert pending(d)["g"].message == (
        "needs 16 A800 (2 x 8) under one Scalable Unit; largest free block under one Scalable "
        "Unit is 8"
    )


def test_hard_gang_picks_the_smallest_leaf_that_fits():
    # leaf0 fully free (16), leaf1 has 12 free: a 12-device hard-leaf gang goes to leaf1.
    cluster = snap(nodes(4), [running("r", {"n00002": range(4)})])
    d = run(cluster, [job("g", whole(3, 4), topology=HARD, max_tier=Tier.LEAF)])
    assert _nodes_of(placed(d)["g"]) == ["n00002", "n00003"]


def test_a_gang_fills_as_few_leaves_as_possible_inside_an_su():
    # SU0 = leaf0 (n0, n1 free) + leaf1 (n3 free). 3 nodes needed: leaf0 first, then leaf1.
    d = run(_cluster([2, 4, 5, 6, 7]), [job("g", whole(3, 8), topology=HARD, max_tier=Tier.SU)])
    assert _nodes_of(placed(d)["g"]) == ["n00000", "n00001", "n00003"]
    assert sorted(where(placed(d)["g"]))[0] == ("n00000", tuple(range(8)))
