"""Per-view frames: one per view per tick, compact deltas with sequence numbers.

Views (topics) and what they carry:

* ``cluster``: cluster and per-pool aggregates (no cells).
* ``heatmap``: every GPU's cell (platform admins).
* ``heatmap:<tenant-slug>``: the tenant's own GPUs' cells plus the cluster aggregate.
* ``node:<hostname>``: the node's rates and its GPUs' cells.
* ``job:<id>``: the job's aggregate and its GPUs' cells.

A frame ``{"type": "telemetry.frame", "topic", "epoch", "seq", "base", "data"}`` turns the
view's state at ``base`` into the state at ``seq``: ``data.cells`` holds changed cells,
``data.removed`` keys that left the view, ``data.summary`` is always whole. ``base == 0`` is a
keyframe that replaces everything. Deltas compose (:func:`merge`), which is what lets a slow
client be sent one merged frame instead of a backlog. Pure Python.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from apps.telemetry.aggregate import CELL_FIELDS, Cell, State

Frame = dict[str, Any]


@dataclass(frozen=True, slots=True)
class View:
    """A topic resolved to what it selects (ids, not names, for tenants)."""

    topic: str
    kind: str  # cluster | heatmap | tenant_heatmap | node | job
    tenant_id: int | None = None
    hostname: str = ""
    job_id: int | None = None

    @property
    def group(self) -> str:
        return group_for(self.topic)


def group_for(topic: str) -> str:
    """Channels group names allow [A-Za-z0-9._-] only, under 100 characters."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in topic)
    return f"tlm.{safe}"[:99]


def members(view: View, state: State) -> dict[str, Cell]:
    if view.kind == "heatmap":
        return state.cells
    if view.kind == "tenant_heatmap":
        return {k: c for k, c in state.cells.items() if state.owners[k].tenant_id == view.tenant_id}
    if view.kind == "node":
        prefix = f"{view.hostname}:"
        return {k: c for k, c in state.cells.items() if k.startswith(prefix)}
    if view.kind == "job":
        return {k: c for k, c in state.cells.items() if state.owners[k].job_id == view.job_id}
    return {}


def summary(view: View, state: State) -> dict[str, Any]:
    if view.kind == "cluster":
        return {"cluster": state.cluster, "pools": {str(k): v for k, v in state.pools.items()}}
    if view.kind == "heatmap":
        return {"cluster": state.cluster}
    if view.kind == "tenant_heatmap":
        own = state.tenants.get(view.tenant_id or 0, {})
        return {"cluster": state.cluster, "tenant": own}
    if view.kind == "node":
        return {"node": state.nodes.get(view.hostname, {})}
    if view.kind == "job":
        return {"job": state.jobs.get(view.job_id or 0, {})}
    return {}


def snapshot(view: View, state: State, seq: int, epoch: str) -> Frame:
    """The whole view as a keyframe (also what the REST snapshot returns)."""
    cells = members(view, state)
    return _frame(
        view.topic, epoch, seq, 0, {k: list(v) for k, v in cells.items()}, [], view, state
    )


def _frame(
    topic: str,
    epoch: str,
    seq: int,
    base: int,
    cells: dict[str, list[int]],
    removed: list[str],
    view: View,
    state: State,
) -> Frame:
    return {
        "type": "telemetry.frame",
        "topic": topic,
        "epoch": epoch,
        "seq": seq,
        "base": base,
        "at": round(state.at, 3),
        "data": {
            "fields": list(CELL_FIELDS),
            "cells": cells,
            "removed": removed,
            "summary": summary(view, state),
        },
    }


@dataclass
class FrameCutter:
    """Remembers what each view last sent, so the next frame carries only the change.

    One instance per publisher process; ``epoch`` changes on restart so clients resync.
    """

    epoch: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    seq: int = 0
    _sent: dict[str, tuple[int, dict[str, Cell]]] = field(default_factory=dict)

    def cut(self, state: State, views: Iterable[View]) -> list[tuple[View, Frame]]:
        """Frames for one tick; the tick's sequence number is shared by every view."""
        self.seq += 1
        out: list[tuple[View, Frame]] = []
        active = set()
        for view in views:
            active.add(view.topic)
            now = members(view, state)
            prev = self._sent.get(view.topic)
            if prev is None or prev[0] != self.seq - 1:
                frame = _frame(
                    view.topic, self.epoch, self.seq, 0,
                    {k: list(v) for k, v in now.items()}, [], view, state,
                )  # fmt: skip
            else:
                before = prev[1]
                changed = {k: list(v) for k, v in now.items() if before.get(k) != v}
                removed = [k for k in before if k not in now]
                frame = _frame(
                    view.topic, self.epoch, self.seq, prev[0], changed, removed, view, state
                )
            self._sent[view.topic] = (self.seq, now)
            out.append((view, frame))
        for topic in [t for t in self._sent if t not in active]:
            del self._sent[topic]
        return out


def merge(older: Frame, newer: Frame) -> Frame:
    """One frame equivalent to applying ``older`` then ``newer`` (same topic)."""
    if newer["base"] == 0 or newer["epoch"] != older["epoch"]:
        return newer
    if newer["base"] != older["seq"]:
        return newer  # not contiguous: the client will see the gap and resync
    cells = dict(older["data"]["cells"])
    removed = set(older["data"]["removed"])
    for key in newer["data"]["removed"]:
        cells.pop(key, None)
        removed.add(key)
    for key, value in newer["data"]["cells"].items():
        cells[key] = value
        removed.discard(key)
    data = {**newer["data"], "cells": cells, "removed": sorted(removed)}
    return {**newer, "base": older["base"], "data": data}


def apply(state: dict[str, list[int]], frame: Frame) -> dict[str, list[int]]:
    """What a client does with a frame (used by tests and the benchmark's clients)."""
    cells = {} if frame["base"] == 0 else dict(state)
    for key in frame["data"]["removed"]:
        cells.pop(key, None)
    cells.update(frame["data"]["cells"])
    return cells


def encode(frame: Frame) -> str:
    return json.dumps(frame, separators=(",", ":"))
