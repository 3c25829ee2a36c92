"""Heterogeneous hardware: model, vendor, architecture, labels, health."""

from dataclasses import replace

from apps.scheduling.core import PendingCode

from .helpers import job, nodes, pending, placed, run, snap, whole


def _mixed():
    a800 = nodes(2)
    ascend = nodes(2, model="910B", vendor="huawei", arch="arm64", prefix="h")
    return snap([*a800, *ascend])


def _node_ids(d, job_id):
    return sorted({r.node_id for r in placed(d)[job_id].replicas})


def test_model_constraint_is_honoured():
    d = run(_mixed(), [job("npu", whole(1, 8, models=frozenset({"910B"})))])
    assert _node_ids(d, "npu") == ["h00000"]
    assert placed(d)["npu"].accelerator_model == "910B"


def test_vendor_and_arch_constraints_are_honoured():
    d = run(
        _mixed(), [job("arm", whole(1, 1, arch="arm64")), job("nv", whole(1, 1, vendor="NVIDIA"))]
    )
    assert _node_ids(d, "arm") == ["h00000"]
    assert _node_ids(d, "nv") == ["n00000"]


def test_no_match_names_what_the_pool_offers():
    d = run(_mixed(), [job("h100", whole(1, 8, models=frozenset({"H100"})))])
    reason = pending(d)["h100"]
    assert reason.code == PendingCode.NO_MATCH
    assert reason.message == (
        "no schedulable node in pool 'train' matches model in [H100]; the pool has "
        "910B/huawei/arm64, A800/nvidia/x86_64"
    )


def test_unknown_pool_is_reported():
    d = run(_mixed(), [job("x", whole(1, 1), pool="nope")])
    assert pending(d)["x"].message == "pool 'nope' does not exist"


def test_a_job_runs_on_one_model_only():
    # One free A800 node and one free 910B node: a 2 x 8 gang accepting both must not mix.
    d = run(
        _mixed(),
        [
            job("pin", whole(1, 8, models=frozenset({"910B"})), waited=10),
            job("pin2", whole(1, 8, models=frozenset({"A800"})), waited=10),
            job("mix", whole(2, 8)),
        ],
    )
    assert sorted(placed(d)) == ["pin", "pin2"]


def test_unhealthy_and_cordoned_nodes_are_never_used():
    sick, cordoned, good = nodes(3)
    cluster = snap([replace(sick, healthy=False), replace(cordoned, cordoned=True), good])
    d = run(cluster, [job("a", whole(1, 8)), job("b", whole(1, 8))])
    assert _node_ids(d, "a") == ["n00002"]
    assert "b" not in placed(d)


def test_node_selector_labels_are_matched():
    plain, labelled = nodes(2)
    cluster = snap([plain, replace(labelled, labels={"ib": "hdr"})])
    d = run(cluster, [job("ib", whole(1, 1, node_selector={"ib": "hdr"}))])
    assert _node_ids(d, "ib") == ["n00001"]


def test_broken_devices_are_not_free():
    (n,) = nodes(1)
    cluster = snap([replace(n, free_devices=frozenset({0, 1, 2, 3, 5, 6, 7}))])
    d = run(cluster, [job("a", whole(1, 8)), job("b", whole(1, 7))])
    assert "a" not in placed(d)
    assert placed(d)["b"].replicas[0].devices == (0, 1, 2, 3, 5, 6, 7)
