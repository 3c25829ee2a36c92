"""Gang: every replica or none."""

from apps.scheduling.core import PendingCode

from .helpers import job, nodes, pending, placed, run, running, snap, where, whole


def test_gang_is_placed_whole_on_distinct_devices():
    d = run(snap(nodes(2)), [job("g", whole(4, 4))])
    p = placed(d)["g"]
    assert where(p) == [
        ("n00000", (0, 1, 2, 3)),
        ("n00000", (4, 5, 6, 7)),
        ("n00001", (0, 1, 2, 3)),
        ("n00001", (4, 5, 6, 7)),
    ]
    assert [r.replica_index for r in p.replicas] == [0, 1, 2, 3]
    assert not p.partial


def test_gang_that_does_not_fit_places_nothing_and_leaks_nothing():
    cluster = snap(nodes(2), [running("r", {"n00001": range(8)})])
    d = run(cluster, [job("big", whole(2, 8)), job("small", whole(1, 1), waited=-1)])
    assert "big" not in placed(d)
    assert pending(d)["big"].code == PendingCode.CAPACITY
    # The failed trial was rolled back: the small job gets the first device of node 0.
    assert where(placed(d)["small"]) == [("n00000", (0,))]


def test_groups_of_one_job_are_placed_together_or_not_at_all():
    g = job("mw", whole(1, 2, name="master"), whole(2, 8, name="worker"))
    d = run(snap(nodes(2)), [g])
    assert d.placements == ()
    assert pending(d)["mw"].message == (
        "needs 18 A800 in pool 'train'; 16 free on nodes that can host a 8-device replica "
        "(16 free in total)"
    )


def test_gang_off_places_what_fits_and_reports_the_rest():
    d = run(snap(nodes(2)), [job("g", whole(3, 8))], gang=False)
    p = placed(d)["g"]
    assert p.partial
    assert sorted(where(p)) == [("n00000", tuple(range(8))), ("n00001", tuple(range(8)))]
    reason = pending(d)["g"]
    assert reason.code == PendingCode.PARTIAL
    assert reason.message == (
        "gang is off: 2 of 3 replicas placed; the rest: needs 24 A800 (3 x 8) in pool 'train'; "
        "16 free on nodes that can host a 8-device replica (16 free in total)"
    )


def test_cpu_only_replicas_are_part_of_the_gang():
    g = job("cpu", whole(1, 8), whole(1, 0, name="ps", cpu_milli=200_000))
    d = run(snap(nodes(1)), [g])
    assert d.placements == ()
    assert pending(d)["cpu"].code == PendingCode.RESOURCES
    assert pending(d)["cpu"].message == (
        "enough free A800 by count, but no placement also gives each replica its CPU, memory "
        "and labels ('worker' needs 0m CPU and 0Mi, 'ps' needs 200000m CPU and 0Mi)"
    )
