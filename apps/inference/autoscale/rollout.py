"""Rolling updates of a service, as plain arithmetic (no Django import).

``rollout_step`` is what a Kubernetes Deployment controller does on each sync of a rolling
update, so the simulated cluster's services roll the way real ones do: new-revision replicas
are started while the total stays within ``desired + surge``, and old ones are stopped while
at least ``desired - unavailable`` replicas stay ready. ``plan_surge_release`` decides, once a
rollout on a real cluster is done, which held devices to give back: the surge room was
admitted on some node, but the Deployment may have put a new pod there and left another
node's slot empty instead.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class RolloutStep:
    start: int  # new-revision replicas to start (they load first)
    stop_outdated: int  # ready replicas of the old revision to stop
    stop_fresh: int  # new-revision replicas beyond the desired count (a scale-down meanwhile)


def rollout_step(
    *,
    desired: int,
    outdated: int,
    fresh_ready: int,
    fresh_loading: int,
    surge: int,
    unavailable: int,
) -> RolloutStep:
    """One step of a rolling update towards ``desired`` replicas of the new revision.

    ``outdated`` ready replicas still run the old revision; ``surge`` is how many replicas
    beyond ``desired`` may exist at once (the room admitted for them), ``unavailable`` how many
    of ``desired`` may be missing from the ready ones. With both 0 no step is possible."""
    fresh = fresh_ready + fresh_loading
    stop_fresh = max(0, fresh - desired)
    fresh -= stop_fresh
    total = outdated + fresh
    start = max(0, min(desired + surge - total, desired - fresh))
    ready = outdated + min(fresh_ready, fresh)
    stop_outdated = max(0, min(outdated, ready - (desired - unavailable)))
    return RolloutStep(start=start, stop_outdated=stop_outdated, stop_fresh=stop_fresh)


def rollout_done(*, desired: int, outdated: int, fresh_ready: int) -> bool:
    return outdated == 0 and fresh_ready >= desired


@dataclass(frozen=True)
class Slot:
    """Devices a service holds on one node (an allocation row)."""

    id: int
    node: str
    surge: bool


@dataclass(frozen=True)
class SurgeRelease:
    # (slot, surge slot): the slot takes the surge slot's node and devices, where a new pod runs
    moves: tuple[tuple[int, int], ...]
    released: tuple[int, ...]  # surge slots given back
    kept: tuple[int, ...]  # surge slots that cannot go yet: every slot still has a pod


def plan_surge_release(slots: Sequence[Slot], pods: Mapping[str, int]) -> SurgeRelease:
    """Which surge slots to give back when the rollout is done, given the service's pods per
    node. A surge slot on a node with fewer pods than slots goes as it is. One on a node whose
    slots all have pods goes after a slot on a node with an empty slot takes its place (the
    Deployment started a new pod on the surge node and stopped an old one elsewhere), so the
    rows keep saying where the pods are."""
    held = Counter(slot.node for slot in slots)
    empty = {node: held[node] - pods.get(node, 0) for node in held}
    movable = [s for s in slots if not s.surge]
    moves: list[tuple[int, int]] = []
    released: list[int] = []
    kept: list[int] = []
    for surge in sorted((s for s in slots if s.surge), key=lambda s: s.id):
        if empty[surge.node] > 0:
            empty[surge.node] -= 1
            released.append(surge.id)
            continue
        other = next((s for s in movable if empty[s.node] > 0), None)
        if other is None:
            kept.append(surge.id)
            continue
        empty[other.node] -= 1
        movable.remove(other)
        moves.append((other.id, surge.id))
        released.append(surge.id)
    return SurgeRelease(tuple(moves), tuple(released), tuple(kept))
