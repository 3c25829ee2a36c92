"""Queue order, backfill, validation and pending reasons."""

from datetime import timedelta

from apps.scheduling.core import PendingCode

from .helpers import job, nodes, pending, placed, run, running, snap, whole


def test_priority_then_submit_time():
    d = run(
        snap(nodes(1)),
        [
            job("late", whole(1, 8), waited=1),
            job("early", whole(1, 8), waited=9),
            job("p1", whole(1, 8), priority=1),
        ],
    )
    assert list(placed(d)) == ["p1"]
    d = run(
        snap(nodes(1)), [job("late", whole(1, 8), waited=1), job("early", whole(1, 8), waited=9)]
    )
    assert list(placed(d)) == ["early"]


def test_backfill_lets_small_jobs_past_a_job_that_does_not_fit():
    cluster = snap(nodes(1), [running("r", {"n00000": range(4)})])
    queue = [job("big", whole(1, 8), waited=10), job("small", whole(1, 2))]
    d = run(cluster, queue)
    assert list(placed(d)) == ["small"]
    d = run(cluster, queue, backfill=False)
    assert d.placements == ()
    assert pending(d)["small"].code == PendingCode.BLOCKED
    assert pending(d)["small"].message == (
        "waiting behind job big in pool 'train' (backfill is off, so the queue is served "
        "strictly in order)"
    )


def test_invalid_jobs_are_reported_not_raised():
    d = run(
        snap(nodes(1), [running("r", {})]),
        [
            job("prio", whole(1, 1), priority=7),
            job("empty"),
            job("dup", whole(1, 1)),
            job("dup", whole(1, 1)),
            job("r", whole(1, 1)),
            job("neg", whole(0, 1)),
        ],
    )
    reasons = {p.job_id: p.message for p in d.pending}
    assert reasons == {
        "prio": "priority 7 is not one of P0..P5",
        "empty": "the job has no replica groups",
        "dup": "the job id appears twice in the queue",
        "r": "a job with this id is already running",
        "neg": "group 'worker' needs at least one replica",
    }
    assert list(placed(d)) == ["dup"]


def test_waiting_past_max_wait_is_flagged():
    cluster = snap(nodes(1), [running("r", {"n00000": range(8)})])
    d = run(cluster, [job("j", whole(1, 1), waited=150, max_wait=timedelta(hours=2))])
    reason = pending(d)["j"]
    assert reason.over_max_wait
    assert reason.message.endswith("; waited 2h30m, over its max wait of 2h00m")


def test_every_pending_job_has_a_reason():
    cluster = snap(nodes(2), [running("r", {"n00000": range(8)})])
    queue = [job(f"j{i}", whole(1, 8)) for i in range(4)]
    d = run(cluster, queue)
    assert len(d.placements) == 1
    assert all(p.message for p in d.pending) and len(d.pending) == 3


def test_cpu_only_jobs_are_placed_without_accelerators():
    d = run(snap(nodes(1)), [job("cpu", whole(2, 0, cpu_milli=1000, memory_mib=10))])
    assert [(r.node_id, r.devices) for r in placed(d)["cpu"].replicas] == [
        ("n00000", ()),
        ("n00000", ()),
    ]


def test_cpu_replicas_of_a_gpu_job_sit_next_to_it_and_share_its_arch():
    arm = nodes(1, model="910B", vendor="huawei", arch="arm64", prefix="h")
    cluster = snap([*nodes(2), *arm])
    g = job("j", whole(1, 8, models=frozenset({"A800"})), whole(1, 0, name="launcher", cpu_milli=1))
    p = placed(run(cluster, [g]))["j"]
    assert sorted((r.group, r.node_id) for r in p.replicas) == [
        ("launcher", "n00000"),
        ("worker", "n00000"),
    ]
