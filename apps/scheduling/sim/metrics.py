"""What a run measures, and the small pure functions that summarise it.

Definitions (the same for every policy):

* *allocation ratio*: allocated accelerator capacity (milli-devices of running jobs, and of
  partly placed jobs when gang is off) over the capacity of healthy nodes. Reported as the
  time average over the measurement window (after ``warmup``, until the last arrival), and,
  like the "Beware of Fragmentation" experiments, as a function of the *arrived* demand
  (cumulative accelerators requested by jobs that arrived, over capacity): the value at
  130% is "allocation at saturation".
* *unallocated / fragmented*: free devices, and the free capacity that a whole-node replica
  cannot use: free whole devices on nodes that cannot host one (the core's ``stranded``)
  plus the unused remainder of shared devices.
* *queueing delay*: from submission to first start; jobs that never started count with the
  time they waited until the end of the run (censored; they are listed as such).
* *fair-share expectation* of a job of ``G`` devices of tenant ``t``: the time the job would
  wait if ``t`` got its guaranteed share of the cluster's turnover,
  ``max(0, G + A - F) / (rho * g_t / sum(g))``, where ``A`` is what ``t`` has queued ahead
  of it, ``F`` what it could use at once (free devices on nodes that can host a whole-node
  replica, or its unused guarantee, which it may reclaim), ``rho`` the rate at which running
  jobs free devices (sum of devices/duration) and ``g_t`` its guarantee; at least
  ``FAIR_SHARE_FLOOR`` (a restart and a few cycles). And, when the workload gives the
  tenant a borrowing limit ``L`` (guarantee + borrow) and the job would take it over that
  limit (``U + A + G > L``, ``U`` its usage at arrival), at least the time the tenant's own
  running work takes to make that room, ``(U + A + G - L) / rho_t`` (``rho_t``: the rate at
  which the tenant's own running jobs free devices). That rate is an average: when the
  tenant's work that may not be preempted for the job (its P0-P3 work, and P4/P5 work of
  the same or higher priority than the job) happens to end later than the average says,
  the room appears later. So the expectation is also at least the time until that work,
  ending when it will (the simulator knows every end), frees the room the job itself needs
  (``U_fixed + G - L``, without the work ahead): no scheduler that respects the limit and
  the preemption rules can start the job sooner. (When only a service's end would make
  that room, there is no such bound and the rate term stands.) The summary also
  gives the count with the rate term alone ("rate", the definition until 2026-11-30) and
  without any limit term ("plain").
* *the expectation under the product's rules in full* (``LargeWait.expectation_rules``, beside
  the expectation, not instead of it): the same, with two of the product's rules that the
  expectation leaves out. (1) Of its tenant's unused guarantee the job can take back at
  once only the idle whole-node devices and the work the product reclaims
  (``reclaimable_devices``: other tenants' borrowed P4/P5 work): ``F = max(idle,
  min(g_t - U, idle + reclaimable))``. (2) Priority is strict inside a tenant, so the
  tenant's jobs of higher priority that arrive while the job waits go before it: the
  expectation is the fixed point where they are counted in ``A`` (and in the limit term)
  for as long as it lasts (``expectation_with_arrivals``). It depends on the workload and
  the cluster at arrival only, like the expectation, so every policy is judged alike.
* *the earliest its nodes could be free* (``LargeWait.nodes_free``, for whole-node gangs): at
  arrival, the time until enough whole nodes are free of work that may not be preempted for
  the job (it ends when it really ends; services never), if nothing else started. The job
  cannot start sooner by its own preemptions (topology aside); it can when other events free
  nodes early: another job preempts work there, a node failure sends work elsewhere, or a
  tenant starts to borrow and its P4/P5 work becomes reclaimable. So it is a diagnostic
  beside the expectation, not part of it, and not a strict bound.
* *its wait under its tenant's limit alone* (``LargeWait.quota_wait``, with a borrowing limit
  ``L``): at arrival, the time until the job would fit under ``L`` if the limit were the
  only constraint (nodes unlimited): the tenant's work that may not be preempted for the job
  keeps its room until it really ends, and the tenant's queued work of the job's priority
  or higher starts first, in queue order, as soon as it fits, then runs for its time
  (``quota_wait``); ``quota_wait_rules`` adds the tenant's higher-priority work that arrives
  later, from when it arrives. A scheduler that keeps the limit, the queue order (priority,
  then submit time) and the preemption rules does not start the job sooner, unless a
  failure or another tenant's reclaim ends some of that work early. Delay scheduling bends
  that order (a starving gang is decided first in its group), so this is a diagnostic
  beside the expectation, not a bound (and nodes aside): it says whether a wait over 2x is
  the limit's doing.
* *where a large job's wait went* (``LargeWait``, for every job of >= ``LARGE_JOB`` devices):
  the time it spent pending under each of the core's pending codes (quota: its tenant's
  borrowing limit; reserved: holding nodes that drain for it; capacity: no room and no
  hold), and at arrival the whole-node devices idle, its tenant's unused guarantee, and how
  much of that guarantee it could really take back (``reclaimable_devices``: the product
  reclaims only P4/P5 work, so other tenants' borrowed P0-P3 work is not reclaimable).
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence, Set
from dataclasses import dataclass, field
from itertools import chain, islice
from typing import TYPE_CHECKING, Any

from apps.scheduling.core import FULL_DEVICE_MILLI, Decisions, RunningJob, Tier
from apps.scheduling.core.fragmentation import fragmentation_of
from apps.scheduling.core.model import HIGHEST_PREEMPTOR, LOWEST_VICTIM
from apps.scheduling.core.plan import TARGET_FLOOR, target

from .workload import PART_MARK, SIZE_CLASSES, SimJob, Workload, size_class

if TYPE_CHECKING:
    from .engine import JobRun, Simulator
    from .policies import PolicySpec

FAIR_SHARE_FLOOR = TARGET_FLOOR  # 15 minutes
LARGE_JOB = 256.0
RECLAIMABLE_PRIORITY = LOWEST_VICTIM  # only P4/P5 work is ever preempted (core/preemption.py)


# ------------------------------------------------------------------ pure summaries


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of unsorted values; 0 for none."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


@dataclass(slots=True)
class WaitStats:
    """(Not frozen: compiled with mypyc, a frozen dataclass does not unpickle, and results
    cross process pools.)"""

    count: int
    mean: float
    p95: float
    p99: float
    max: float
    censored: int


def wait_stats(waits: Sequence[float], censored: int = 0) -> WaitStats:
    if not waits:
        return WaitStats(0, 0.0, 0.0, 0.0, 0.0, censored)
    return WaitStats(
        count=len(waits),
        mean=sum(waits) / len(waits),
        p95=percentile(waits, 95),
        p99=percentile(waits, 99),
        max=max(waits),
        censored=censored,
    )


def alloc_at_arrived(curve: Sequence[tuple[float, float]], percent: int) -> float | None:
    """Allocation ratio (%) when the arrived demand is ``percent`` % of capacity.

    ``curve`` is ``[(arrived %, allocated %)]`` in arrival order. As in the analysis of the
    "Beware of Fragmentation" artifact: the mean over the points whose arrived share rounds
    to ``percent``, or, if none, over those within one point of it.
    """
    near = [a for x, a in curve if round(x) == percent]
    if not near:
        near = [a for x, a in curve if percent - 1 <= x <= percent + 1]
    if not near:
        return None
    return sum(near) / len(near)


def topology_share(
    jobs: Iterable[tuple[int, Tier | None]], nodes_per_domain: int, tier: Tier
) -> tuple[int, int]:
    """Of the multi-node jobs that need at most ``nodes_per_domain`` nodes, how many were
    placed within ``tier``: ``(inside, eligible)``. ``jobs`` is ``[(nodes needed, tier)]``."""
    inside = eligible = 0
    for needed, got in jobs:
        if needed < 2 or needed > nodes_per_domain or got is None:
            continue
        eligible += 1
        if got <= tier:
            inside += 1
    return inside, eligible


def fair_share_expectation(
    gpus: float,
    ahead: float,
    usable_now: float,
    turnover: float,
    guarantee: float,
    total_guarantee: float,
    floor: float = FAIR_SHARE_FLOOR,
    *,
    over_limit: float = 0.0,
    own_turnover: float = 0.0,
    limit_bound: float = 0.0,
) -> float:
    """See the module docstring; ``math.inf`` when the tenant has no guarantee or nothing
    turns over. ``over_limit``: devices by which the job (and what is ahead of it) would
    take its tenant over its borrowing limit; ``own_turnover``: the rate at which the
    tenant's own running jobs free devices; ``limit_bound``: seconds until the tenant's
    work that may not be preempted for the job frees that room (``room_freed_after``)."""
    limit_wait = limit_bound
    if over_limit > 0:
        limit_wait = max(limit_wait, over_limit / own_turnover if own_turnover > 0 else math.inf)
    share_wait = target(gpus, ahead, usable_now, turnover, guarantee, total_guarantee, floor)
    return max(share_wait, limit_wait)


def expectation_with_arrivals(
    expect: Callable[[float], float], later: Iterable[tuple[float, float]]
) -> float:
    """The smallest ``e`` with ``e = expect(h(e))``: ``expect(extra)`` is the expectation
    when ``extra`` more devices are ahead of the job, and ``h(e)`` the devices of ``later``
    (``[(seconds after the job arrived, devices)]``, in time order) that arrive within
    ``e``, work that goes before the job when it arrives while the job waits. ``expect``
    grows with ``extra``, so the expectation only rises as the arrivals are taken in order,
    and the first arrival past it ends the search; ``inf`` stays ``inf``."""
    e = expect(0.0)
    extra = 0.0
    for after, devices in later:
        if not math.isfinite(e) or after > e:
            break
        extra += devices
        e = max(e, expect(extra))
    return e


def quota_wait(
    limit: float,
    fixed: Iterable[tuple[float, float]],
    ahead: Iterable[tuple[float, float, float]],
    devices: float,
) -> float:
    """Seconds until a job of ``devices`` fits under its tenant's borrowing limit ``limit``
    when the limit is the only constraint (nodes unlimited): the tenant's ``fixed`` work
    (``[(seconds until it ends, devices)]``, ``inf``: it does not end by itself) holds its
    room until it ends, and the work that goes before the job (``ahead``: ``(seconds after
    now it joins the queue, devices, run seconds or inf)``, in the order it joins, read
    only as far as needed) starts in queue order as soon as it fits (work that does not
    fit lets later work start), then runs for its time. The job starts at the first moment
    it fits once the work ahead that fits has started; ``inf`` when it never fits."""
    if devices > limit:
        return math.inf
    use = 0.0
    ends: list[tuple[float, float]] = []
    for until, held in fixed:
        use += held
        if math.isfinite(until):
            ends.append((max(0.0, until), held))
    heapq.heapify(ends)
    coming = iter(ahead)
    nxt_join = next(coming, None)
    queue: list[tuple[float, float]] = []  # (devices, run seconds) waiting, in queue order
    t = 0.0
    while True:
        while nxt_join is not None and nxt_join[0] <= t:
            queue.append((nxt_join[1], nxt_join[2]))
            nxt_join = next(coming, None)
        left: list[tuple[float, float]] = []
        for need, run in queue:
            if use + need <= limit:
                use += need
                if math.isfinite(run):
                    heapq.heappush(ends, (t + run, need))
            else:
                left.append((need, run))
        queue = left
        if use + devices <= limit:
            return t
        nxt = min(
            ends[0][0] if ends else math.inf,
            nxt_join[0] if nxt_join is not None else math.inf,
        )
        if not math.isfinite(nxt):
            return math.inf
        t = max(t, nxt)
        while ends and ends[0][0] <= t:
            use -= heapq.heappop(ends)[1]


def room_freed_after(ends: Iterable[tuple[float, float]], need: float) -> float:
    """Seconds until work that ends on its own frees ``need`` devices: ``ends`` is
    ``[(seconds until it ends, devices it holds)]`` (``inf``: it does not end by itself).
    0 when nothing is needed; ``inf`` when all of it is not enough."""
    if need <= 0:
        return 0.0
    freed = 0.0
    for until, devices in sorted(ends):
        freed += devices
        if freed >= need:
            return max(0.0, until)
    return math.inf


def nodes_free_after(ends: Iterable[float], nodes: int) -> float:
    """Seconds until ``nodes`` of the nodes are free: ``ends`` holds, per node, the seconds
    until its last work that stays ends (0: free now; ``inf``: never). ``inf`` when there
    are fewer nodes than that; 0 when none are needed."""
    if nodes <= 0:
        return 0.0
    ranked = sorted(ends)
    return max(0.0, ranked[nodes - 1]) if len(ranked) >= nodes else math.inf


def yields_to(victim: int, preemptor: int) -> bool:
    """Whether work of priority ``victim`` may be preempted for a job of priority
    ``preemptor`` by the product's rule: P4/P5 work, of strictly lower priority."""
    return victim >= RECLAIMABLE_PRIORITY and victim > preemptor


