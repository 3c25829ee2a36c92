"""Named policies: the core's defaults, and the settings the simulator benchmarks as ours.

``tuned`` is what docs/benchmarks.md measures as "Ours" on the 10,000-GPU LLM workload
(every switch of the core, chosen round by round there). The product's loop runs the
preset that ``ZS_SCHEDULER_POLICY`` names; the simulator's ``ours`` is ``tuned`` too, so the
two cannot drift apart. Some of its switches act only on declared runtimes
(``drain_wait``, the drain order of holds, ``hold_backfill``): in the product those are
the jobs' runtime limits (``max_runtime_s``, which governance enforces), and they do not
trigger for work that declared none.
"""

from __future__ import annotations

from datetime import timedelta

from .model import Packing, Policy

HOLD_PER_DEVICES = 2500
"""One delay-scheduling hold per this many devices (four at 10,000 GPUs): holds on more
nodes at once compete for the same draining capacity (8 holds did worse than 4 on the
10,000-GPU workload, docs/benchmarks.md)."""

PRESETS = ("standard", "tuned")


def tuned(*, devices: int | None = None, quotas: bool = True) -> Policy:
    """The benchmarked settings. ``devices``: the cluster's size, which scales the number
    of holds (None: two). ``quotas``: whether guarantees and borrowing limits apply."""
    holds = 2 if devices is None else max(2, devices // HOLD_PER_DEVICES)
    return Policy(
        packing=Packing.FRAGMENTATION,
        quotas=quotas,
        topology_patience=timedelta(hours=5),
        large_topology_patience=timedelta(minutes=10),
        large_patience_devices=256,
        large_starvation_threshold=timedelta(0),
        drain_wait=timedelta(hours=1),
        placeable_drain_wait=timedelta(minutes=20),
        hold_while_quota_blocked=True,
        quota_hold_until_start=True,
        lend_quota_room_to_preemptible=True,
        hold_backfill=True,
        keep_room_while_held=True,
        tenant_first=True,
        max_holds=holds,
        max_hold=timedelta(hours=12),
    )


def preset(name: str, *, devices: int | None = None) -> Policy:
    """The policy called ``name`` (one of ``PRESETS``): ``standard`` is ``Policy()``."""
    if name == "standard":
        return Policy()
    if name == "tuned":
        return tuned(devices=devices)
    raise ValueError(f"unknown scheduler policy '{name}' (choose from {', '.join(PRESETS)})")
