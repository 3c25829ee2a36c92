"""Coalescing of encoded frames for slow sockets, shared by every consumer in a process.

A web process holds many sockets watching the same view. When they fall behind together
(a busy process, a burst), each would otherwise decode the same 300 KB frames, merge them and
encode the result again: work per client that grows exactly when the process is short of CPU.
Frames are identified by their header (topic, epoch, base, seq), so one merge of a given pair
is computed once per process and the encoded text is handed to every socket that needs it.
"""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from typing import NamedTuple

from apps.telemetry.frames import Frame, encode, merge

# encode() writes keys in _frame's order, so the header is at a fixed place near the start.
_HEADER = re.compile(
    r'^\{"type":"telemetry\.frame","topic":"((?:[^"\\]|\\.)*)","epoch":"([0-9a-f]*)",'
    r'"seq":(\d+),"base":(\d+),"at":([0-9.eE+-]+)'
)
_MEMO_SIZE = 16


class Header(NamedTuple):
    topic: str
    epoch: str
    seq: int
    base: int
    at: float


def header(text: str) -> Header | None:
    """The frame's identity without decoding its cells; None if ``text`` is not an
    :func:`~apps.telemetry.frames.encode`\\ d frame."""
    found = _HEADER.match(text, 0, 512)
    if found is None:
        return None
    topic, epoch, seq, base, at = found.groups()
    return Header(json.loads(f'"{topic}"'), epoch, int(seq), int(base), float(at))


class Coalescer:
    """Merges encoded frames, remembering recent decodes and merges (bounded LRU)."""

    def __init__(self, size: int = _MEMO_SIZE) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._decoded: OrderedDict[tuple[str, str, int, int], Frame] = OrderedDict()
        self._merged: OrderedDict[tuple[object, ...], str] = OrderedDict()

    def merge_text(self, older: str, newer: str) -> str:
        """The encoded equivalent of :func:`~apps.telemetry.frames.merge` on two texts."""
        old_h, new_h = header(older), header(newer)
        if old_h is None or new_h is None:
            return encode(merge(json.loads(older), json.loads(newer)))
        if new_h.base == 0 or new_h.epoch != old_h.epoch or new_h.base != old_h.seq:
            return newer  # what merge() would return: no decode needed
        key = (old_h.topic, old_h.epoch, old_h.base, old_h.seq, new_h.seq)
        with self._lock:
            hit = self._merged.get(key)
            if hit is not None:
                self._merged.move_to_end(key)
                return hit
        text = encode(merge(self._decode(older, old_h), self._decode(newer, new_h)))
        with self._lock:
            self._merged[key] = text
            while len(self._merged) > self._size:
                self._merged.popitem(last=False)
        return text

    def _decode(self, text: str, head: Header) -> Frame:
        key = (head.topic, head.epoch, head.base, head.seq)
        with self._lock:
            hit = self._decoded.get(key)
            if hit is not None:
                self._decoded.move_to_end(key)
                return hit
        frame: Frame = json.loads(text)
        with self._lock:
            self._decoded[key] = frame
            while len(self._decoded) > self._size:
                self._decoded.popitem(last=False)
        return frame


coalescer = Coalescer()
