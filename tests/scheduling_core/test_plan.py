"""Planned starts for large gangs (``Policy.plan_large``, ``core/plan.py``): conservative
backfilling with declared runtimes. Gangs of 16 devices or more (two nodes) count as large
here; nodes are the reference 8-device servers, two per leaf."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from apps.scheduling.core import PendingCode, Reservation
from apps.scheduling.core.plan import TARGET_FLOOR, target

from .helpers import NOW, job, nodes, pending, placed, quota, run, running, snap, whole

HOUR = timedelta(hours=1)
PLAN: dict[str, Any] = dict(plan_large=True, large_patience_devices=16)


def _until(job_id: str, node_ids: list[str], hours: float, **kw: Any):
    """A job running on whole nodes, declared to end ``hours`` from now (P3 unless told:
    work no gang may preempt)."""
    kw.setdefault("priority", 3)
    r = running(job_id, {n: range(8) for n in node_ids}, **kw)
    return replace(r, expected_end=NOW + hours * HOUR)


def _gang(job_id: str, hours: float, *, waited: float = 1, **kw: Any):
    """A P2 gang of two whole nodes, declared to run ``hours``."""
    kw.setdefault("priority", 2)
    return replace(job(job_id, whole(2, 8), waited=waited, **kw), expected_runtime=hours * HOUR)


def _small(job_id: str, hours: float, **kw: Any):
    return replace(job(job_id, whole(1, 8), **kw), expected_runtime=hours * HOUR)


def _planned(d) -> dict[str, Reservation]:
    return {r.job_id: r for r in d.reservations if r.reason.startswith("planned start")}


def test_target_is_the_tenants_share_of_the_turnover_with_a_floor():
    # 16 devices + 8 queued ahead - 8 usable at once, at half (a guarantee of 50 of 100)
    # of 0.01 devices/s: 3,200 s.
    assert target(16, 8, 8, 0.01, 50, 100) == pytest.approx(3200)
    assert target(16, 0, 16, 0.01, 50, 100) == TARGET_FLOOR  # fits at once
    assert target(16, 0, 0, 1.0, 1, 1) == TARGET_FLOOR  # 16 s, raised to the floor
    assert target(16, 0, 0, 0.0, 50, 100) == float("inf")  # nothing ever frees
    assert target(16, 0, 0, 1.0, 0, 100) == float("inf")  # no guarantee


def test_each_gang_gets_a_start_and_nodes_one_after_the_other():
    # n0/n1 are free in 1 hour, n2/n3 in 3 hours. The first gang (runs 3 h) is planned on
    # n0/n1 at +1 h, the second on n2/n3 at +3 h (n0/n1 are the first's until +4 h).
    cluster = snap(
        nodes(4), [_until("a", ["n00000", "n00001"], 1), _until("b", ["n00002", "n00003"], 3)]
    )
    d = run(cluster, [_gang("first", 3, waited=2), _gang("second", 3, waited=1)], **PLAN)
    plans = _planned(d)
    assert sorted(plans["first"].node_ids) == ["n00000", "n00001"]
    assert sorted(plans["second"].node_ids) == ["n00002", "n00003"]
    for job_id, hours in (("first", 1), ("second", 3)):
        reason = pending(d)[job_id]
        assert reason.code == PendingCode.RESERVED
        assert f"planned to start within {hours}h00m" in reason.message
        assert f"at {(NOW + hours * HOUR).isoformat()}" in plans[job_id].reason
    # Targets: the turnover is 16 devices / 2 h (a) + 16 / 4 h (b) = 1/300 device/s, and
    # nothing is free: 16 devices take 80 min, 32 (the first's ahead of the second) 160.
    assert plans["first"].deadline == NOW + timedelta(minutes=80 - 2)
    assert plans["second"].deadline == NOW + timedelta(minutes=160 - 1)
    # Without the switch nothing is planned (and neither gang starves yet: no holds).
    assert (
        _planned(run(cluster, [_gang("first", 2), _gang("second", 2)], large_patience_devices=16))
        == {}
    )


def test_the_plan_goes_by_the_fair_share_target_carried_from_earlier_cycles():
    # Same cluster; "second" was submitted later, but the target carried in its
    # reservation is earlier than the one carried for "first", so it goes first.
    cluster = snap(
        nodes(4),
        [_until("a", ["n00000", "n00001"], 1), _until("b", ["n00002", "n00003"], 3)],
        reservations=(
            Reservation("first", 2, ("n00000", "n00001"), NOW + HOUR, deadline=NOW + 5 * HOUR),
            Reservation("second", 2, ("n00002", "n00003"), NOW + HOUR, deadline=NOW + HOUR),
        ),
    )
    d = run(cluster, [_gang("first", 3, waited=2), _gang("second", 3, waited=1)], **PLAN)
    plans = _planned(d)
    assert sorted(plans["second"].node_ids) == ["n00000", "n00001"]
    assert sorted(plans["first"].node_ids) == ["n00002", "n00003"]
    assert plans["second"].deadline == NOW + HOUR  # carried, not worked out again
    assert plans["first"].deadline == NOW + 5 * HOUR


def test_a_gang_takes_the_nodes_of_one_leaf_and_leaves_the_other_whole():
    # At +1 h n0, n1 (leaf 0) and n2 (leaf 1) are free; n3 at +2 h. The first gang takes
    # leaf 0, so the second can start at +2 h inside leaf 1 instead of across leaves.
    cluster = snap(
        nodes(4),
        [_until("a", ["n00000", "n00001", "n00002"], 1), _until("b", ["n00003"], 2)],
    )
    d = run(cluster, [_gang("first", 4, waited=2), _gang("second", 4, waited=1)], **PLAN)
    plans = _planned(d)
    assert sorted(plans["first"].node_ids) == ["n00000", "n00001"]
    assert sorted(plans["second"].node_ids) == ["n00002", "n00003"]


def test_planned_nodes_go_only_to_work_that_ends_before_the_start():
    # n1 is busy for 2 hours, n0 free: the gang is planned on both at +2 h.
    cluster = snap(nodes(2), [_until("a", ["n00001"], 2, tenant="t2")])
    queue = [
        _gang("big", 3, waited=5),
        _small("short", 1, tenant="t2", priority=3, waited=4),  # ends before +2 h
        _small("long", 3, tenant="t2", priority=3, waited=3),
        _small("urgent", 3, tenant="t2", priority=0, waited=2),  # P0, but runs past +2 h
    ]
    d = run(cluster, queue, **PLAN)
    assert pending(d)["big"].code == PendingCode.RESERVED
    assert [r.node_id for r in placed(d)["short"].replicas] == ["n00000"]
    assert "long" in pending(d) and "urgent" in pending(d)
    # Without the short job, the urgent one does not take n0 either, nor the long one.
    d = run(cluster, [queue[0], queue[2], queue[3]], **PLAN)
    assert set(placed(d)) == set()
    # The gang's own tenant's P4/P5 work may use the nodes: the gang preempts it at start.
    own = _small("own", 3, tenant="t1", priority=4, waited=2)
    d = run(cluster, [queue[0], own], **PLAN)
    assert "own" in placed(d)
    assert pending(d)["big"].code == PendingCode.RESERVED


def test_the_tenants_long_work_leaves_the_quota_room_the_gang_needs_at_its_start():
    # t1 may use 24 devices and runs 8 (n2, for 5 hours); its gang of 16 waits for n1
    # (t2's, 1 hour). A 3-hour job of t1 would leave the gang no room at +1 h.
    cluster = snap(
        nodes(4),
        [
            _until("mine", ["n00002"], 5, priority=3, preemptible=False),
            _until("theirs", ["n00001"], 1, tenant="t2"),
            _until("other", ["n00003"], 5, tenant="t2"),
        ],
        quotas=[quota("t1", 16, 8), quota("t2", 16, 8)],
    )
    queue = [
        _gang("big", 2, waited=5),
        _small("long", 3, priority=3, waited=4),
        _small("short", 0.5, priority=3, waited=3),
    ]
    settings: dict[str, Any] = dict(PLAN, large_job_devices=8)
    d = run(cluster, queue, **settings)
    assert pending(d)["big"].code == PendingCode.RESERVED
    assert pending(d)["long"].code == PendingCode.QUOTA
    assert "keeps quota room" in pending(d)["long"].message
    assert "short" in placed(d)  # it ends before the gang starts
    # Work smaller than ``large_job_devices`` is not kept out (it is many and short).
    d = run(cluster, queue, **PLAN)
    assert pending(d)["long"].code != PendingCode.QUOTA


def test_a_gang_with_no_start_in_sight_falls_back_to_delay_holds():
    # The only nodes run work that declared no end: no planned start, so the gang is
    # left to delay scheduling (a hold once it starves), as without the switch.
    busy = running("a", {"n00000": range(8), "n00001": range(8)}, priority=3)
    cluster = snap(nodes(2), [busy])
    d = run(cluster, [_gang("big", 2, waited=60)], **PLAN)
    assert _planned(d) == {}
    assert "planned to start" not in pending(d)["big"].message
    assert [r.job_id for r in d.reservations] == ["big"]  # the delay-scheduling hold
