"""Start-time forecasts: the queue run forward through the scheduler on declared runtimes."""

from dataclasses import replace
from datetime import timedelta

from apps.scheduling.core import ClusterSnapshot, PendingJob, Policy, RunningJob, TopologyMode
from apps.scheduling.core.forecast import forecast_starts

from .helpers import NOW, job, nodes, quota, running, snap, whole

H = timedelta(hours=1)


def _ends(j: RunningJob, hours: float) -> RunningJob:
    return replace(j, expected_end=NOW + hours * H)


def _lasts(j: PendingJob, hours: float) -> PendingJob:
    return replace(j, expected_runtime=hours * H)


def _forecast(s: ClusterSnapshot, queue: list[PendingJob], **kw):
    policy = Policy(quotas=bool(s.quotas), **kw.pop("policy", {}))
    return forecast_starts(s, queue, policy, NOW, **kw)


def test_a_job_that_fits_now_starts_now():
    f = _forecast(snap(nodes(1)), [_lasts(job("a", whole(1, 4)), 1)])
    assert f.starts == {"a": NOW}
    assert f.cycles == 1


def test_a_job_starts_when_the_work_in_its_way_reaches_its_declared_end():
    s = snap(nodes(1), [_ends(running("r", {"n00000": range(8)}), 2)])
    f = _forecast(s, [_lasts(job("a", whole(1, 8)), 3)])
    assert f.starts == {"a": NOW + 2 * H}


def test_the_queue_behind_a_job_waits_for_its_declared_runtime_in_priority_order():
    # One 8-GPU node, busy for 2 h with P3 work (which nothing preempts). The P2 job goes
    # first (3 h), then the older P4 job.
    s = snap(nodes(1), [_ends(running("r", {"n00000": range(8)}, priority=3), 2)])
    queue = [
        _lasts(job("old-p4", whole(1, 8), priority=4, waited=60), 1),
        _lasts(job("new-p2", whole(1, 8), priority=2, waited=1), 3),
    ]
    f = _forecast(s, queue)
    assert f.starts == {"new-p2": NOW + 2 * H, "old-p4": NOW + 5 * H}


def test_a_job_that_may_preempt_starts_now():
    s = snap(nodes(1), [_ends(running("p4", {"n00000": range(8)}, priority=4), 5)])
    f = _forecast(s, [_lasts(job("p2", whole(1, 8), priority=2), 1)])
    assert f.starts == {"p2": NOW}


def test_small_work_fills_in_beside_a_large_job_without_moving_it():
    # Two nodes; n0 frees in 1 h, n1 in 4 h. The 16-GPU gang needs both (4 h); the 4-GPU job
    # fits on n0 from 1 h.
    s = snap(
        nodes(2),
        [
            _ends(running("r0", {"n00000": range(8)}), 1),
            _ends(running("r1", {"n00001": range(8)}), 4),
        ],
    )
    queue = [
        _lasts(job("gang", whole(2, 8), waited=5), 2),
        _lasts(job("small", whole(1, 4), waited=1), 1),
    ]
    f = _forecast(s, queue, policy={"delay_scheduling": False})
    assert f.starts["small"] == NOW + 1 * H
    assert f.starts["gang"] == NOW + 4 * H


def test_no_estimate_behind_work_that_declares_no_end():
    s = snap(nodes(1), [running("forever", {"n00000": range(8)})])
    f = _forecast(s, [_lasts(job("a", whole(1, 8)), 1), _lasts(job("b", whole(1, 8)), 1)])
    assert f.starts == {}
    # A queued job without a declared runtime blocks those behind it the same way.
    s = snap(nodes(1), [_ends(running("r", {"n00000": range(8)}), 1)])
    f = _forecast(s, [job("open", whole(1, 8), waited=9), _lasts(job("b", whole(1, 8)), 1)])
    assert f.starts == {"open": NOW + 1 * H}


def test_starts_past_the_horizon_get_no_estimate():
    s = snap(nodes(1), [_ends(running("r", {"n00000": range(8)}), 10)])
    queue = [_lasts(job("a", whole(1, 8)), 1)]
    assert _forecast(s, queue, horizon=12 * H).starts == {"a": NOW + 10 * H}
    assert _forecast(s, queue, horizon=8 * H).starts == {}


def test_work_already_past_its_end_is_taken_as_gone():
    # Its runtime limit passed a minute ago: the governance pass stops it now.
    s = snap(nodes(1), [replace(running("r", {"n00000": range(8)}), expected_end=NOW - H / 60)])
    assert _forecast(s, [_lasts(job("a", whole(1, 8)), 1)]).starts == {"a": NOW}


def test_the_borrowing_limit_holds_in_the_forecast():
    # Tenant t1 may hold 8 devices; its running 8-GPU job ends in 3 h. Room elsewhere does
    # not help: its next job waits for its own work.
    s = snap(
        nodes(2),
        [_ends(running("mine", {"n00000": range(8)}, tenant="t1"), 3)],
        quotas=[quota("t1", 8, 0), quota("t2", 8, 0)],
    )
    f = _forecast(s, [_lasts(job("a", whole(1, 8), tenant="t1"), 1)])
    assert f.starts == {"a": NOW + 3 * H}


def test_the_clock_stops_where_a_gangs_topology_patience_runs_out():
    # Leaves of two nodes: one free node in each leaf, the others busy for 10 h. A soft-
    # topology gang of two nodes waits for one leaf for its patience, then takes the unit.
    s = snap(
        nodes(4),
        [
            _ends(running("r1", {"n00001": range(8)}), 10),
            _ends(running("r3", {"n00003": range(8)}), 10),
        ],
    )
    gang = _lasts(job("gang", whole(2, 8), topology=TopologyMode.SOFT), 2)
    f = _forecast(s, [gang], policy={"topology_patience": timedelta(minutes=30)})
    assert f.starts == {"gang": NOW + H / 2}
    assert f.cycles == 2


def test_the_snapshot_and_queue_are_left_as_they_were():
    r = _ends(running("r", {"n00000": range(8)}), 2)
    s = snap(nodes(1), [r])
    queue = [_lasts(job("a", whole(1, 8)), 1)]
    before = (s, list(queue))
    _forecast(s, queue)
    assert (s, queue) == before
    assert s.running == (r,)


def test_the_clock_coarsens_with_distance_by_at_most_five_percent():
    # n0 frees at 10 h, n1 ten minutes later. After the cycle at 10 h the next one is at
    # least 5% of 10 h later: the second job is forecast at 10.5 h, not 10 h 10 min.
    s = snap(
        nodes(2),
        [
            _ends(running("r0", {"n00000": range(8)}, priority=3), 10),
            _ends(running("r1", {"n00001": range(8)}, priority=3), 10 + 1 / 6),
        ],
    )
    queue = [_lasts(job("a", whole(1, 8), waited=2), 1), _lasts(job("b", whole(1, 8)), 1)]
    assert _forecast(s, queue).starts == {"a": NOW + 10 * H, "b": NOW + 10.5 * H}
