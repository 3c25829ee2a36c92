"""Choosing preemption victims (priorities, capability C4; reclaim, capability C3).

Rules that no policy switch can loosen (the product defines them):

* only P0-P2 preempt; P3 neither preempts nor is preempted; P4/P5 never preempt;
* a victim is P4 or P5 and strictly lower priority than the preemptor;
* a victim is removed whole (all its replicas), because a gang with a missing replica is
  dead weight;
* with quotas on, another tenant's work is only a victim when that tenant runs above its
  guarantee (it is borrowing) and the preemptor's tenant stays within its own guarantee:
  that is reclaiming. Same-tenant work is fair game by priority.

Preference, in this order: fewest victims, lowest priority, most recently started (least
work lost). Single victims are tried first; otherwise victims are added in preference order
until the job fits and then every victim that turns out unnecessary is dropped again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from .index import ClassIndex, ClusterState, NodeState, RunningEntry
from .model import (
    HIGHEST_PREEMPTOR,
    LOWEST_VICTIM,
    PendingJob,
    Policy,
    PreemptionKind,
    RunningJob,
    Tier,
)
from .topology import domain_caps, domain_key_of


def may_preempt(job: PendingJob, policy: Policy) -> bool:
    return policy.preemption and job.priority <= min(
        policy.preemptor_max_priority, HIGHEST_PREEMPTOR
    )


def _statically_eligible(victim: RunningJob, job: PendingJob, policy: Policy) -> bool:
    return (
        victim.preemptible
        and victim.pool == job.pool
        and victim.priority >= max(policy.victim_min_priority, LOWEST_VICTIM)
        and victim.priority > job.priority
    )


def victim_kind(
    state: ClusterState,
    victim: RunningJob,
    job: PendingJob,
    model: str,
    need_milli: int,
    policy: Policy,
) -> PreemptionKind | None:
    """Whether ``victim`` may be evicted for ``job`` given current usage, and why."""
    if not _statically_eligible(victim, job, policy):
        return None
    ledger = state.ledger
    if victim.tenant == job.tenant or not ledger.enabled:
        return PreemptionKind.PRIORITY
    if (
        policy.reclaim
        and ledger.borrowing((victim.tenant, victim.pool, model))
        and ledger.within_guarantee_after((job.tenant, job.pool, model), need_milli)
    ):
        return PreemptionKind.RECLAIM
    return None


def _release(
    state: ClusterState,
    victims: list[RunningEntry],
    job: PendingJob,
    model: str,
    need: int,
    policy: Policy,
) -> list[PreemptionKind] | None:
    """Release victims in order, re-checking each one's eligibility as usage changes."""
    kinds: list[PreemptionKind] = []
    for entry in victims:
        kind = victim_kind(state, entry.job, job, model, need, policy)
        if kind is None:
            return None
        state.release_job(entry.job.job_id)
        kinds.append(kind)
    return kinds


def _preference_order(state: ClusterState, cls: ClassIndex) -> list[RunningEntry]:
    """Possible victims on a class, best first (``index.victim_key``); the state keeps the
    order as jobs come and go. It may list jobs released in this cycle: check ``running``."""
    order = state.victims.get(cls.key)
    return order.entries if order is not None else []


def _could_host(
    cls: ClassIndex, whole_need: Sequence[tuple[int, int]], victim: RunningEntry
) -> bool:
    """Whether the class could host every whole-device group once ``victim`` is gone
    (necessary, not sufficient: topology and CPU are checked by the trial)."""
    freed: dict[int, tuple[int, int]] = {}  # node idx -> (free now, devices freed)
    for alloc in victim.allocations:
        ns = alloc.ns
        if ns.cls is not cls:
            continue
        now, more = freed.get(ns.idx, (len(ns.free), 0))
        # a share frees its device at most, when it was the last share on it
        freed[ns.idx] = (now, more + len(alloc.devices) + len(alloc.shares))
    for k, r in whole_need:
        hostable = cls.cap[k]
        for now, more in freed.values():
            hostable += (now + more) // k - now // k
        if hostable < r:
            return False
    return True


