"""Delay scheduling: capacity is held for a starving large job, for a bounded time."""

from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from apps.scheduling.core import PendingCode, PreemptionKind, Reservation, TopologyMode

from .helpers import (
    NOW,
    ago,
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


def _busy():
    # n0: 4 free, n1: 8 free, n2: full. A 2 x 8 gang does not fit.
    return snap(
        nodes(3),
        [running("a", {"n00000": range(4)}), running("b", {"n00002": range(8)})],
    )


def _big(waited=60, **kw):
    return job("big", whole(2, 8), waited=waited, **kw)


def test_starving_large_job_gets_a_visible_bounded_hold():
    d = run(_busy(), [_big(), job("small", whole(1, 1), waited=1)])
    assert d.reservations == (
        Reservation(
            job_id="big",
            priority=4,
            node_ids=("n00001", "n00000"),
            expires_at=ago(60) + timedelta(minutes=30) + timedelta(hours=2),
            reason=(
                "held for job big (P4, 16 A800) after 1h00m waiting: free devices on these "
                "nodes go only to it or to higher-priority work until 2025-03-01T13:30:00"
            ),
        ),
    )
    assert pending(d)["big"].code == PendingCode.RESERVED
    assert pending(d)["big"].message.endswith("; 2 nodes are held for it until 2025-03-01T13:30:00")
    small = pending(d)["small"]
    assert small.code == PendingCode.HELD
    assert small.message == (
        "needs 1 A800 (1 x 1); 12 of the free A800 are held for starving job(s) big"
    )


def test_higher_priority_work_still_uses_held_nodes():
    d = run(_busy(), [_big(), job("p2", whole(1, 1), priority=2, waited=1)])
    assert where(placed(d)["p2"]) == [("n00000", (4,))]
    assert len(d.reservations) == 1


def test_equal_priority_jobs_submitted_earlier_are_also_kept_off_held_nodes():
    d = run(_busy(), [_big(), job("older", whole(1, 1), waited=120)])
    assert pending(d)["older"].code == PendingCode.HELD


def test_without_delay_scheduling_small_jobs_take_the_freed_devices():
    d = run(_busy(), [_big(), job("small", whole(1, 1), waited=1)], delay_scheduling=False)
    assert d.reservations == ()
    assert "small" in placed(d)
    assert pending(d)["big"].code == PendingCode.CAPACITY


def test_no_hold_before_the_threshold_or_after_the_bound():
    for waited in (10, 30 + 120 + 1):
        d = run(_busy(), [_big(waited=waited), job("small", whole(1, 1), waited=1)])
        assert d.reservations == ()
        assert "small" in placed(d)


def test_small_jobs_never_get_holds():
    d = run(_busy(), [job("mid", whole(2, 6), waited=600)], large_job_devices=16)
    assert d.reservations == ()


def test_the_previous_hold_is_reused_so_the_held_set_does_not_wander():
    prior = Reservation("big", 4, ("n00002", "n00001"), NOW + timedelta(minutes=5))
    cluster = snap(
        nodes(3),
        [running("a", {"n00000": range(4)}), running("b", {"n00002": range(8)})],
        reservations=(prior,),
    )
    d = run(cluster, [_big(), job("small", whole(1, 1), waited=1)])
    assert d.reservations[0].node_ids == ("n00002", "n00001")
    assert where(placed(d)["small"]) == [("n00000", (4,))]


def test_a_held_job_places_as_soon_as_its_nodes_drain():
    prior = Reservation("big", 4, ("n00001", "n00000"), NOW)
    cluster = snap(nodes(3), [running("b", {"n00002": range(8)})], reservations=(prior,))
    d = run(cluster, [job("small", whole(1, 1), waited=500), _big()])
    assert sorted(r.node_id for r in placed(d)["big"].replicas) == ["n00000", "n00001"]
    assert pending(d)["small"].code == PendingCode.CAPACITY
    assert d.reservations == ()


def test_number_of_holds_is_bounded():
    cluster = snap(nodes(4), [running("x", {f"n0000{i}": range(4) for i in range(4)})])
    queue = [job(f"big{i}", whole(2, 8), waited=60 + i) for i in range(3)]
    d = run(cluster, queue, max_holds=1)
    assert [r.job_id for r in d.reservations] == ["big2"]


def test_an_expired_previous_hold_is_not_reused():
    prior = Reservation("big", 4, ("n00002",), NOW - timedelta(seconds=1))
    cluster = snap(nodes(3), [running("a", {"n00000": range(4)})], reservations=(prior,))
    d = run(cluster, [_big(), job("small", whole(1, 1), waited=1)])
    assert placed(d)["big"].tier  # fits now: n1 and n2 are free
    assert "small" in placed(d)


def test_with_declared_runtimes_the_hold_goes_to_the_nodes_that_drain_soonest():
    from dataclasses import replace

    # n0 and n1: 4 devices busy each, for 10 hours; n2 and n3: 6 busy each, ending in 20 min.
    # Without runtimes the hold takes the nodes with the most free devices (n0, n1).
    jobs = [running(f"r{i}", {f"n0000{i}": range(busy)}) for i, busy in enumerate((4, 4, 6, 6))]
    d = run(snap(nodes(4), jobs), [_big()])
    assert sorted(d.reservations[0].node_ids) == ["n00000", "n00001"]
    ends = (timedelta(hours=10), timedelta(hours=10), timedelta(minutes=20), timedelta(minutes=20))
    timed = [replace(j, expected_end=NOW + end) for j, end in zip(jobs, ends, strict=True)]
    d = run(snap(nodes(4), timed), [_big()])
    assert sorted(d.reservations[0].node_ids) == ["n00002", "n00003"]
    # Work of unknown length (no runtime) counts as never ending.
    timed[2] = replace(timed[2], expected_end=None)
    d = run(snap(nodes(4), timed), [_big()])
    assert sorted(d.reservations[0].node_ids) == ["n00000", "n00003"]


def test_a_starving_job_blocked_by_its_own_quota_keeps_the_room_its_tenant_frees():
    # t1 may hold 28 devices (24 + 4 borrowed) and runs 8: the 3 x 8 gang would need 32.
    cluster = snap(
        nodes(6),
        [running("mine", {"n00000": range(8)}, priority=3)],  # P3: never a victim
        quotas=[quota("t1", 24, 4), quota("t2", 16, 4)],
    )
    queue = [
        job("big", whole(3, 8), priority=2, waited=60),
        job("gang", whole(2, 8), waited=1),  # P4 gang of t1: would fit under t1's limit
        job("small", whole(1, 1), waited=1),  # small jobs are not held back
        job("urgent", whole(1, 1), priority=1, waited=1),  # higher priority: not held back
        job("other", whole(2, 8), tenant="t2", waited=1),  # another tenant: not held back
    ]
    d = run(cluster, queue)
    assert pending(d)["big"].code == PendingCode.QUOTA
    assert pending(d)["gang"].code == PendingCode.QUOTA
    assert "keeps its quota room" in pending(d)["gang"].message
    assert {"small", "urgent", "other"} <= set(placed(d))
    # Before the starvation threshold nothing is kept.
    queue[0] = job("big", whole(3, 8), priority=2, waited=10)
    d = run(cluster, queue)
    assert "gang" in placed(d)


def test_large_gangs_can_hold_from_their_first_cycle():
    # A 16-device gang that waited one minute: no hold under the 30-minute threshold, a
    # hold at once when gangs of that size have their own threshold of zero.
    d = run(_busy(), [_big(waited=1)])
    assert d.reservations == ()
    d = run(
        _busy(),
        [_big(waited=1)],
        large_starvation_threshold=timedelta(0),
        large_patience_devices=16,
    )
    assert [r.job_id for r in d.reservations] == ["big"]
    assert d.reservations[0].expires_at == ago(1) + timedelta(hours=2)
    assert pending(d)["big"].code == PendingCode.RESERVED


def _leaf_drain(drain_wait: timedelta, end_of_n0: timedelta, **settings: Any):
    from dataclasses import replace

    # Two leaves (n0, n1) and (n2, n3). n1 and n2 are free: the 2 x 8 soft-topology gang,
    # past its patience, fits across the leaves now. Its hold from the last cycle is
    # the first leaf, where n0's work is expected to end in ``end_of_n0``.
    jobs = [
        replace(running("a", {"n00000": range(4)}), expected_end=NOW + end_of_n0),
        replace(running("b", {"n00003": range(8)}), expected_end=NOW + timedelta(hours=10)),
    ]
    prior = Reservation("big", 4, ("n00000", "n00001"), NOW + timedelta(hours=1))
    gang = _big(waited=60, topology=TopologyMode.SOFT)
    return run(
        snap(nodes(4), jobs, reservations=(prior,)),
        [gang],
        topology_patience=timedelta(minutes=10),
        drain_wait=drain_wait,
        **settings,
    )


def test_a_gang_keeps_waiting_for_its_held_leaf_while_it_drains_soon():
    d = _leaf_drain(timedelta(hours=1), timedelta(minutes=20))
    assert pending(d)["big"].code == PendingCode.RESERVED
    assert d.reservations[0].node_ids == ("n00000", "n00001")


def test_without_drain_wait_or_when_the_leaf_drains_late_the_gang_starts_across_leaves():
    for wait, end in (
        (timedelta(0), timedelta(minutes=20)),
        (timedelta(hours=1), timedelta(hours=3)),
    ):
        d = _leaf_drain(wait, end)
        assert sorted(n for n, _ in where(placed(d)["big"])) == ["n00001", "n00002"]


def test_a_gang_that_could_start_now_waits_for_its_draining_leaf_only_briefly():
    # n0 drains in 40 minutes: within the hour of drain_wait, so the gang waits for its
    # leaf; with a 20-minute limit while it could start across leaves now, it starts now.
    hour, forty = timedelta(hours=1), timedelta(minutes=40)
    short = timedelta(minutes=20)
    assert pending(_leaf_drain(hour, forty))["big"].code == PendingCode.RESERVED
    d = _leaf_drain(hour, forty, placeable_drain_wait=short)
    assert sorted(n for n, _ in where(placed(d)["big"])) == ["n00001", "n00002"]
    # Within the short limit it still waits for the leaf.
    d = _leaf_drain(hour, timedelta(minutes=15), placeable_drain_wait=short)
    assert pending(d)["big"].code == PendingCode.RESERVED


HOUR = timedelta(hours=1)


def _room_cluster():
    # t1 may hold 24 devices (16 + 8 borrowed) and runs 16: a P2 3 x 8 gang would need 40.
    return snap(
        nodes(6),
        [
            running("mine", {"n00000": range(8)}, priority=3),
            running("cheap", {"n00001": range(8)}, priority=5),
        ],
        quotas=[quota("t1", 16, 8), quota("t2", 16, 8)],
    )


def test_the_room_kept_for_a_very_large_gang_is_lent_only_to_work_it_can_preempt():
    queue = [
        job("big", whole(3, 8), priority=2, waited=60),
        job("p5", whole(1, 1), priority=5, waited=1),  # preemptible: may borrow the room
        job("p3", whole(1, 1), priority=3, waited=1),  # not preemptible: kept out
        job("p2", whole(1, 1), priority=2, waited=1),  # same priority: kept out
        job("p1", whole(1, 1), priority=1, waited=1),  # higher priority: never kept out
    ]
    from dataclasses import replace

    # declared to end within the hour: gives the room back soon, so it may borrow it too
    queue.append(replace(job("quick", whole(1, 1), priority=3, waited=1), expected_runtime=HOUR))
    queue.append(replace(job("slow", whole(1, 1), priority=3, waited=1), expected_runtime=2 * HOUR))
    settings: dict[str, Any] = dict(lend_quota_room_to_preemptible=True, large_patience_devices=16)
    d = run(_room_cluster(), queue, **settings)
    assert pending(d)["big"].code == PendingCode.QUOTA
    assert {"p5", "p1", "quick"} <= set(placed(d))
    assert pending(d)["p3"].code == PendingCode.QUOTA
    assert pending(d)["slow"].code == PendingCode.QUOTA
    assert "keeps its quota room" in pending(d)["p2"].message
    # Without the switch, small jobs are not held back at all.
    d = run(_room_cluster(), queue, large_patience_devices=16)
    assert {"p5", "p3", "p2", "p1", "quick", "slow"} <= set(placed(d))


def test_a_very_large_gang_keeps_its_quota_room_after_its_hold_window():
    # Waited past the 30-minute threshold and the 2-hour window: no longer starving.
    queue = [
        job("big", whole(3, 8), priority=2, waited=200),
        job("gang", whole(2, 8), priority=2, waited=1),
    ]
    d = run(_room_cluster(), queue, large_patience_devices=16)
    assert "gang" in placed(d)
    d = run(_room_cluster(), queue, large_patience_devices=16, quota_hold_until_start=True)
    assert "keeps its quota room" in pending(d)["gang"].message
    # A gang larger than its tenant's limit could never use the room: nothing is kept.
    queue[0] = job("big", whole(4, 8), priority=2, waited=200)
    d = run(_room_cluster(), queue, large_patience_devices=16, quota_hold_until_start=True)
    assert "gang" in placed(d)


def test_a_quota_blocked_gang_holds_nodes_when_its_own_p4_p5_work_covers_the_room():
    # t1 runs P3 "mine" (n0) and P5 "cheap" (half of n1 and n2); t2 runs "theirs" on the
    # other half of n1 and n2 and on n3, n4. The P2 2 x 8 gang lacks 8 devices of room
    # (16 + 16 > 24), which "cheap" covers, and only n5 is whole and free.
    half = range(4, 8)
    cluster = snap(
        nodes(6),
        [
            running("mine", {"n00000": range(8)}, priority=3),
            running("cheap", {"n00001": half, "n00002": half}, priority=5),
            running("theirs", {f"n0000{i}": range(4) for i in range(1, 5)}, tenant="t2"),
        ],
        quotas=[quota("t1", 16, 8), quota("t2", 16, 8)],
    )
    big = job("big", whole(2, 8), priority=2, waited=60)
    d = run(cluster, [big])
    assert pending(d)["big"].code == PendingCode.QUOTA
    assert d.reservations == ()
    d = run(cluster, [big], hold_while_quota_blocked=True)
    assert pending(d)["big"].code == PendingCode.RESERVED
    held = d.reservations[0].node_ids
    assert len(held) == 2
    # Once its held nodes are free, it preempts its own P5 work for the room.
    rest = [j for j in cluster.running if j.job_id != "theirs"]
    later = snap(nodes(6), rest, quotas=cluster.quotas, reservations=d.reservations)
    d = run(later, [big], hold_while_quota_blocked=True)
    assert "big" in placed(d)
    assert victims(d) == ["cheap"]
    assert d.preemptions[0].kind == PreemptionKind.PRIORITY
    # A P3 gang may not preempt, so holding nodes for it would only idle them.
    p3 = job("big", whole(2, 8), priority=3, waited=60)
    d = run(cluster, [p3], hold_while_quota_blocked=True)
    assert d.reservations == ()


def test_node_drain_follows_the_work_that_ends_last_as_jobs_come_and_go():
    from dataclasses import replace

    from apps.scheduling.core.delay import node_drain
    from apps.scheduling.core.live import LiveCluster

    def at(minutes: float) -> datetime:
        return NOW + timedelta(minutes=minutes)

    jobs = [
        replace(running("short", {"n00000": range(2)}), expected_end=at(30)),
        replace(running("long", {"n00000": range(2, 4)}), expected_end=at(90)),
        running("service", {"n00000": range(4, 5)}),  # declares no end
    ]
    live = LiveCluster(snap(nodes(1), jobs))
    state = live.state
    ns = state.nodes["n00000"]
    # Work of unknown length counts as never ending, until it leaves.
    assert node_drain(state, ns, NOW) == float("inf")
    live.release("service")
    assert node_drain(state, ns, NOW) == 90 * 60
    assert node_drain(state, ns, at(100)) == 0.0  # overran its declared end: not negative
    # A victim released inside a cycle (not yet forgotten) no longer counts; undoing the
    # trial brings it back.
    mark = state.mark()
    state.release_job("long")
    assert node_drain(state, ns, NOW) == 30 * 60
    state.rollback(mark)
    assert node_drain(state, ns, NOW) == 90 * 60
    live.release("long")
    assert node_drain(state, ns, NOW) == 30 * 60
    live.release("short")
    assert node_drain(state, ns, NOW) == 0.0


def test_the_hold_says_when_its_nodes_drain_by_the_runtime_limits_of_their_work():
    def ends(job_id, where, hours):
        return replace(running(job_id, where), expected_end=NOW + timedelta(hours=hours))

    soon = snap(
        nodes(3), [ends("a", {"n00000": range(4)}, 1.5), ends("b", {"n00002": range(8)}, 5)]
    )
    d = run(soon, [_big()])
    assert d.reservations[0].node_ids == ("n00001", "n00000")
    assert pending(d)["big"].message.endswith(
        "; the runtime limits of the work on them free them within 1h30m"
    )
    # Declared runtimes elsewhere, but the held nodes run work that declared none.
    unknown = snap(
        nodes(3),
        [
            running("a", {"n00000": range(4)}),
            running("b", {"n00002": range(8)}),
            ends("c", {"n00001": range(1)}, 1),
        ],
    )
    d = run(unknown, [_big()])
    assert pending(d)["big"].code == PendingCode.RESERVED
    assert pending(d)["big"].message.endswith(
        "; some of them run work without a runtime limit, so when they drain is unknown"
    )
    # Without any declared runtime, nothing is said about when.
    d = run(_busy(), [_big()])
    assert pending(d)["big"].message.endswith("are held for it until 2025-03-01T13:30:00")


def test_work_declared_to_end_before_held_nodes_drain_may_use_them():
    # n0: 4 devices busy for 2 more hours; n1: free; n2: busy for 10 hours. The 2 x 8 gang
    # holds n0 and n1, which drain in 2 hours: a job declared to take 1 hour leaves them by
    # then, one declared 3 hours (or with no runtime) would keep the gang waiting.
    cluster = snap(
        nodes(3),
        [
            replace(running("a", {"n00000": range(4)}), expected_end=NOW + 2 * HOUR),
            replace(running("b", {"n00002": range(8)}), expected_end=NOW + 10 * HOUR),
        ],
    )
    queue = [
        _big(),
        # same shape, submitted first: its failure must not be taken for the short job's
        replace(job("long", whole(1, 1), waited=2), expected_runtime=3 * HOUR),
        replace(job("short", whole(1, 1), waited=1), expected_runtime=HOUR),
        job("unknown", whole(1, 1), waited=1),
    ]
    d = run(cluster, queue, hold_backfill=True)
    assert sorted(d.reservations[0].node_ids) == ["n00000", "n00001"]
    assert "(or to work declared to end within 2h00m)" in d.reservations[0].reason
    assert pending(d)["big"].code == PendingCode.RESERVED
    assert where(placed(d)["short"])[0][0] in {"n00000", "n00001"}
    assert pending(d)["long"].code == PendingCode.HELD
    assert pending(d)["unknown"].code == PendingCode.HELD
    # Without the switch, held nodes go only to the holder and higher priorities.
    d = run(cluster, queue)
    assert pending(d)["short"].code == PendingCode.HELD


def test_a_gang_waiting_for_nodes_keeps_the_quota_room_it_needs():
    # t1 may use 36 devices and runs 8 (n0): its 3 x 8 gang fits its limit, but only n5 is
    # whole and free (t2 runs 4 devices on each of n1-n4), so it waits for nodes. A 2 x 4
    # gang of t1 would fit the free halves and leave t1 less room than the big gang needs.
    cluster = snap(
        nodes(6),
        [
            running("mine", {"n00000": range(8)}, priority=3),
            running("theirs", {f"n0000{i}": range(4) for i in range(1, 5)}, tenant="t2"),
        ],
        quotas=[quota("t1", 24, 12), quota("t2", 16, 8)],
    )
    queue = [
        job("big", whole(3, 8), priority=2, waited=60),
        job("gang", whole(2, 4), priority=2, waited=2),  # 8 + 8 + 24 > 36: kept out
        job("mid", whole(1, 4), priority=2, waited=1),  # 8 + 4 + 24 = 36: leaves the room
    ]
    # (gangs of 8 devices or more count as large here, and so are kept out of the room)
    settings: dict[str, Any] = dict(large_patience_devices=16, large_job_devices=8)
    d = run(cluster, queue, keep_room_while_held=True, **settings)
    assert pending(d)["big"].code == PendingCode.RESERVED
    assert pending(d)["gang"].code == PendingCode.QUOTA
    assert "keeps its quota room" in pending(d)["gang"].message
    assert "mid" in placed(d)
    # Without the switch the gang takes the room while the big gang's nodes drain.
    d = run(cluster, queue, **settings)
    assert "gang" in placed(d)
    # Room is kept in the models the big gang may run on: a gang of t1 on H800 nodes, where
    # t1 may use 16 devices, takes nothing from it.
    a800, h800 = frozenset({"A800"}), frozenset({"H800"})
    mixed = snap(
        [*nodes(6), *nodes(2, model="H800", prefix="h", spine="spine-1")],
        cluster.running,
        quotas=[*cluster.quotas, quota("t1", 16, model="H800")],
    )
    two_models = [
        job("big", whole(3, 8, models=a800), priority=2, waited=60),
        job("gang", whole(2, 4, models=h800), priority=2, waited=2),
    ]
    d = run(mixed, two_models, keep_room_while_held=True, **settings)
    assert pending(d)["big"].code == PendingCode.RESERVED
    assert "gang" in placed(d)
    # A gang the pool could never host (7 nodes of 6) keeps no room, under any limit.
    roomy = replace(cluster, quotas=(quota("t1", 24, 40), quota("t2", 16, 8)))
    queue[0] = job("big", whole(7, 8), priority=2, waited=60)
    d = run(roomy, queue, keep_room_while_held=True, **settings)
    assert "gang" in placed(d)
