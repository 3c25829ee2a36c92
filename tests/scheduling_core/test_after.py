"""A job that starts after others: the core does not place it while any is left, and the
forecast lets it in when the last of them ends."""

from dataclasses import replace
from datetime import timedelta

from apps.scheduling.core import PendingCode, Policy, schedule
from apps.scheduling.core.forecast import forecast_starts

from .helpers import NOW, job, nodes, pending, placed, running, snap, whole

H = timedelta(hours=1)


def test_a_job_after_others_takes_no_room_and_says_what_it_waits_for():
    # One 8-GPU node. The P0 job would take it first; it starts after job x, so the P5 job
    # behind it gets the node, and nothing is held or preempted for the P0 one.
    queue = [
        replace(job("first", whole(1, 8), priority=0, waited=60), after=("x", "y")),
        job("behind", whole(1, 8), priority=5, waited=1),
    ]
    d = schedule(snap(nodes(1)), queue, Policy(quotas=False), NOW)
    assert set(placed(d)) == {"behind"}
    reason = pending(d)["first"]
    assert reason.code == PendingCode.AFTER
    assert reason.message == "starts after job(s) x, y succeed"
    assert reason.text.as_json() == [{"key": "afterJobs", "args": {"jobs": {"items": ["x", "y"]}}}]
    assert not d.preemptions and not d.reservations


def test_the_forecast_starts_a_pipeline_step_by_step():
    # Two nodes; n0 runs "prep" for 1 h more, n1 is free. "train" (2 h) starts after prep,
    # "eval" after train; "other" needs a whole node and takes n1 now.
    s = snap(nodes(2), [replace(running("prep", {"n00000": range(8)}), expected_end=NOW + H)])
    queue = [
        replace(job("train", whole(1, 8)), after=("prep",), expected_runtime=2 * H),
        replace(job("eval", whole(1, 8)), after=("train",), expected_runtime=H),
        replace(job("other", whole(1, 8), waited=1), expected_runtime=10 * H),
    ]
    f = forecast_starts(s, queue, Policy(quotas=False), NOW)
    assert f.starts["other"] == NOW
    assert f.starts["train"] == NOW + H
    assert f.starts["eval"] == NOW + 3 * H


def test_no_forecast_after_a_job_that_never_ends():
    s = snap(nodes(2), [running("open-ended", {"n00000": range(8)})])
    queue = [replace(job("next", whole(1, 8)), after=("open-ended",), expected_runtime=H)]
    f = forecast_starts(s, queue, Policy(quotas=False), NOW)
    assert f.starts == {}
