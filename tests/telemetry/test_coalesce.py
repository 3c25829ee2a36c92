"""Coalescing encoded frames: same result as merge(), computed once per process."""

from __future__ import annotations

import json

from apps.telemetry.aggregate import Owner, State
from apps.telemetry.coalesce import Coalescer, header
from apps.telemetry.frames import FrameCutter, View, apply, encode, merge

HEAT = View(topic="heatmap", kind="heatmap")
TENANT = View(topic="heatmap:team-a", kind="tenant_heatmap", tenant_id=10)


def state(at: float, cells: dict[str, tuple[int, int, int, int, int]]) -> State:
    owners = {k: Owner(job_id=1, tenant_id=10) for k in cells}
    return State(at=at, cells=cells, owners=owners, nodes={})


def texts(view: View) -> list[str]:
    cutter = FrameCutter(epoch="abc123")
    states = [
        state(1.5, {"a:0": (90, 1, 60, 300, 80), "a:1": (80, 1, 60, 300, 80)}),
        state(2.5, {"a:0": (91, 1, 60, 300, 80), "a:1": (80, 1, 60, 300, 80)}),
        state(3.5, {"a:0": (91, 1, 60, 300, 80)}),
        state(4.5, {"a:0": (92, 1, 60, 300, 80), "a:2": (1, 1, 1, 1, 1)}),
    ]
    return [encode(cutter.cut(s, [view])[0][1]) for s in states]


def test_header_reads_identity_without_decoding() -> None:
    first, second, *_ = texts(TENANT)
    assert header(first) == ("heatmap:team-a", "abc123", 1, 0, 1.5)
    assert header(second) == ("heatmap:team-a", "abc123", 2, 1, 2.5)
    assert header('{"type":"subscribed","topic":"heatmap"}') is None


def test_merged_text_equals_merge_of_decoded_frames() -> None:
    frames = texts(HEAT)
    coalescer = Coalescer()
    pending = frames[1]
    for newer in frames[2:]:
        expected = merge(json.loads(pending), json.loads(newer))
        pending = coalescer.merge_text(pending, newer)
        assert json.loads(pending) == expected
    merged = json.loads(pending)
    assert (merged["base"], merged["seq"]) == (1, 4)
    assert apply(apply({}, json.loads(frames[0])), merged) == {
        "a:0": [92, 1, 60, 300, 80],
        "a:2": [1, 1, 1, 1, 1],
    }


def test_sockets_lagging_together_share_one_merge() -> None:
    older, newer = texts(HEAT)[1:3]
    coalescer = Coalescer()
    # Each socket holds its own copy of the texts, as the channel layer delivers them.
    one = coalescer.merge_text("".join(older), "".join(newer))
    two = coalescer.merge_text("".join(older), "".join(newer))
    assert one is two


def test_keyframe_or_gap_replaces_without_decoding() -> None:
    frames = texts(HEAT)
    coalescer = Coalescer()
    assert coalescer.merge_text(frames[1], frames[0]) is frames[0]  # base 0: a keyframe
    assert coalescer.merge_text(frames[1], frames[3]) is frames[3]  # base 3 != seq 2: a gap