def _room_anywhere(
    state: ClusterState,
    cls: ClassIndex,
    job: PendingJob,
    need_milli: int,
    whole_need: Sequence[tuple[int, int]],
    candidates: Sequence[RunningEntry],
    loosest: Tier,
) -> bool:
    """Whether some victim set could make room, by what is certain before any trial: with
    every candidate the rules could ever allow gone, the job's tenant must fit under its
    limit, and some domain of tier ``loosest`` (a placement in a tighter tier lies inside
    one of them) must have enough free devices on nodes the job may use. Necessary, not
    sufficient: CPU, memory, selectors and the order of release are left to the trials."""
    if loosest == Tier.NODE:
        return True  # (one-node gangs: not worth a per-node count)
    ledger, model = state.ledger, cls.model
    allowed: Sequence[RunningEntry] = candidates
    if ledger.enabled:
        key = (job.tenant, job.pool, model)
        own = [e for e in candidates if e.job.tenant == job.tenant]
        low = ledger.usage[key] - sum(e.usage.get(model, 0) for e in own)
        if need_milli and low + need_milli > ledger.limit(key):
            return False
        if low + need_milli > ledger.guarantee(key):
            allowed = own  # over its guarantee, it never reclaims from other tenants
    freed: dict[int, int] = {}  # node idx -> devices its candidates hold (shares: one each)
    nodes: dict[int, NodeState] = {}
    for entry in allowed:
        for alloc in entry.allocations:
            ns = alloc.ns
            if ns.cls is cls:
                freed[ns.idx] = freed.get(ns.idx, 0) + len(alloc.devices) + len(alloc.shares)
                nodes[ns.idx] = ns
    gain: dict[object, dict[int, int]] = {}  # domain -> k -> change of its capacity count
    for idx, more in freed.items():
        ns = nodes[idx]
        if not ns.usable_by(job):
            continue
        now = len(ns.free)
        after = min(now + more, ns.node.accelerator_count)
        per_k = gain.setdefault(domain_key_of(ns, loosest), {})
        for k, _ in whole_need:
            per_k[k] = per_k.get(k, 0) + after // k - now // k
    for ns in set(state.held):  # held for another job: what they count now is not for it
        if ns.cls is cls and not ns.usable_by(job):
            per_k = gain.setdefault(domain_key_of(ns, loosest), {})
            for k, _ in whole_need:
                per_k[k] = per_k.get(k, 0) - len(ns.free) // k
    caps: Iterable[tuple[object, list[int]]] = (
        [(None, cls.cap)] if loosest == Tier.ANY else domain_caps(cls, loosest).items()
    )
    for domain, cap in caps:
        more_k = gain.get(domain, {})
        if all(cap[k] + more_k.get(k, 0) >= r for k, r in whole_need):
            return True
    return False


