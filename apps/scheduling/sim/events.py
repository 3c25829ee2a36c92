"""The event queue of the simulator: a virtual clock and a heap of timestamped events.

Events at the same instant are ordered by kind first (completions and failures free
resources before arrivals are seen, and the scheduling cycle runs after all of them), then
by insertion order, so a run is a pure function of its inputs and seed.
"""

from __future__ import annotations

import heapq
from enum import IntEnum
from typing import NamedTuple


class Kind(IntEnum):
    """Event kinds; the value is the order of kinds at the same instant."""

    COMPLETE = 0
    NODE_FAIL = 1
    NODE_DRAIN = 2  # a cordoned node's running work is stopped (``NodeFailure.drain_after``)
    NODE_REPAIR = 3
    ARRIVE = 4
    WAKE = 5  # a time-based change of the queue (starvation threshold, hold expiry)
    CYCLE = 6
    SAMPLE = 7


class Event(NamedTuple):
    """Ordered by time, then kind, then insertion (``seq`` is unique: payloads never compare)."""

    time: float
    kind: int
    seq: int
    payload: object = None


class EventQueue:
    """A min-heap of events with a virtual clock that only moves forward."""

    def __init__(self) -> None:
        self._heap: list[Event] = []
        self._seq = 0
        self.now = 0.0

    def push(self, time: float, kind: Kind, payload: object = None) -> Event:
        if time < self.now:
            raise ValueError(f"event at {time} is in the past (now {self.now})")
        self._seq += 1
        event = Event(time, kind, self._seq, payload)
        heapq.heappush(self._heap, event)
        return event

    def pop(self) -> Event:
        event = heapq.heappop(self._heap)
        self.now = event.time
        return event

    def peek_time(self) -> float | None:
        return self._heap[0].time if self._heap else None

    def __len__(self) -> int:
        return len(self._heap)

    def __bool__(self) -> bool:
        return bool(self._heap)
