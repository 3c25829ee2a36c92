"""Priorities P0..P5 and preemption."""

from apps.scheduling.core import PendingCode, PreemptionKind

from .helpers import (
    job,
    nodes,
    pending,
    placed,
    quota,
    run,
    running,
    snap,
    victims,
    where,
    whole,
)


def _full(*jobs):
    return snap(nodes(len(jobs)), jobs)


def test_p1_preempts_the_lowest_priority_victim():
    cluster = _full(
        running("p4", {"n00000": range(8)}, priority=4),
        running("p5", {"n00001": range(8)}, priority=5),
    )
    d = run(cluster, [job("urgent", whole(1, 8), priority=1)])
    assert victims(d) == ["p5"]
    pre = d.preemptions[0]
    assert pre.kind == PreemptionKind.PRIORITY
    assert pre.preemptor_job_id == "urgent"
    assert str(pre.reason) == (
        "preempted by job urgent (P1, tenant 't1'), which needs 8 A800 in pool 'train'; "
        "P5 work yields to P0-P2"
    )
    p = placed(d)["urgent"]
    assert where(p) == [("n00001", tuple(range(8)))]
    assert p.waits_for == ("p5",)


def test_among_equals_the_most_recently_started_is_preempted():
    cluster = _full(
        running("old", {"n00000": range(8)}, priority=5, started=600),
        running("new", {"n00001": range(8)}, priority=5, started=5),
    )
    d = run(cluster, [job("urgent", whole(1, 8), priority=0)])
    assert victims(d) == ["new"]


def test_fewest_victims_win_over_recency():
    small = [running(f"s{i}", {"n00000": [i]}, priority=5, started=1) for i in range(8)]
    cluster = snap(nodes(2), [*small, running("big", {"n00001": range(8)}, priority=5)])
    d = run(cluster, [job("urgent", whole(1, 8), priority=2)])
    assert victims(d) == ["big"]


def test_greedy_victims_are_trimmed_to_the_ones_needed():
    cluster = snap(
        nodes(1),
        [
            running("a", {"n00000": range(4)}, priority=5, started=1),
            running("b", {"n00000": range(4, 6)}, priority=5, started=2),
            running("c", {"n00000": range(6, 8)}, priority=4, started=3),
        ],
    )
    d = run(cluster, [job("urgent", whole(1, 6), priority=1)])
    assert sorted(victims(d)) == ["a", "b"]


def test_a_victim_gang_is_removed_whole():
    cluster = snap(
        nodes(2), [running("gang", {"n00000": range(8), "n00001": range(8)}, priority=5)]
    )
    d = run(cluster, [job("urgent", whole(1, 8), priority=0)])
    assert victims(d) == ["gang"]
    assert len(d.preemptions) == 1
    assert d.fragmentation.free_devices == 8  # the other half of the victim is free too


def test_p3_neither_preempts_nor_is_preempted():
    cluster = _full(running("p5", {"n00000": range(8)}, priority=5))
    d = run(cluster, [job("p3", whole(1, 8), priority=3)])
    assert d.preemptions == ()
    assert pending(d)["p3"].code == PendingCode.CAPACITY

    cluster = _full(running("p3", {"n00000": range(8)}, priority=3))
    d = run(cluster, [job("p0", whole(1, 8), priority=0)])
    assert d.preemptions == ()
    assert pending(d)["p0"].message.endswith("; preempting eligible P4/P5 work would not make room")


def test_p4_and_p5_never_preempt():
    cluster = _full(running("p5", {"n00000": range(8)}, priority=5))
    d = run(cluster, [job("p4", whole(1, 8), priority=4)])
    assert d.preemptions == ()


def test_high_priority_jobs_do_not_preempt_each_other():
    cluster = _full(running("p2", {"n00000": range(8)}, priority=2))
    d = run(cluster, [job("p0", whole(1, 8), priority=0)])
    assert d.preemptions == ()


def test_non_preemptible_work_is_skipped():
    cluster = _full(
        running("keep", {"n00000": range(8)}, priority=5, preemptible=False, started=1),
        running("go", {"n00001": range(8)}, priority=5, started=100),
    )
    d = run(cluster, [job("urgent", whole(1, 8), priority=0)])
    assert victims(d) == ["go"]


def test_preemption_can_be_switched_off():
    cluster = _full(running("p5", {"n00000": range(8)}, priority=5))
    d = run(cluster, [job("p0", whole(1, 8), priority=0)], preemption=False)
    assert d.preemptions == ()
    assert "p0" in pending(d)


def test_no_preemption_when_it_would_not_be_enough():
    cluster = _full(
        running("p5", {"n00000": range(8)}, priority=5),
        running("p3", {"n00001": range(8)}, priority=3),
    )
    d = run(cluster, [job("p0", whole(2, 8), priority=0)])
    assert d.preemptions == ()
    assert d.placements == ()


def test_never_preempt_to_admit_a_job_over_its_tenant_quota():
    cluster = snap(
        nodes(2),
        [
            running("own", {"n00000": range(8)}, tenant="t1", priority=3),
            running("other", {"n00001": range(8)}, tenant="t2", priority=5),
        ],
        quotas=[quota("t1", 8), quota("t2", 0, 8)],
    )
    d = run(cluster, [job("p0", whole(1, 8), tenant="t1", priority=0)])
    assert d.preemptions == ()
    assert pending(d)["p0"].code == PendingCode.QUOTA


def test_same_tenant_victims_free_the_quota_they_used():
    cluster = snap(
        nodes(2),
        [running("mine", {"n00000": range(8)}, tenant="t1", priority=5)],
        quotas=[quota("t1", 8)],
    )
    d = run(cluster, [job("p0", whole(1, 8), tenant="t1", priority=0)])
    assert victims(d) == ["mine"]
    assert where(placed(d)["p0"]) == [("n00001", tuple(range(8)))]


def test_other_tenants_work_within_its_guarantee_is_safe():
    cluster = snap(
        nodes(1),
        [running("theirs", {"n00000": range(8)}, tenant="t2", priority=5)],
        quotas=[quota("t1", 8), quota("t2", 8)],
    )
    d = run(cluster, [job("p0", whole(1, 8), tenant="t1", priority=0)])
    assert d.preemptions == ()
    # Without quotas there are no guarantees to protect: plain priority applies.
    d = run(cluster, [job("p0", whole(1, 8), tenant="t1", priority=0)], quotas=False)
    assert victims(d) == ["theirs"]
