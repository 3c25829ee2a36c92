"""Quotas (C3): guarantee + borrowing limit, reclaim, fair share."""

from apps.scheduling.core import PendingCode, PreemptionKind

from .helpers import job, nodes, pending, placed, quota, run, running, snap, victims, whole


def test_usage_never_exceeds_guarantee_plus_borrowing():
    cluster = snap(nodes(4), [running("r", {"n00000": range(8)})], quotas=[quota("t1", 8, 8)])
    d = run(cluster, [job("a", whole(2, 8)), job("b", whole(1, 8), waited=-1)])
    assert pending(d)["a"].code == PendingCode.QUOTA
    assert pending(d)["a"].message == (
        "quota: tenant 't1' would use 24 A800 in pool 'train', over its limit of 16 "
        "(guarantee 8 + borrowing 8); 8 in use"
    )
    assert "b" in placed(d)  # 16 exactly is allowed


def test_a_tenant_without_a_quota_row_gets_nothing():
    d = run(snap(nodes(1), quotas=[quota("t1", 8)]), [job("x", whole(1, 1), tenant="t9")])
    assert pending(d)["x"].message == "tenant 't9' has no A800 quota in pool 'train'"


def test_quotas_can_be_switched_off():
    d = run(snap(nodes(1), quotas=[quota("t1", 0)]), [job("x", whole(1, 8))], quotas=False)
    assert "x" in placed(d)


def _borrowed():
    # t2 has guarantee 8 and runs 16 (8 borrowed); t1 has guarantee 8 and runs nothing.
    return snap(
        nodes(2),
        [
            running("t2-old", {"n00000": range(8)}, tenant="t2", priority=4, started=300),
            running("t2-new", {"n00001": range(8)}, tenant="t2", priority=4, started=10),
        ],
        quotas=[quota("t1", 8, 8), quota("t2", 8, 8)],
    )


def test_lender_within_guarantee_reclaims_the_borrowers_newest_work():
    d = run(_borrowed(), [job("mine", whole(1, 8), tenant="t1", priority=2)])
    assert victims(d) == ["t2-new"]
    pre = d.preemptions[0]
    assert pre.kind == PreemptionKind.RECLAIM
    assert str(pre.reason) == (
        "reclaimed by tenant 't1' for job mine (P2): tenant 't2' was borrowing A800 above its "
        "guarantee in pool 'train'"
    )
    assert placed(d)["mine"].waits_for == ("t2-new",)


def test_only_work_above_the_owners_guarantee_is_reclaimable():
    # One 8-device victim brings t2 back to its guarantee: a second one is not taken.
    d = run(_borrowed(), [job("mine", whole(2, 8), tenant="t1", priority=2)])
    assert d.preemptions == ()
    assert "mine" in pending(d)


def test_a_borrowing_tenant_cannot_reclaim():
    cluster = _borrowed()
    d = run(cluster, [job("mine", whole(2, 8), tenant="t1", priority=0)])
    assert d.preemptions == ()  # 16 > t1's guarantee of 8: it would borrow, not reclaim


def test_reclaim_can_be_switched_off():
    d = run(_borrowed(), [job("mine", whole(1, 8), tenant="t1", priority=2)], reclaim=False)
    assert d.preemptions == ()


def test_fair_share_serves_the_tenant_furthest_below_its_guarantee():
    cluster = snap(
        nodes(1),
        [
            running("a", {"n00000": range(4)}, tenant="t1"),
            running("b", {"n00000": range(4, 7)}, tenant="t2"),
        ],
        quotas=[quota("t1", 16, 8), quota("t2", 4, 8)],
    )
    queue = [
        job("t2-job", whole(1, 1), tenant="t2", waited=50),
        job("t1-job", whole(1, 1), tenant="t1"),
    ]
    # t1 uses 4/16 = 0.25 of its guarantee, t2 uses 3/4: t1 goes first despite submitting later.
    d = run(cluster, queue)
    assert list(placed(d)) == ["t1-job"]
    d = run(cluster, queue, fair_share=False)
    assert list(placed(d)) == ["t2-job"]


