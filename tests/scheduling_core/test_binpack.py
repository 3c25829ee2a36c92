"""BinPack keeps whole nodes free; spread is the baseline; fragmentation is measured."""

from apps.scheduling.core import Fragmentation, Packing, fragmentation

from .helpers import job, nodes, placed, run, running, snap, where, whole


def _half_used():
    # n00000: 5 of 8 used (3 free); n00001: empty.
    return snap(nodes(2), [running("r", {"n00000": range(5)})])


def test_binpack_takes_the_fullest_node_that_fits():
    d = run(_half_used(), [job("one", whole(1, 1))])
    assert where(placed(d)["one"]) == [("n00000", (5,))]


def test_spread_takes_the_emptiest_node():
    d = run(_half_used(), [job("one", whole(1, 1))], packing=Packing.SPREAD)
    assert where(placed(d)["one"]) == [("n00001", (0,))]


def test_binpack_skips_nodes_too_small_for_the_replica():
    d = run(_half_used(), [job("four", whole(1, 4))])
    assert where(placed(d)["four"]) == [("n00001", (0, 1, 2, 3))]


def test_fragmentation_counts_free_devices_that_cannot_host_a_full_node_replica():
    cluster = snap(
        nodes(4),
        [
            running("a", {"n00001": range(5)}),
            running("b", {"n00002": range(8)}),
            running("c", {"n00003": range(3)}),
        ],
    )
    assert fragmentation(cluster) == Fragmentation(
        replica_size=8,
        free_devices=16,
        stranded_devices=8,
        whole_free_nodes=1,
        hostable_replicas=1,
    )
    assert fragmentation(cluster, replica_size=4).stranded_devices == 3
    assert fragmentation(cluster).stranded_ratio == 0.5


def test_binpack_leaves_whole_nodes_free_where_spread_fragments():
    queue = [job(f"j{i}", whole(1, 1), waited=10 - i) for i in range(8)]
    packed = run(snap(nodes(2)), queue)
    spread = run(snap(nodes(2)), queue, packing=Packing.SPREAD)
    assert len(packed.placements) == len(spread.placements) == 8
    assert packed.fragmentation.whole_free_nodes == 1
    assert packed.fragmentation.stranded_devices == 0
    assert spread.fragmentation.whole_free_nodes == 0
    assert spread.fragmentation.stranded_devices == 8


def test_decisions_report_fragmentation_after_the_cycle():
    d = run(snap(nodes(1)), [job("j", whole(1, 3))])
    assert d.fragmentation.free_devices == 5
    assert d.fragmentation.stranded_devices == 5
