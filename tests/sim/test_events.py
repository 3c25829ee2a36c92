"""The event queue: time order, then kind, then insertion; the clock never goes back."""

import pytest

from apps.scheduling.sim.events import EventQueue, Kind


def test_events_come_out_by_time_then_kind_then_insertion():
    q = EventQueue()
    q.push(5.0, Kind.CYCLE, "cycle@5")
    q.push(5.0, Kind.ARRIVE, "a@5")
    q.push(1.0, Kind.SAMPLE, "s@1")
    q.push(5.0, Kind.COMPLETE, "c@5")
    q.push(5.0, Kind.ARRIVE, "b@5")
    out = [q.pop().payload for _ in range(len(q))]
    assert out == ["s@1", "c@5", "a@5", "b@5", "cycle@5"]
    assert q.now == 5.0


def test_the_clock_moves_forward_only():
    q = EventQueue()
    q.push(3.0, Kind.ARRIVE)
    q.pop()
    with pytest.raises(ValueError, match="in the past"):
        q.push(2.0, Kind.ARRIVE)
    q.push(3.0, Kind.CYCLE)  # the same instant is fine
    assert q.peek_time() == 3.0


def test_payloads_are_never_compared():
    q = EventQueue()
    q.push(1.0, Kind.ARRIVE, {"not": "orderable"})
    q.push(1.0, Kind.ARRIVE, {"also": "not"})
    assert [q.pop().seq for _ in range(2)] == [1, 2]
