"""The capacity index: built from the snapshot, undone exactly, consistent with a scan."""

import gc
from dataclasses import replace

import pytest

from apps.scheduling.core import Policy, Scheduler, schedule
from apps.scheduling.core.index import ClusterState

from .helpers import NOW, nodes, running, snap


def _fingerprint(state):
    out = []
    for ns in state.node_list:
        out.append(
            (
                ns.node.node_id,
                tuple(ns.free),
                ns.cpu_free,
                ns.mem_free,
                tuple(sorted(ns.shares.items())),
                tuple(sorted(ns.share_users.items())),
            )
        )
    caps = {
        k: (
            list(c.cap),
            {lk: list(v) for lk, v in c.leaf_cap.items()},
            {s: list(v) for s, v in c.su_cap.items()},
            list(c.shared),
            [sorted(ns.idx for ns in b) for b in c.buckets],
        )
        for k, c in state.classes.items()
    }
    return out, caps, dict(state.ledger.usage), sorted(state.running)


def _check_aggregates(state):
    for cls in state.classes.values():
        for k in range(1, cls.max_devices + 1):
            assert cls.cap[k] == sum(len(ns.free) // k for ns in cls.nodes)
            for leaf, members in cls.leaf_nodes.items():
                assert cls.leaf_cap[leaf][k] == sum(len(ns.free) // k for ns in members)
        for f, bucket in enumerate(cls.buckets):
            assert all(len(ns.free) == f for ns in bucket)


def test_rollback_restores_everything():
    cluster = snap(nodes(4), [running("v", {"n00000": range(3)}, shares={"n00001": [(2, 300)]})])
    state = ClusterState(cluster, quotas_enabled=True)
    before = _fingerprint(state)
    mark = state.mark()
    state.release_job("v")
    ns = state.nodes["n00002"]
    state.take_whole(ns, 5, 100, 10)
    state.take_share(state.nodes["n00003"], 0, 250, 0, 0)
    state.take_share(state.nodes["n00001"], 2, 500, 0, 0)
    state.charge(("t1", "train", "A800"), 5000)
    state.hold(ns, "x", 3)
    _check_aggregates(state)
    state.rollback(mark)
    assert _fingerprint(state) == before
    assert state.held == []
    _check_aggregates(state)


def test_free_devices_and_running_allocations_combine():
    a, b = nodes(2)
    cluster = snap(
        [replace(a, free_devices=frozenset({1, 2, 3})), b], [running("r", {"n00000": [2]})]
    )
    state = ClusterState(cluster, quotas_enabled=False)
    assert state.nodes["n00000"].free == [1, 3]
    assert state.warnings == []


def test_inconsistent_snapshots_give_warnings_not_crashes():
    cluster = snap(
        nodes(1),
        [
            running("a", {"n00000": [0, 1]}),
            running("b", {"n00000": [1]}),
            running("c", {"gone": [0]}),
        ],
    )
    state = ClusterState(cluster, quotas_enabled=False)
    assert state.warnings == [
        "device 1 of node n00000 is allocated twice (job b); counted once",
        "job c runs on unknown node gone",
    ]
    assert state.nodes["n00000"].free == [2, 3, 4, 5, 6, 7]


def test_a_scheduler_decides_one_cycle_only():
    s = Scheduler(snap(nodes(1)), Policy(), NOW)
    s.run([])
    with pytest.raises(RuntimeError, match="one cycle"):
        s.run([])


def test_the_garbage_collector_is_restored_after_a_cycle():
    assert gc.isenabled()
    schedule(snap(nodes(1)), [], Policy(), NOW)
    assert gc.isenabled()