def test_fair_share_alternates_as_usage_grows():
    cluster = snap(nodes(1), quotas=[quota("t1", 4, 4), quota("t2", 4, 4)])
    queue = [job(f"a{i}", whole(1, 1), tenant="t1", waited=100 - i) for i in range(4)]
    queue += [job(f"b{i}", whole(1, 1), tenant="t2", waited=50 - i) for i in range(4)]
    d = run(cluster, queue)
    assert [p.job_id for p in d.placements] == ["a0", "b0", "a1", "b1", "a2", "b2", "a3", "b3"]


def test_priority_comes_before_fair_share():
    cluster = snap(
        nodes(1),
        [running("a", {"n00000": range(7)}, tenant="t2")],
        quotas=[quota("t1", 8), quota("t2", 8)],
    )
    d = run(
        cluster,
        [
            job("low", whole(1, 1), tenant="t1", priority=5),
            job("high", whole(1, 1), tenant="t2", priority=1),
        ],
    )
    assert list(placed(d)) == ["high"]


def _one_device_for_two_tenants():
    # One device left; t2 borrows (7 in use against a guarantee of 4), t1 uses nothing.
    return snap(
        nodes(1),
        [running("a", {"n00000": range(7)}, tenant="t2", priority=1)],
        quotas=[quota("t1", 4, 4), quota("t2", 4, 4)],
    )


def test_tenant_first_serves_the_tenant_below_its_share_before_a_higher_priority():
    queue = [
        job("borrower-p1", whole(1, 1), tenant="t2", priority=1, waited=50),
        job("lender-p2", whole(1, 1), tenant="t1", priority=2),
    ]
    assert list(placed(run(_one_device_for_two_tenants(), queue))) == ["borrower-p1"]
    d = run(_one_device_for_two_tenants(), queue, tenant_first=True)
    assert list(placed(d)) == ["lender-p2"]


def test_tenant_first_keeps_priority_inside_a_tenant_and_between_bands():
    # Inside t1, its P1 job goes before its older P2 job.
    queue = [
        job("t1-p2", whole(1, 1), tenant="t1", priority=2, waited=50),
        job("t1-p1", whole(1, 1), tenant="t1", priority=1),
    ]
    d = run(_one_device_for_two_tenants(), queue, tenant_first=True)
    assert list(placed(d)) == ["t1-p1"]
    # A P4 job of the tenant below its share does not go before a P2 job of the borrower:
    # P0-P2 and P4/P5 are different bands.
    queue = [
        job("lender-p4", whole(1, 1), tenant="t1", priority=4, waited=50),
        job("borrower-p2", whole(1, 1), tenant="t2", priority=2),
    ]
    d = run(_one_device_for_two_tenants(), queue, tenant_first=True)
    assert list(placed(d)) == ["borrower-p2"]


def test_a_job_over_its_own_limit_preempts_as_many_of_its_tenants_p5_jobs_as_it_needs():
    # t1 (limit 24) runs twelve 2-device P5 jobs on n00000-n00002; a P2 job of 8 devices
    # finds n00003 free but needs 8 of quota room: four of its tenant's P5 jobs must go.
    # No single victim is ever enough, so trying each alone must not use up the trial
    # budget (six here) before the search adds victims together.
    work = [
        running(f"p{i}", {f"n0000{i // 4}": (2 * (i % 4), 2 * (i % 4) + 1)}, priority=5)
        for i in range(12)
    ]
    cluster = snap(nodes(4), work, quotas=[quota("t1", 8, 16)])
    d = run(cluster, [job("big", whole(1, 8), priority=2)], max_preemption_trials=6)
    assert len(victims(d)) == 4
    assert placed(d)["big"].replicas[0].node_id == "n00003"
