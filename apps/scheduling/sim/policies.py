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
  from the arrivals it has seen. Its non-default settings (``core.presets.tuned``, which
  the product's scheduling loop runs with ``ZS_SCHEDULER_POLICY=tuned``): soft-topology
  gangs wait up to 5 hours for their tightest tier (``topology_patience``; 2 hours until
  the eighth round of docs/benchmarks.md: 5 hours puts 96.5% of leaf-sized gangs in one
  leaf instead of 95.3%, at the cost of longer waits for 9-32-node gangs), gangs of 256
  devices or more only 10 minutes (``large_topology_patience``: a gang that needs a whole
  leaf rarely finds one empty, and its own wait is what fairness is judged on); starving
  jobs may hold nodes for up to 12 hours each, one hold per 2,500 devices of the cluster,
  at least two
  (``max_holds``, ``max_hold``); with declared runtimes (the simulator passes each job's
  remaining run time) holds go to the nodes that drain soonest. Gangs of 256 devices or
  more hold from their first cycle (``large_starvation_threshold`` 0: a whole leaf starts
  draining at once), and a gang whose held nodes lie in its tightest tier and are expected
  to be free within an hour keeps waiting for them past its patience (``drain_wait``), or
  within 20 minutes when it could start elsewhere at once (``placeable_drain_wait``).
  A starving gang that its own tenant's borrowing limit blocks holds nodes as well when its
  tenant's own P4/P5 work covers the room it lacks (``hold_while_quota_blocked``); gangs of
  256 devices or more keep their tenant's quota room until they start
  (``quota_hold_until_start``) and lend it only to work they can preempt back or that is
  declared to end within an hour (``lend_quota_room_to_preemptible``). While such a gang
  waits for nodes rather than room, it keeps the room it will need from its tenant's later
  work (``keep_room_while_held``), and free devices on held nodes go to work declared to
  end before they drain (``hold_backfill``). docs/benchmarks.md (the "Sixth round",
  "Eighth round" and "Eleventh round") has the runs that chose these.
* ``standard``: the product's own default (``ZS_SCHEDULER_POLICY=standard``, the core's
  defaults, ``Policy()``): gang, binpack, topology without patience, one 2-hour hold,
  quotas with borrowing and reclaim, fair share, priority preemption. Not one of the
  benchmarks' four; the what-if replay offers it so that an operator can see what
  switching the live loop to ``tuned`` (``ours``) would change on the cluster's own work.
* ``ours-plan``: an experiment the benchmarks may name (not the what-if replay): ``ours``
  with planned starts for large gangs (``Policy.plan_large``); docs/benchmarks.md,
  "Sixteenth round", has why it is not the default.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from apps.scheduling.core import Packing, Policy
from apps.scheduling.core.presets import preset, tuned


@dataclass(frozen=True, slots=True)
class PolicySpec:
    name: str
    label: str
    policy: Policy
    fifo: bool = False  # every job is shown to the core at one priority: submit order only
    learn_profile: bool = False  # pass the observed mix of task shapes to the core
    profile_by_demand: bool = False  # weigh shapes by accelerators requested, not by count


def _baseline(*, packing: Packing, gang: bool, preemption: bool, quotas: bool) -> Policy:
    """A baseline: none of our switches (topology, delay scheduling, borrowing and reclaim,
    fair share) on; ``quotas`` only as hard limits."""
    return Policy(
        gang=gang,
        packing=packing,
        preemption=preemption,
        topology=False,
        delay_scheduling=False,
        quotas=quotas,
        reclaim=False,
        fair_share=False,
    )


def fifo_spread(*, quotas: bool = False) -> PolicySpec:
    policy = _baseline(packing=Packing.SPREAD, gang=False, preemption=False, quotas=quotas)
    return PolicySpec("fifo-spread", "FIFO + spread (kube-scheduler default)", policy, fifo=True)


def best_fit(*, quotas: bool = False) -> PolicySpec:
    policy = _baseline(packing=Packing.BEST_FIT, gang=True, preemption=False, quotas=quotas)
    return PolicySpec("best-fit", "Best-fit", policy, fifo=True)


def volcano(*, quotas: bool = False) -> PolicySpec:
    policy = _baseline(packing=Packing.BINPACK, gang=True, preemption=True, quotas=quotas)
    return PolicySpec("volcano", "Volcano-like (gang + binpack + priority)", policy)


def ours(*, quotas: bool = True, devices: int | None = None) -> PolicySpec:
    """``devices``: the cluster's size, which scales the number of holds (None: two). The
    settings are ``core.presets.tuned``, which the product runs with
    ``ZS_SCHEDULER_POLICY=tuned``."""
    return PolicySpec(
        "ours",
        "Ours (all switches + fragmentation-aware)",
        tuned(devices=devices, quotas=quotas),
        learn_profile=True,
    )


def zs_standard(*, quotas: bool = True) -> PolicySpec:
    """The product's default preset (``core.presets.preset("standard")``)."""
    return PolicySpec(
        "standard",
        "Zhisuan standard (the product's default preset)",
        replace(preset("standard"), quotas=quotas),
    )


def standard(*, quotas: bool = True) -> list[PolicySpec]:
    """The four policies, side by side. ``quotas``: whether the workload defines quotas
    (ours enforces them; the baselines never borrow, they only see hard limits if any)."""
    return [fifo_spread(), best_fit(), volcano(), ours(quotas=quotas)]


def ours_plan(*, quotas: bool = True, devices: int | None = None) -> PolicySpec:
    """An experiment, not a default: ``ours`` with planned starts for large gangs
    (``Policy.plan_large``, conservative backfilling). On the 10,000-GPU LLM workload it
    cuts the large jobs over twice their fair-share expectation, and smaller jobs pay for
    it in waits many times longer (docs/benchmarks.md, "Sixteenth round")."""
    policy = replace(tuned(devices=devices, quotas=quotas), plan_large=True)
    return PolicySpec(
        "ours-plan",
        "Ours + planned starts for large gangs (experiment)",
        policy,
        learn_profile=True,
    )


NAMES = ("ours", "standard", "volcano", "best-fit", "fifo-spread")
EXPERIMENTS = ("ours-plan",)
"""Policies the benchmarks may name that the product's what-if replay does not offer."""
LIVE = {"standard": "standard", "tuned": "ours"}
"""The policy here that each preset of the product's loop (``ZS_SCHEDULER_POLICY``) is."""


def spec_for(name: str, *, quotas: bool, devices: int | None = None) -> PolicySpec:
    """The policy called ``name`` (one of ``NAMES`` or ``EXPERIMENTS``). ``quotas`` only
    matters to ours and standard (the baselines never borrow), ``devices`` to ours (it
    sizes its holds)."""
    if name == "ours":
        return ours(quotas=quotas, devices=devices)
    if name == "ours-plan":
        return ours_plan(quotas=quotas, devices=devices)
    if name == "standard":
        return zs_standard(quotas=quotas)
    baselines = {"volcano": volcano, "best-fit": best_fit, "fifo-spread": fifo_spread}
    if name not in baselines:
        known = ", ".join(NAMES + EXPERIMENTS)
        raise ValueError(f"unknown policy '{name}' (choose from {known})")
    return baselines[name]()
