"""The rolling update's arithmetic (no Django): the Deployment controller's step, the
simulated replicas it drives, and which held devices a finished rollout gives back."""

from __future__ import annotations

import pytest

from apps.inference.autoscale.replicas import ReplicaModel, ServiceSim
from apps.inference.autoscale.rollout import (
    RolloutStep,
    Slot,
    plan_surge_release,
    rollout_done,
    rollout_step,
)


def _roll(
    desired: int, surge: int, unavailable: int, cold_start_s: float = 3.0
) -> list[tuple[int, int, int]]:
    """Run a rollout of ``desired`` ready replicas to the end, one second a step; the
    (outdated, new ready, loading) after each step."""
    sim = ServiceSim(ReplicaModel(cold_start_s=cold_start_s), ready=desired)
    sim.begin_rollout()
    seen = []
    for _ in range(100):
        step = rollout_step(
            desired=desired, outdated=sim.outdated, fresh_ready=sim.ready - sim.outdated,
            fresh_loading=len(sim.loading), surge=surge, unavailable=unavailable,
        )  # fmt: skip
        sim.roll(step.start, step.stop_outdated, step.stop_fresh)
        seen.append((sim.outdated, sim.ready - sim.outdated, len(sim.loading)))
        if rollout_done(
            desired=desired, outdated=sim.outdated, fresh_ready=sim.ready - sim.outdated
        ):
            return seen
        sim.step(0.0, 1.0)
    raise AssertionError(f"the rollout did not end: {seen[-5:]}")


def test_one_surge_replica_keeps_every_replica_ready_throughout() -> None:
    seen = _roll(desired=3, surge=1, unavailable=0)
    for outdated, fresh, loading in seen:
        assert outdated + fresh >= 3  # never fewer ready than desired
        assert outdated + fresh + loading <= 4  # never more than one extra
    assert seen[-1] == (0, 3, 0)
    assert seen[0] == (3, 0, 1)  # the first step starts one new replica, stops none


def test_without_surge_room_replicas_are_replaced_in_place_one_at_a_time() -> None:
    seen = _roll(desired=3, surge=0, unavailable=1)
    for outdated, fresh, loading in seen:
        assert outdated + fresh + loading <= 3  # never beyond the held devices
        assert outdated + fresh >= 2  # at most one missing
    # as a Deployment does: an old replica stops first, its replacement starts at the next step
    assert seen[:2] == [(2, 0, 0), (2, 0, 1)]
    assert seen[-1] == (0, 3, 0)


def test_more_surge_rolls_faster() -> None:
    assert len(_roll(desired=4, surge=2, unavailable=0)) < len(
        _roll(desired=4, surge=1, unavailable=0)
    )


def test_neither_surge_nor_unavailable_is_no_step() -> None:
    assert rollout_step(desired=2, outdated=2, fresh_ready=0, fresh_loading=0, surge=0,
                        unavailable=0) == RolloutStep(0, 0, 0)  # fmt: skip


def test_a_scale_down_during_a_rollout_stops_new_replicas_beyond_the_count() -> None:
    # 3 new (2 ready, 1 loading) and 1 old, but the autoscaler now wants 2
    step = rollout_step(desired=2, outdated=1, fresh_ready=2, fresh_loading=1, surge=1,
                        unavailable=0)  # fmt: skip
    assert step == RolloutStep(start=0, stop_outdated=1, stop_fresh=1)
    sim = ServiceSim(ReplicaModel(), ready=3, loading=[5.0])
    sim.outdated = 1
    sim.roll(step.start, step.stop_outdated, step.stop_fresh)
    assert (sim.ready, sim.outdated, sim.loading) == (2, 0, [])


def test_a_scale_up_during_a_rollout_starts_new_replicas() -> None:
    step = rollout_step(desired=4, outdated=2, fresh_ready=0, fresh_loading=1, surge=1,
                        unavailable=0)  # fmt: skip
    assert step.start == 2  # up to 4 + 1 in all, all of the new revision
    assert step.stop_outdated == 0  # 2 ready < 4 - 0: none may stop yet


def test_begin_rollout_restarts_loading_replicas_on_the_new_revision() -> None:
    sim = ServiceSim(ReplicaModel(cold_start_s=60.0), ready=2, loading=[10.0])
    sim.begin_rollout()
    assert (sim.outdated, sim.loading) == (2, [60.0])


def test_set_desired_stops_outdated_replicas_first() -> None:
    sim = ServiceSim(ReplicaModel(), ready=4)
    sim.outdated = 3
    sim.set_desired(2)
    assert (sim.ready, sim.outdated) == (2, 1)


@pytest.mark.parametrize(
    ("slots", "pods", "moves", "released", "kept"),
    [
        # the surge node's pod stopped: the surge slot goes as it is
        (
            [Slot(1, "a", False), Slot(2, "b", False), Slot(3, "c", True)],
            {"a": 1, "b": 1},
            (),
            (3,),
            (),
        ),
        # a new pod runs on the surge node and node a's slot is empty: slot 1 moves to c
        (
            [Slot(1, "a", False), Slot(2, "b", False), Slot(3, "c", True)],
            {"b": 1, "c": 1},
            ((1, 3),),
            (3,),
            (),
        ),
        # two slots on one node, one empty there
        ([Slot(1, "a", False), Slot(2, "a", False), Slot(3, "a", True)], {"a": 2}, (), (3,), ()),
        # every slot still has a pod (an old one terminating): nothing can go yet
        ([Slot(1, "a", False), Slot(3, "c", True)], {"a": 1, "c": 1}, (), (), (3,)),
        # two surge slots, one empty in place, one to swap with b
        (
            [Slot(1, "a", False), Slot(2, "b", False), Slot(3, "c", True), Slot(4, "d", True)],
            {"a": 1, "d": 1},
            ((2, 4),),
            (3, 4),
            (),
        ),
    ],
    ids=["in-place", "swap", "same-node", "wait", "two"],
)
def test_plan_surge_release(
    slots: list[Slot], pods: dict[str, int], moves: tuple[tuple[int, int], ...],
    released: tuple[int, ...], kept: tuple[int, ...],
) -> None:  # fmt: skip
    plan = plan_surge_release(slots, pods)
    assert (plan.moves, plan.released, plan.kept) == (moves, released, kept)