def held_milli(job: RunningJob) -> int:
    """Milli-devices a running job holds (whole devices plus its shares of devices)."""
    return sum(
        len(a.devices) * FULL_DEVICE_MILLI + sum(s.milli for s in a.shares) for a in job.allocations
    )


def reclaimable_devices(
    running: Iterable[RunningJob],
    used: Mapping[str, float],
    guarantees: Mapping[str, float],
    tenant: str,
    priority: int,
) -> float:
    """Devices a job of ``tenant`` at ``priority`` could take back by reclaim under the
    product's rules: other tenants' preemptible P4/P5 work of strictly lower priority, only
    from tenants above their guarantee, and from each at most its excess over it."""
    by_tenant: dict[str, float] = {}
    for job in running:
        if job.tenant != tenant and job.preemptible and yields_to(job.priority, priority):
            by_tenant[job.tenant] = (
                by_tenant.get(job.tenant, 0.0) + held_milli(job) / FULL_DEVICE_MILLI
            )
    total = 0.0
    for other, devices in by_tenant.items():
        excess = used.get(other, 0.0) - guarantees.get(other, 0.0)
        if excess > 0:
            total += min(devices, excess)
    return total


def attribute_pending(
    pending: dict[str, float], code: str | None, since: float | None, now: float
) -> None:
    """Adds the time from the previous cycle (``since``) to ``now`` to the code a job was
    pending under in that cycle (the code holds until the next cycle decides again)."""
    if code is None or since is None or now <= since:
        return
    pending[code] = pending.get(code, 0.0) + (now - since)


