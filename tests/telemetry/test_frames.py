"""Frames: deltas with sequence numbers that compose, per-view scoping."""

from __future__ import annotations

from apps.telemetry.aggregate import Owner, State
from apps.telemetry.frames import FrameCutter, View, apply, merge, snapshot


def state(at: float, cells: dict[str, tuple[int, int, int, int, int]]) -> State:
    owners = {k: Owner(job_id=1, tenant_id=10) if k.startswith("a") else Owner() for k in cells}
    return State(at=at, cells=cells, owners=owners, nodes={})


HEAT = View(topic="heatmap", kind="heatmap")
TENANT = View(topic="heatmap:t", kind="tenant_heatmap", tenant_id=10)


def test_first_frame_is_a_keyframe_then_only_changes() -> None:
    cutter = FrameCutter(epoch="e")
    s1 = state(1, {"a:0": (90, 1, 60, 300, 80), "b:0": (0, 0, 35, 60, 0)})
    s2 = state(2, {"a:0": (91, 1, 60, 300, 80), "b:0": (0, 0, 35, 60, 0)})
    (_, f1), (_, t1) = cutter.cut(s1, [HEAT, TENANT])
    (_, f2), (_, t2) = cutter.cut(s2, [HEAT, TENANT])
    assert (f1["seq"], f1["base"], sorted(f1["data"]["cells"])) == (1, 0, ["a:0", "b:0"])
    assert (f2["seq"], f2["base"], f2["data"]["cells"]) == (2, 1, {"a:0": [91, 1, 60, 300, 80]})
    assert sorted(t1["data"]["cells"]) == ["a:0"] and t2["data"]["cells"] == {
        "a:0": [91, 1, 60, 300, 80]
    }
    assert apply(apply({}, f1), f2) == snapshot(HEAT, s2, 2, "e")["data"]["cells"]


def test_merged_deltas_equal_applying_both() -> None:
    cutter = FrameCutter(epoch="e")
    states = [
        state(1, {"a:0": (90, 1, 60, 300, 80), "a:1": (80, 1, 60, 300, 80)}),
        state(2, {"a:0": (91, 1, 60, 300, 80), "a:1": (80, 1, 60, 300, 80)}),
        state(3, {"a:0": (91, 1, 60, 300, 80)}),
        state(4, {"a:0": (92, 1, 60, 300, 80), "a:2": (1, 1, 1, 1, 1)}),
    ]
    frames = [cutter.cut(s, [HEAT])[0][1] for s in states]
    client = apply({}, frames[0])
    merged = merge(merge(frames[1], frames[2]), frames[3])
    assert (merged["base"], merged["seq"]) == (1, 4)
    assert apply(client, merged) == apply(apply(apply(client, frames[1]), frames[2]), frames[3])
    assert apply(client, merged) == {"a:0": [92, 1, 60, 300, 80], "a:2": [1, 1, 1, 1, 1]}


def test_a_view_that_skipped_a_tick_restarts_with_a_keyframe() -> None:
    cutter = FrameCutter(epoch="e")
    s = state(1, {"a:0": (90, 1, 60, 300, 80)})
    cutter.cut(s, [HEAT])
    cutter.cut(s, [])
    (_, frame), = cutter.cut(s, [HEAT])  # fmt: skip
    assert (frame["seq"], frame["base"]) == (3, 0)
