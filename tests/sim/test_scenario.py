"""Pools grown or shrunk for a what-if replay (apps/scheduling/sim/scenario.py)."""

import pytest

from apps.scheduling.core import Node, Quota
from apps.scheduling.sim.scenario import (
    NodeChange,
    ScenarioError,
    guarantee_problems,
    requota,
    resize,
)


def _node(i: int, pool: str = "c/a800", *, leaf: str = "", count: int = 8, **kw) -> Node:
    return Node(
        node_id=str(i),
        pool=pool,
        accelerator_model=kw.pop("model", "A800"),
        accelerator_count=count,
        cpu_milli=128_000,
        memory_mib=1 << 20,
        leaf_switch=leaf,
        scalable_unit="su0" if leaf else "",
        spine="spine0",
        labels={"zone": "x"},
        **kw,
    )


CLUSTER = (
    _node(1, leaf="l0"),
    _node(2, leaf="l0"),
    _node(3, leaf="l0"),
    _node(4, leaf="l1"),
    _node(5, leaf="l1", count=4, model="H100"),  # the odd one out: not copied
    _node(6, "c/infer", count=2),
)


def test_added_nodes_copy_the_common_shape_in_new_leaves_and_sus_of_the_largest_size():
    out = resize(CLUSTER, [NodeChange("c/a800", 4)])
    assert out[: len(CLUSTER)] == CLUSTER  # the real nodes are untouched
    added = out[len(CLUSTER) :]
    assert [n.node_id for n in added] == [f"whatif-c-a800-{i}" for i in range(4)]
    assert {(n.accelerator_model, n.accelerator_count) for n in added} == {("A800", 8)}
    assert all(n.pool == "c/a800" and n.labels == {"zone": "x"} for n in added)
    assert all(n.healthy and not n.cordoned and n.free_devices is None for n in added)
    # l0 has three nodes, so new leaves hold three; su0 has all five, so one new SU.
    assert [n.leaf_switch for n in added] == ["whatif-c-a800-leaf0"] * 3 + ["whatif-c-a800-leaf1"]
    assert {n.scalable_unit for n in added} == {"whatif-c-a800-su0"}
    # Seven more: a second SU after five.
    more = resize(CLUSTER, [NodeChange("c/a800", 7)])[len(CLUSTER) :]
    assert [n.scalable_unit[-3:] for n in more] == ["su0"] * 5 + ["su1"] * 2
    assert {n.spine for n in added} == {"spine0"}


def test_a_pool_without_topology_grows_without_one():
    [added] = resize(CLUSTER, [NodeChange("c/infer", 1)])[len(CLUSTER) :]
    assert (added.accelerator_count, added.leaf_switch, added.scalable_unit) == (2, "", "")


def test_removed_nodes_are_the_pools_last():
    out = resize(CLUSTER, [NodeChange("c/a800", -2), NodeChange("c/infer", -1)])
    assert [n.node_id for n in out] == ["1", "2", "3"]
    assert resize(CLUSTER, []) == CLUSTER


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ([NodeChange("c/a800", -6)], "pool c/a800 has 5 nodes; cannot remove 6"),
        ([NodeChange("c/none", 2)], "pool c/none has no node to copy"),
        ([NodeChange("c/a800", 1), NodeChange("c/a800", -1)], "changed more than once"),
    ],
)
def test_changes_that_cannot_be_made_say_why(changes, message):
    with pytest.raises(ScenarioError, match=message):
        resize(CLUSTER, changes)


def _quota(tenant: str, guarantee: int, borrow: int = 0, pool: str = "c/a800") -> Quota:
    return Quota(tenant=tenant, pool=pool, accelerator_model="A800", guarantee=guarantee,
                 borrow_limit=borrow)  # fmt: skip


def test_requota_sets_a_quota_in_place_or_adds_one():
    quotas = (_quota("vision", 16, 8), _quota("nlp", 8))
    out = requota(quotas, [_quota("nlp", 4, 12), _quota("speech", 2)])
    assert out == (_quota("vision", 16, 8), _quota("nlp", 4, 12), _quota("speech", 2))
    assert requota(quotas, []) == quotas
    with pytest.raises(ScenarioError, match="changed more than once"):
        requota(quotas, [_quota("nlp", 1), _quota("nlp", 2)])


def test_guarantees_are_checked_where_a_quota_changed():
    # c/a800 has four 8-GPU A800 nodes (and an H100 node, another model).
    a800 = [n for n in CLUSTER if n.pool == "c/a800" and n.accelerator_model == "A800"]
    assert sum(n.accelerator_count for n in a800) == 32
    quotas = (_quota("vision", 20), _quota("nlp", 12))
    assert guarantee_problems(CLUSTER, quotas, [_quota("nlp", 12)]) == []
    raised = requota(quotas, [_quota("nlp", 13)])
    assert guarantee_problems(CLUSTER, raised, [_quota("nlp", 13)]) == [
        "Guarantees in c/a800 for A800 would total 33, but the replayed pool has 32."
    ]
    # A pool shrunk under its guarantees is replayed as it is when no quota there changed.
    shrunk = resize(CLUSTER, [NodeChange("c/a800", -3)])
    assert guarantee_problems(shrunk, quotas, []) == []
    assert guarantee_problems(shrunk, quotas, [_quota("other", 0, pool="c/infer")]) == []
