"""The policies a simulation compares, each a set of switches of the same core.

* ``fifo-spread``: what the default kube-scheduler does: pods one by one (no gang), spread
  over the least allocated nodes, the queue in submit order, no preemption, no topology, no
  borrowing quotas.
* ``best-fit``: the classic baseline of the "Beware of Fragmentation" paper: each job on the
  feasible node it leaves with the least free capacity, queue in submit order.
* ``volcano``: what Volcano's usual configuration gives: gang, binpack, priority order and
  priority preemption; no topology, no delay scheduling, no quota borrowing.
* ``ours``: everything the product defines (C3, C4): gang, topology-aware placement, delay
  scheduling, quota guarantees with borrowing and reclaim, dominant-share fair share,
  priority preemption, and fragmentation-aware packing that learns the mix of task shapes
  from the arrivals it has seen. Its non-default settings: soft-topology jobs wait up to
  30 minutes for their tightest tier (``topology_patience``), and up to two starving large
  jobs may hold nodes, for up to 4 hours each (``max_holds``, ``max_hold``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from apps.scheduling.core import Packing, Policy


@dataclass(frozen=True, slots=True)
class PolicySpec:
    name: str
    label: str
    policy: Policy
    fifo: bool = False  # every job is shown to the core at one priority: submit order only
    learn_profile: bool = False  # pass the observed mix of task shapes to the core
    profile_by_demand: bool = False  # weigh shapes by accelerators requested, not by count


def fifo_spread(*, quotas: bool = False) -> PolicySpec:
    return PolicySpec(
        "fifo-spread",
        "FIFO + spread (kube-scheduler default)",
        Policy(
            gang=False,
            packing=Packing.SPREAD,
            preemption=False,
            topology=False,
            delay_scheduling=False,
            quotas=quotas,
            reclaim=False,
            fair_share=False,
        ),
        fifo=True,
    )


def best_fit(*, quotas: bool = False) -> PolicySpec:
    return PolicySpec(
        "best-fit",
        "Best-fit",
        Policy(
            gang=True,
            packing=Packing.BEST_FIT,
            preemption=False,
            topology=False,
            delay_scheduling=False,
            quotas=quotas,
            reclaim=False,
            fair_share=False,
        ),
        fifo=True,
    )


def volcano(*, quotas: bool = False) -> PolicySpec:
    return PolicySpec(
        "volcano",
        "Volcano-like (gang + binpack + priority)",
        Policy(
            gang=True,
            packing=Packing.BINPACK,
            preemption=True,
            topology=False,
            delay_scheduling=False,
            quotas=quotas,
            reclaim=False,
            fair_share=False,
        ),
    )


def ours(*, quotas: bool = True) -> PolicySpec:
    return PolicySpec(
        "ours",
        "Ours (all switches + fragmentation-aware)",
        Policy(
            packing=Packing.FRAGMENTATION,
            quotas=quotas,
            topology_patience=timedelta(minutes=30),
            max_holds=2,
            max_hold=timedelta(hours=4),
        ),
        learn_profile=True,
    )


def standard(*, quotas: bool = True) -> list[PolicySpec]:
    """The four policies, side by side. ``quotas``: whether the workload defines quotas
    (ours enforces them; the baselines never borrow, they only see hard limits if any)."""
    return [fifo_spread(), best_fit(), volcano(), ours(quotas=quotas)]


BY_NAME = {"fifo-spread": fifo_spread, "best-fit": best_fit, "volcano": volcano, "ours": ours}
