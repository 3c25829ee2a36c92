"""The node outages of a what-if window, read from the health incidents (``apps.health``).

A replay that leaves every node healthy for the whole window compares a policy on a
better cluster than the one that really ran the work: a drained node's jobs restarted, a
cordoned node took no new work. Each incident that took its node out of service (the
catalogue's ``cordon`` and ``cordon_drain`` actions, and a remediation escalated to a
cordon) becomes a simulator outage (``sim.workload.NodeFailure``) from the moment the
node was cordoned until the incident was closed (or the window's end, if still open). A
``cordon_drain`` incident stops the node's running work when it starts (in the replay:
whatever the replayed policy put there); a plain cordon lets it run on. Incidents of
one node that overlap, or touch, are one outage: cordoned from the first one's start,
drained from the first draining one's start.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Q
from django.utils.dateparse import parse_datetime

from apps.health.models import FaultAction, Incident
from apps.health.services import CORDONED_NOTE, CORDONING
from apps.scheduling.sim.workload import NodeFailure


@dataclass(frozen=True)
class Outage:
    """A node out of service, in seconds from the window's start."""

    node_id: str
    start: float
    end: float
    drain_at: float | None  # when its work was stopped; None: a cordon only

    def failure(self) -> NodeFailure:
        return NodeFailure(
            time=self.start,
            node_id=self.node_id,
            repair=self.end - self.start,
            drain_after=None if self.drain_at is None else self.drain_at - self.start,
        )


def _cordoned_at(incident: Incident) -> datetime:
    """When the incident cordoned its node: its "cordoned" note (a remediation escalated
    later than it opened), else when it opened."""
    for entry in incident.actions_taken or []:
        if isinstance(entry, list) and len(entry) == 2 and entry[1] == CORDONED_NOTE:
            when = parse_datetime(str(entry[0]))
            if when is not None:
                return when
    return incident.opened_at


def _merged(spans: list[tuple[float, float, bool]], node_id: str) -> list[Outage]:
    """One node's (start, end, drains) spans as outages: overlapping or touching spans
    join (the simulator ignores a failure of a node already out of service)."""
    out: list[Outage] = []
    for start, end, drains in sorted(spans):
        drain = start if drains else None
        last = out[-1] if out else None
        if last is not None and start <= last.end:
            out[-1] = Outage(
                node_id,
                last.start,
                max(last.end, end),
                last.drain_at if last.drain_at is not None else drain,
            )
        else:
            out.append(Outage(node_id, start, end, drain))
    return out


def window_outages(start: datetime, end: datetime, node_ids: set[str]) -> list[Outage]:
    """The outages of the nodes ``node_ids`` (``core.Node.node_id``: the node's pk) inside
    ``[start, end)``, ordered by start, then node."""
    horizon = (end - start).total_seconds()
    rows = Incident.objects.filter(
        Q(closed_at__isnull=True) | Q(closed_at__gt=start),
        action__in=CORDONING,
        opened_at__lt=end,
    ).order_by("pk")
    spans: dict[str, list[tuple[float, float, bool]]] = {}
    for incident in rows:
        node_id = str(incident.node_id)
        if node_id not in node_ids:
            continue
        began = max((_cordoned_at(incident) - start).total_seconds(), 0.0)
        closed = incident.closed_at
        until = horizon if closed is None else min((closed - start).total_seconds(), horizon)
        if until <= began:
            continue
        drains = incident.action == FaultAction.CORDON_DRAIN
        spans.setdefault(node_id, []).append((began, until, drains))
    outages = [o for node_id, s in spans.items() for o in _merged(s, node_id)]
    outages.sort(key=lambda o: (o.start, o.node_id))
    return outages


MAX_SPANS = 500
"""Outages a run stores one by one for its chart (the first, by start); the counts cover all."""


def summary(outages: list[Outage], *, replayed: bool) -> dict[str, Any]:
    """What a run stores of the window's outages: counts, and each one's span in hours from
    the window's start (``outages`` ordered by start, as ``window_outages`` gives them)."""
    return {
        "outages": len(outages),
        "drained": sum(1 for o in outages if o.drain_at is not None),
        "node_hours": sum(o.end - o.start for o in outages) / 3600,
        "replayed": replayed,
        "spans": [
            {"start_h": o.start / 3600, "end_h": o.end / 3600, "drained": o.drain_at is not None}
            for o in outages[:MAX_SPANS]
        ],
    }
