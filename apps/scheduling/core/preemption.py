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

from collections.abc import Callable, Sequence

from .index import ClassIndex, ClusterState, RunningEntry
from .model import PendingJob, Policy, PreemptionKind, RunningJob

HIGHEST_PREEMPTOR = 2
LOWEST_VICTIM = 4


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
    """Possible victims on a class, best first; sorted once per cycle and cached."""
    order = state.victim_order.get(cls.key)
    if order is None:
        running = state.running
        order = [
            running[jid]
            for jid in state.class_jobs.get(cls.key, ())
            if jid in running
            and running[jid].job.preemptible
            and running[jid].job.priority >= LOWEST_VICTIM
        ]
        order.sort(key=lambda e: (-e.job.priority, -e.job.started_at.timestamp(), e.job.job_id))
        state.victim_order[cls.key] = order
    return order


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


def find_victims(
    state: ClusterState,
    cls: ClassIndex,
    job: PendingJob,
    total_whole: int,
    need_milli: int,
    fits: Callable[[], bool],
    policy: Policy,
    whole_need: Sequence[tuple[int, int]] = (),
) -> list[RunningEntry] | None:
    """Victims that let ``job`` fit in ``cls``, or ``None``. Leaves the state unchanged.

    ``fits`` tries the placement and rolls it back. Trials are bounded by
    ``policy.max_preemption_trials`` so one hopeless job cannot stall the cycle.
    ``whole_need`` (``[(devices per replica, replicas)]``) lets hopeless trials be skipped
    without trying them: a victim set must at least free room for that many replicas.
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
    budget = policy.max_preemption_trials
    base = state.mark()

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