@dataclass(slots=True)
class LargeWait:
    """Why one job of >= ``LARGE_JOB`` devices waited (see the module docstring)."""

    job_id: str
    tenant: str
    priority: int
    gpus: float
    submit: float
    idle: float  # whole-node devices free at arrival
    unused_guarantee: float  # guarantee minus use at arrival (negative: borrowing)
    reclaimable: float
    expectation: float = math.inf
    expectation_rules: float = math.inf  # under the product's rules in full (module docstring)
    nodes_free: float = 0.0  # seconds until enough whole nodes could be free (see above)
    quota_wait: float = 0.0  # seconds under the borrowing limit alone (``quota_wait``)
    quota_wait_rules: float = 0.0  # the same with the tenant's later higher-priority work
    wait: float | None = None
    pending: dict[str, float] = field(default_factory=dict)  # pending code -> seconds

    @property
    def ratio(self) -> float:
        if self.wait is None or not math.isfinite(self.expectation) or self.expectation <= 0:
            return 0.0
        return self.wait / self.expectation


# ------------------------------------------------------------------ the recorder


@dataclass
class SimResult:
    workload: str
    policy: str
    label: str
    seed: int
    end: float
    wall_s: float
    cycles: int
    summary: dict[str, Any]
    curve: list[tuple[float, float]] = field(default_factory=list)  # (arrived %, alloc %)
    samples: list[dict[str, float]] = field(default_factory=list)
    waits: dict[str, list[float]] = field(default_factory=dict)  # size class -> waits (s)
    tenants: list[dict[str, Any]] = field(default_factory=list)