def find_victims(
    state: ClusterState,
    cls: ClassIndex,
    job: PendingJob,
    total_whole: int,
    need_milli: int,
    fits: Callable[[], bool],
    policy: Policy,
    whole_need: Sequence[tuple[int, int]] = (),
    loosest: Tier | None = None,
) -> list[RunningEntry] | None:
    """Victims that let ``job`` fit in ``cls``, or ``None``. Leaves the state unchanged.

    ``fits`` tries the placement and rolls it back. Trials are bounded by
    ``policy.max_preemption_trials`` so one hopeless job cannot stall the cycle.
    ``whole_need`` (``[(devices per replica, replicas)]``) lets hopeless trials be skipped
    without trying them: a victim set must at least free room for that many replicas, and
    with ``loosest`` (the loosest topology tier the placement may use) in one domain of it.
    """
    model = cls.model
    ledger = state.ledger
    borrowing: dict[str, bool] = {}

    def may_ever_yield(victim: RunningJob) -> bool:
        # Victims are only released while looking, so another tenant's usage only falls: a
        # tenant that does not borrow now never becomes reclaimable during this search.
        if victim.tenant == job.tenant or not ledger.enabled:
            return True
        if not policy.reclaim:
            return False
        hit = borrowing.get(victim.tenant)
        if hit is None:
            hit = borrowing[victim.tenant] = ledger.borrowing((victim.tenant, victim.pool, model))
        return hit

    candidates = [
        e
        for e in _preference_order(state, cls)
        if e.job.job_id in state.running
        and _statically_eligible(e.job, job, policy)
        and may_ever_yield(e.job)
    ]
    if not candidates or any(k >= len(cls.cap) for k, _ in whole_need):
        return None  # (a replica larger than any node of the class never fits)
    # Even every eligible victim gone would not free enough devices: no trial can succeed.
    # (A share frees at most its device, when it was the last share on it.)
    freeable = sum(
        e.whole_by_class.get(cls.key, 0) + sum(len(a.shares) for a in e.allocations)
        for e in candidates
    )
    if cls.cap[1] + freeable < total_whole:
        return None
    # Nor when even then no domain the placement may use would have the room: a gang kept to
    # one leaf or unit by its topology patience fails here most often, and the trials cost
    # most of the search.
    if (
        whole_need
        and loosest is not None
        and not _room_anywhere(state, cls, job, need_milli, whole_need, candidates, loosest)
    ):
        return None
    budget = policy.max_preemption_trials
    base = state.mark()
    key = (job.tenant, job.pool, model)

    def over_limit(own_freed: int = 0) -> bool:
        # The job's tenant would still be over its limit: the placement fails for sure, so
        # a trial would be spent for nothing. Only its own victims lower its usage; without
        # this, a job that needs several of them used the whole budget on single ones.
        used = ledger.usage.get(key, 0)  # (a lookup must not add the key to the ledger)
        return ledger.enabled and used - own_freed + need_milli > ledger.limit(key)

    def trial(victims: list[RunningEntry]) -> bool:
        nonlocal budget
        if budget <= 0:
            return False
        budget -= 1
        ok = _release(state, victims, job, model, need_milli, policy) is not None and fits()
        state.rollback(base)
        return ok

    # 1. One victim, if any single one is enough.
    for entry in candidates:
        if budget <= 0:
            break
        if cls.cap[1] + entry.whole_by_class.get(cls.key, 0) < total_whole:
            continue
        if whole_need and not _could_host(cls, whole_need, entry):
            continue
        if over_limit(entry.usage.get(model, 0) if entry.job.tenant == job.tenant else 0):
            continue
        # The state is at ``base`` here, so a victim the quotas forbid now fails its trial
        # for sure: skip it without spending a trial (most candidates, under quotas).
        if victim_kind(state, entry.job, job, model, need_milli, policy) is None:
            continue
        if trial([entry]):
            return [entry]

    # 2. Add victims in preference order until the job fits.
    chosen: list[RunningEntry] = []
    found = False
    for entry in candidates:
        if victim_kind(state, entry.job, job, model, need_milli, policy) is None:
            continue
        state.release_job(entry.job.job_id)
        chosen.append(entry)
        if cls.cap[1] < total_whole or any(cls.cap[k] < r for k, r in whole_need):
            continue
        if over_limit():
            continue
        if budget <= 0:
            break
        budget -= 1
        mark = state.mark()
        found = fits()
        state.rollback(mark)
        if found:
            break
    state.rollback(base)
    if not found:
        return None

    # 3. Drop victims that are not needed, trying the most valuable ones (highest priority,
    # oldest: the end of the list) first.
    for i in range(len(chosen) - 2, -1, -1):
        without = chosen[:i] + chosen[i + 1 :]
        if trial(without):
            chosen = without
    return chosen


def apply_victims(
    state: ClusterState,
    victims: list[RunningEntry],
    job: PendingJob,
    model: str,
    need: int,
    policy: Policy,
) -> list[PreemptionKind] | None:
    """Release the chosen victims for real (logged; the caller commits or rolls back)."""
    return _release(state, victims, job, model, need, policy)
