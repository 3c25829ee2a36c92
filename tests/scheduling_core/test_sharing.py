"""GPU sharing: fractional shares packed on shared devices, never above 1000 milli."""

from apps.scheduling.core import PendingCode

from .helpers import job, nodes, pending, placed, quota, run, running, share, snap, victims, whole


def _r(d, job_id):
    return [(r.node_id, r.devices, r.share_milli) for r in placed(d)[job_id].replicas]


def test_shares_pack_onto_one_device_up_to_1000_milli():
    queue = [
        job("a", share(1, 500), waited=3),
        job("b", share(1, 500), waited=2),
        job("c", share(1, 300), waited=1),
    ]
    d = run(snap(nodes(1)), queue)
    assert _r(d, "a") == [("n00000", (0,), 500)]
    assert _r(d, "b") == [("n00000", (0,), 500)]
    assert _r(d, "c") == [("n00000", (1,), 300)]
    assert d.fragmentation.free_devices == 6


def test_best_fitting_shared_device_is_chosen():
    cluster = snap(
        nodes(1),
        [
            running("x", {}, shares={"n00000": [(0, 800)]}),
            running("y", {}, shares={"n00000": [(1, 400)]}),
        ],
    )
    d = run(cluster, [job("s", share(1, 150))])
    assert _r(d, "s") == [("n00000", (0,), 150)]
    d = run(cluster, [job("s", share(1, 250))])
    assert _r(d, "s") == [("n00000", (1,), 250)]


def test_a_shared_device_is_never_given_whole():
    (n,) = nodes(1, devices=1)
    cluster = snap([n], [running("x", {}, shares={"n00000": [(0, 100)]})])
    d = run(cluster, [job("whole", whole(1, 1)), job("s", share(1, 900), waited=-1)])
    assert pending(d)["whole"].code == PendingCode.CAPACITY
    assert _r(d, "s") == [("n00000", (0,), 900)]


def test_never_above_1000_milli():
    (n,) = nodes(1, devices=1)
    cluster = snap([n], [running("x", {}, shares={"n00000": [(0, 900)]})])
    d = run(cluster, [job("s", share(1, 200))])
    assert pending(d)["s"].message == (
        "needs 1 x 200m shares of A800; the most left on a shared device is 100m and 0 whole "
        "A800 are free in pool 'train'"
    )


def test_sharing_can_be_switched_off():
    d = run(snap(nodes(1)), [job("s", share(1, 200))], sharing=False)
    assert pending(d)["s"].code == PendingCode.SHARING_DISABLED


def test_shares_are_charged_to_quota_in_milli():
    cluster = snap(
        nodes(1), [running("x", {}, shares={"n00000": [(0, 500)]})], quotas=[quota("t1", 1)]
    )
    d = run(cluster, [job("a", share(1, 600)), job("b", share(1, 500), waited=-1)])
    assert pending(d)["a"].message == (
        "quota: tenant 't1' would use 1.1 A800 in pool 'train', over its limit of 1 "
        "(guarantee 1 + borrowing 0); 0.5 in use"
    )
    assert _r(d, "b") == [("n00000", (0,), 500)]


def test_preempting_the_last_share_returns_the_device_whole():
    (n,) = nodes(1, devices=1)
    cluster = snap([n], [running("x", {}, shares={"n00000": [(0, 300)]}, priority=5)])
    d = run(cluster, [job("urgent", whole(1, 1), priority=0)])
    assert victims(d) == ["x"]
    assert _r(d, "urgent") == [("n00000", (0,), 0)]


def test_invalid_share_sizes_are_rejected():
    d = run(snap(nodes(1)), [job("s", share(1, 1000))])
    assert pending(d)["s"].code == PendingCode.INVALID