class Recorder:
    """Collects time-weighted and per-job measures while a run goes on."""

    def __init__(
        self, workload: Workload, spec: PolicySpec, *, sample_interval: float | None
    ) -> None:
        self.workload = workload
        self.spec = spec
        self.sample_interval = sample_interval
        self.capacity = workload.capacity_milli
        self.allocated = 0
        self.part_milli: dict[str, int] = {}
        self.part_tenant: dict[str, str] = {}
        self.arrived_milli = 0
        self.last = 0.0
        last = max((j.submit for j in workload.jobs), default=0.0)
        until = workload.measure_until
        self.window = (workload.warmup, last if until is None else until)
        self.alloc_area = 0.0
        self.cap_area = 0.0
        self.measured = 0.0  # seconds of the measurement window passed
        self.curve: list[tuple[float, float]] = []
        self.samples: list[dict[str, float]] = []
        self.preemptions = 0
        self.failures_hit = 0
        self.lost_preempt_gpu_s = 0.0
        self.lost_failure_gpu_s = 0.0
        self.dropped_jobs = 0
        self.turnover = 0.0  # devices freed per second by running jobs (sum gpus/duration)
        guarantees: dict[str, float] = {}
        limits: dict[str, float] = {}
        for q in workload.quotas:
            guarantees[q.tenant] = guarantees.get(q.tenant, 0.0) + q.guarantee
            limits[q.tenant] = limits.get(q.tenant, 0.0) + q.guarantee + q.borrow_limit
        self.limit = limits
        self.tenant_turnover: dict[str, float] = {t: 0.0 for t in guarantees}
        self.expectation_plain: dict[str, float] = {}
        self.expectation_rate: dict[str, float] = {}
        self.guarantee = guarantees
        self.total_guarantee = sum(guarantees.values())
        self.tenant_alloc: dict[str, int] = {t: 0 for t in guarantees}
        self.tenant_area: dict[str, float] = {t: 0.0 for t in guarantees}
        self.tenant_demand_area: dict[str, float] = {t: 0.0 for t in guarantees}
        self.tenant_short_area: dict[str, float] = {t: 0.0 for t in guarantees}
        self.tenant_waiting: dict[str, int] = {t: 0 for t in guarantees}
        self.expectation: dict[str, float] = {}
        # per tenant, its jobs in submit order: (submit, priority, devices, run seconds or
        # inf); only large jobs of a workload with guarantees read it (``_higher_after``)
        self._arrivals: dict[str, list[tuple[float, int, float, float]]] = {}
        if guarantees:
            for j in sorted(workload.jobs, key=lambda j: (j.submit, j.job_id)):
                run = j.duration if j.duration else math.inf
                self._arrivals.setdefault(j.tenant, []).append((j.submit, j.priority, j.gpus, run))
        self.large: dict[str, LargeWait] = {}
        self._large_waiting: set[str] = set()  # large jobs not started yet
        self._large_codes: dict[str, str] = {}  # large job -> its code in the last cycle
        self._last_cycle: float | None = None

    # time

    def advance(self, now: float) -> None:
        dt = now - self.last
        if dt <= 0:
            return
        lo, hi = self.window
        span = min(now, hi) - max(self.last, lo)
        if span > 0:
            self.alloc_area += self.allocated * span
            self.cap_area += self.capacity * span
            self.measured += span
            for t, g in self.guarantee.items():
                used = self.tenant_alloc[t]
                self.tenant_area[t] += used * span
                if self.tenant_waiting[t] > 0:
                    self.tenant_demand_area[t] += span
                    if used < 0.9 * g * FULL_DEVICE_MILLI:
                        self.tenant_short_area[t] += span
        self.last = now

    # resources

    def took(self, job: RunningJob, sim: Simulator) -> None:
        milli = held_milli(job)
        self.part_milli[job.job_id] = milli
        self.part_tenant[job.job_id] = job.tenant
        self.allocated += milli
        if job.tenant in self.tenant_alloc:
            self.tenant_alloc[job.tenant] += milli

    def freed(self, part: str) -> None:
        milli = self.part_milli.pop(part, 0)
        tenant = self.part_tenant.pop(part, "")
        self.allocated -= milli
        if tenant in self.tenant_alloc:
            self.tenant_alloc[tenant] -= milli

    def node_changed(self, sim: Simulator) -> None:
        self.capacity = sim.capacity_milli()

    # jobs

    def arrived(self, run: JobRun, now: float, sim: Simulator) -> None:
        job = run.job
        self.arrived_milli += job.milli
        if job.tenant in self.tenant_waiting:
            self.tenant_waiting[job.tenant] += 1
        if job.gpus >= LARGE_JOB and self.guarantee:
            # the tenant's queued work that goes before the job, in queue order
            before = [
                r
                for r in sim.waiting.values()
                if r.job.tenant == job.tenant and r.job.priority <= job.priority and r is not run
            ]
            before.sort(key=lambda r: (r.job.priority, r.job.submit, r.job.job_id))
            ahead = sum(r.job.gpus for r in before)
            g = self.guarantee.get(job.tenant, 0.0)
            # Free devices a gang can use: those on nodes that can host a whole-node replica.
            frag = fragmentation_of(sim.live.state, 8)
            idle = float(frag.free_devices - frag.stranded_devices)
            used = self.tenant_alloc.get(job.tenant, 0) / FULL_DEVICE_MILLI
            usable = max(idle, g - used)
            args = (job.gpus, ahead, usable, self.turnover, g, self.total_guarantee)
            self.expectation_plain[job.job_id] = fair_share_expectation(*args)
            limit = self.limit.get(job.tenant)
            over = 0.0 if limit is None else used + ahead + job.gpus - limit
            own_turnover = self.tenant_turnover.get(job.tenant, 0.0)
            self.expectation_rate[job.job_id] = fair_share_expectation(
                *args, over_limit=over, own_turnover=own_turnover
            )
            bound = 0.0
            fixed: list[tuple[float, float]] = []
            if limit is not None:
                # The job alone, without the work ahead of it (which may have come and gone
                # by then): a bound, not an estimate. Unbounded (the room waits on a
                # service): no bound, the rate term stands.
                fixed = self._fixed_work(run, now, sim)
                bound = room_freed_after(fixed, sum(d for _, d in fixed) + job.gpus - limit)
                if not math.isfinite(bound):
                    bound = 0.0
            self.expectation[job.job_id] = fair_share_expectation(
                *args, over_limit=over, own_turnover=own_turnover, limit_bound=bound
            )
            reclaimable = reclaimable_devices(
                sim.live.running.values(),
                {t: m / FULL_DEVICE_MILLI for t, m in self.tenant_alloc.items()},
                self.guarantee,
                job.tenant,
                job.priority,
            )
            usable_now = max(idle, min(g - used, idle + reclaimable))

            def under_rules(extra: float) -> float:
                return fair_share_expectation(
                    job.gpus,
                    ahead + extra,
                    usable_now,
                    self.turnover,
                    g,
                    self.total_guarantee,
                    over_limit=over + extra,
                    own_turnover=own_turnover,
                    limit_bound=bound,
                )

            rules = expectation_with_arrivals(
                under_rules,
                ((after, devices) for after, devices, _ in self._higher_after(job, now)),
            )
            qwait = qwait_rules = 0.0
            if limit is not None:
                queued = [
                    (0.0, r.job.gpus, math.inf if r.remaining is None else r.remaining)
                    for r in before
                ]
                qwait = quota_wait(limit, fixed, queued, job.gpus)
                later = chain(queued, self._higher_after(job, now))
                qwait_rules = quota_wait(limit, fixed, later, job.gpus)
            self._large_waiting.add(job.job_id)
            self.large[job.job_id] = LargeWait(
                job_id=job.job_id,
                tenant=job.tenant,
                priority=job.priority,
                gpus=job.gpus,
                submit=job.submit,
                idle=idle,
                unused_guarantee=g - used,
                reclaimable=reclaimable,
                expectation=self.expectation[job.job_id],
                expectation_rules=rules,
                nodes_free=self._nodes_free(run, now, sim),
                quota_wait=qwait,
                quota_wait_rules=qwait_rules,
            )

    def _higher_after(self, job: SimJob, now: float) -> Iterator[tuple[float, float, float]]:
        """``(seconds after now, devices, run seconds or inf)`` of the jobs of ``job``'s
        tenant of higher priority that arrive after ``now``, in time order: work that goes
        before the job if it arrives while the job waits (``expectation_with_arrivals``,
        ``quota_wait``)."""
        arrivals = self._arrivals.get(job.tenant, [])
        start = bisect_right(arrivals, now, key=lambda a: a[0])
        for submit, priority, devices, run in islice(arrivals, start, None):
            if priority < job.priority:
                yield submit - now, devices, run

    def _staying(
        self, job: SimJob, now: float, sim: Simulator, reclaim_from: Set[str] = frozenset()
    ) -> Iterator[tuple[RunningJob, float]]:
        """``(part, seconds until it ends)`` of the running work that the product may not
        preempt for ``job``: all of it unless the job is P0-P2 and the work preemptible
        P4/P5 of lower priority, of its own tenant or of one in ``reclaim_from``. It ends
        when it really ends (``inf``: a service, or a gang that has not started). By the
        workload's priorities, so every policy is judged alike (FIFO runs everything at
        one priority)."""
        for part in sim.live.running.values():
            owner = sim.owner.get(part.job_id)
            if owner is None:
                continue
            other = owner.job
            if (
                job.priority <= HIGHEST_PREEMPTOR
                and part.preemptible
                and yields_to(other.priority, job.priority)
                and (other.tenant == job.tenant or other.tenant in reclaim_from)
            ):
                continue
            until = math.inf
            if owner.status == "running" and owner.due is not None:
                until = owner.due - now
            yield part, until

    def _fixed_work(self, run: JobRun, now: float, sim: Simulator) -> list[tuple[float, float]]:
        """``[(seconds until it ends, devices)]`` of the running work of ``run``'s tenant that
        the product may not preempt for it (``_staying``)."""
        tenant = run.job.tenant
        return [
            (until, held_milli(part) / FULL_DEVICE_MILLI)
            for part, until in self._staying(run.job, now, sim)
            if part.tenant == tenant
        ]

    def _nodes_free(self, run: JobRun, now: float, sim: Simulator) -> float:
        """``LargeWait.nodes_free``: the job's whole-node replicas need as many empty nodes,
        and the work that stays (``_staying``) keeps its nodes until it ends. Another
        tenant's work goes only by reclaim: while that tenant borrows and the job keeps its
        own tenant within its guarantee (all of such a tenant's work, which can only make
        the bound lower). Failed nodes count as free. 0 for jobs whose replicas share nodes
        (no such bound). Events after arrival can free nodes sooner (module docstring)."""
        job = run.job
        size = max((n.accelerator_count for n in sim.nodes.values()), default=0)
        groups = [g for g in job.groups if g.accelerators or g.accelerator_milli]
        if not size or not groups or any(g.accelerators != size for g in groups):
            return 0.0
        used = {t: m / FULL_DEVICE_MILLI for t, m in self.tenant_alloc.items()}
        guarantee = self.guarantee
        reclaim_from: set[str] = set()
        if used.get(job.tenant, 0.0) + job.gpus <= guarantee.get(job.tenant, 0.0):
            reclaim_from = {t for t, g in guarantee.items() if used.get(t, 0.0) > g}
        last: dict[str, float] = {}  # node -> seconds until the work that stays there ends
        for part, until in self._staying(job, now, sim, reclaim_from):
            for alloc in part.allocations:
                last[alloc.node_id] = max(last.get(alloc.node_id, 0.0), until)
        ends = (
            last.get(node_id, 0.0)
            for node_id, node in sim.nodes.items()
            if node.accelerator_count == size
        )
        return nodes_free_after(ends, sum(g.replicas for g in groups))

    def _leave_queue(self, run: JobRun) -> None:
        if run.job.tenant in self.tenant_waiting:
            self.tenant_waiting[run.job.tenant] -= 1

    def _turn(self, run: JobRun, sign: float) -> None:
        job = run.job
        if job.duration:
            rate = sign * job.gpus / job.duration
            self.turnover += rate
            if job.tenant in self.tenant_turnover:
                self.tenant_turnover[job.tenant] += rate

    def started(self, run: JobRun, now: float, sim: Simulator) -> None:
        self._large_waiting.discard(run.job.job_id)
        self._leave_queue(run)
        self._turn(run, 1.0)

    def completed(self, run: JobRun, now: float, sim: Simulator) -> None:
        self._turn(run, -1.0)

    def interrupted(self, run: JobRun, lost_gpu_s: float, *, failure: bool) -> None:
        was_running = run.status == "running"
        if failure:
            self.failures_hit += 1
            self.lost_failure_gpu_s += lost_gpu_s
        else:
            self.preemptions += 1
            self.lost_preempt_gpu_s += lost_gpu_s
        if was_running:
            self._turn(run, -1.0)
        if was_running and run.job.tenant in self.tenant_waiting:
            self.tenant_waiting[run.job.tenant] += 1

    def dropped(self, run: JobRun, now: float) -> None:
        self.dropped_jobs += 1
        self._large_waiting.discard(run.job.job_id)
        self._leave_queue(run)

    def cycled(self, now: float, sim: Simulator, decisions: Decisions) -> None:
        # Only while a large job waits for its first start: most cycles have none.
        for jid, code in self._large_codes.items():
            attribute_pending(self.large[jid].pending, code, self._last_cycle, now)
        codes: dict[str, str] = {}
        if self._large_waiting:
            for reason in decisions.pending:
                jid = reason.job_id.split(PART_MARK, 1)[0]
                if jid in self._large_waiting:
                    codes[jid] = str(reason.code)
        self._large_codes = codes
        self._last_cycle = now
        cap = self.capacity or 1
        self.curve.append((100.0 * self.arrived_milli / cap, 100.0 * self.allocated / cap))

    def sample(self, now: float, sim: Simulator) -> None:
        frag = fragmentation_of(sim.live.state, 8)
        shared_left = 0
        for ns in sim.live.state.node_list:
            if ns.cls is not None and ns.shares:
                shared_left += sum(ns.shares.values())
        cap = self.capacity or 1
        self.samples.append(
            {
                "t": now,
                "alloc": self.allocated / cap,
                "arrived": self.arrived_milli / cap,
                "waiting": float(len(sim.waiting)),
                "free": frag.free_devices + shared_left / FULL_DEVICE_MILLI,
                "fragmented": frag.stranded_devices + shared_left / FULL_DEVICE_MILLI,
            }
        )

    # the end

    def result(self, sim: Simulator, end: float, wall_s: float) -> SimResult:
        runs = sim.runs
        cap = self.capacity or 1
        waits: dict[str, list[float]] = {label: [] for label, _, _ in SIZE_CLASSES}
        censored: dict[str, int] = {label: 0 for label, _, _ in SIZE_CLASSES}
        late = 0
        large_longest = 0.0
        over_expect = 0
        over_plain = 0
        over_rate = 0
        over_rules = 0
        expect_checked = 0
        worst_ratio = 0.0
        topo: list[tuple[int, Tier | None]] = []
        arrived_runs = [r for r in runs if r.status != "new"]
        for r in arrived_runs:
            job = r.job
            if r.status == "dropped":
                continue
            cls = size_class(job.gpus)
            if r.first_start is not None:
                wait = r.first_start - job.submit
            else:
                wait = end - job.submit
                censored[cls] += 1
            waits[cls].append(wait)
            if job.max_wait is not None and wait > job.max_wait:
                late += 1
            if job.gpus >= LARGE_JOB:
                large_longest = max(large_longest, wait)
                if job.job_id in self.large:
                    self.large[job.job_id].wait = wait
                expect = self.expectation.get(job.job_id, math.inf)
                if math.isfinite(expect):
                    expect_checked += 1
                    worst_ratio = max(worst_ratio, wait / expect)
                    if wait > 2 * expect:
                        over_expect += 1
                plain = self.expectation_plain.get(job.job_id, math.inf)
                if math.isfinite(plain) and wait > 2 * plain:
                    over_plain += 1
                rate = self.expectation_rate.get(job.job_id, math.inf)
                if math.isfinite(rate) and wait > 2 * rate:
                    over_rate += 1
                large = self.large.get(job.job_id)
                rules = math.inf if large is None else large.expectation_rules
                if math.isfinite(rules) and wait > 2 * rules:
                    over_rules += 1
            if r.first_start is not None and job.replicas > 1:
                per_node = max((g.accelerators for g in job.groups if g.accelerators), default=0)
                if per_node:
                    node_size = 8
                    needed = math.ceil(job.gpus / node_size)
                    topo.append((needed, r.tier))
        leaf_nodes = int(self.workload.meta.get("nodes_per_leaf", 32))  # type: ignore[call-overload]
        su_nodes = int(self.workload.meta.get("nodes_per_su", 128))  # type: ignore[call-overload]
        in_leaf, leaf_eligible = topology_share(topo, leaf_nodes, Tier.LEAF)
        in_su, su_eligible = topology_share(topo, su_nodes, Tier.SU)
        last = self.samples[-1] if self.samples else {}
        frag = fragmentation_of(sim.live.state, 8)
        shared_left = sum(
            sum(ns.shares.values()) for ns in sim.live.state.node_list if ns.cls is not None
        )
        summary: dict[str, Any] = {
            "jobs": len(arrived_runs),
            "completed": sum(1 for r in runs if r.status == "done"),
            "dropped": self.dropped_jobs,
            # queued at the end, or still waiting for a job it starts after to complete
            "never_started": sum(censored.values()) + len(sim.blocked),
            "alloc_window": self.alloc_area / self.cap_area if self.cap_area else 0.0,
            # In GPUs: the share above is of the nodes in service, which outages change.
            "mean_allocated_window": (
                self.alloc_area / self.measured / FULL_DEVICE_MILLI if self.measured else 0.0
            ),
            "alloc_end": self.allocated / cap,
            "alloc_at_130": alloc_at_arrived(self.curve, 130),
            "arrived_end": self.arrived_milli / cap,
            "unallocated_end": (cap - self.allocated) / FULL_DEVICE_MILLI,
            "fragmented_end": frag.stranded_devices + shared_left / FULL_DEVICE_MILLI,
            "preemptions": self.preemptions,
            "preempt_lost_gpu_h": self.lost_preempt_gpu_s / 3600,
            "failure_interruptions": self.failures_hit,
            "failure_lost_gpu_h": self.lost_failure_gpu_s / 3600,
            "late_jobs": late,
            "large_longest_wait": large_longest,
            "large_over_2x_expectation": over_expect,
            "large_over_2x_plain": over_plain,
            "large_over_2x_rate": over_rate,
            "large_over_2x_rules": over_rules,
            "large_checked": expect_checked,
            "large_worst_wait_over_expectation": worst_ratio,
            "large_over": sorted(
                (w for w in self.large.values() if w.ratio > 2), key=lambda w: -w.ratio
            ),
            "one_leaf": (in_leaf, leaf_eligible),
            "one_su": (in_su, su_eligible),
            "mean_fragmented_window": _window_mean(self.samples, "fragmented", self.window),
            "mean_free_window": _window_mean(self.samples, "free", self.window),
            "last_sample": last,
        }
        for label in waits:
            summary[f"wait_{label}"] = wait_stats(waits[label], censored[label])
        span = max(self.window[1] - self.window[0], 1e-9)
        tenants = []
        for t, g in sorted(self.guarantee.items()):
            used = self.tenant_area[t] / span / FULL_DEVICE_MILLI
            demand = self.tenant_demand_area[t]
            tenants.append(
                {
                    "tenant": t,
                    "guarantee": g,
                    "mean_used": used,
                    "used_over_guarantee": used / g if g else 0.0,
                    "share": used * FULL_DEVICE_MILLI / cap,
                    "demand_time": demand / span,
                    "short_when_demanding": self.tenant_short_area[t] / demand if demand else 0.0,
                }
            )
        return SimResult(
            workload=self.workload.name,
            policy=self.spec.name,
            label=self.spec.label,
            seed=sim.seed,
            end=end,
            wall_s=wall_s,
            cycles=sim.cycles,
            summary=summary,
            curve=self.curve,
            samples=self.samples,
            waits=waits,
            tenants=tenants,
        )


def _window_mean(samples: list[dict[str, float]], key: str, window: tuple[float, float]) -> float:
    lo, hi = window
    values = [s[key] for s in samples if lo <= s["t"] <= hi]
    return sum(values) / len(values) if values else 0.0
