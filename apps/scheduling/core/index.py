"""The mutable capacity index the scheduler works on, with an undo log.

Why an index: at 10,000+ GPUs a scan of every node per decision is too slow. Nodes are
grouped into *classes* (pool, model, vendor, arch) because a replica can only ever use one
class. Inside a class:

* ``buckets[f]`` holds the nodes with exactly ``f`` whole free devices (insertion ordered),
  so best fit for a ``k``-device replica looks at ``D - k + 1`` buckets, not at all nodes;
* ``cap[k]`` (per class, spine, Scalable Unit and leaf) is how many ``k``-device replicas
  fit, ``sum(free // k)``, kept up to date in ``O(D)`` per change, so a topology domain that
  can host a gang is found without visiting its nodes;
* ``shared`` is a sorted list of partly used shared devices by remaining milli, so the best
  fitting share is a bisection.

Why an undo log: gang placement and preemption are trials. Instead of copying the snapshot
per job, every change is logged and ``rollback(mark)`` undoes a failed trial exactly.
"""

from __future__ import annotations

import math
from bisect import bisect_left, insort
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from typing import TypeVar

from .model import (
    FULL_DEVICE_MILLI,
    LOWEST_VICTIM,
    ClusterSnapshot,
    Node,
    NodeAllocation,
    PendingJob,
    RunningJob,
)
from .quota import QuotaKey, QuotaLedger

LeafKey = tuple[str, str, str]  # spine, scalable unit, leaf switch
SuKey = tuple[str, str]  # spine, scalable unit
ClassKey = tuple[str, str, str, str]  # pool, model, vendor, arch
Selector = tuple[tuple[str, str], ...]
T = TypeVar("T")
R = TypeVar("R")
Sig = tuple[int, int, tuple[int, ...]]
"""What node scoring sees of a node: free CPU, whole free devices, and the remaining milli
of each partly shared device (largest first)."""


def sig_of(ns: NodeState) -> Sig:
    shares = ns.shares
    rems = tuple(sorted(shares.values(), reverse=True)) if shares else ()
    return (ns.cpu_free, len(ns.free), rems)


def end_at(end: datetime | None) -> float:
    """An expected end as POSIX time; ``inf`` for work that declared none."""
    return math.inf if end is None else end.timestamp()


class NodeState:
    """Mutable free capacity of one node plus its place in the index."""

    __slots__ = (
        "caps",
        "cls",
        "cpu_free",
        "ends",
        "free",
        "held_budget",
        "held_by",
        "held_priority",
        "held_tenant",
        "idx",
        "leaf_key",
        "mem_free",
        "node",
        "share_users",
        "shares",
        "sig",
        "spine_key",
        "su_key",
        "top_end",
    )

    def __init__(self, node: Node, idx: int) -> None:
        self.node = node
        self.idx = idx
        self.free: list[int] = []
        self.cpu_free = node.cpu_milli
        self.mem_free = node.memory_mib
        self.shares: dict[int, int] = {}  # shared device -> remaining milli
        self.share_users: dict[int, int] = {}  # shared device -> number of shares on it
        self.cls: ClassIndex | None = None
        self.caps: tuple[list[int], ...] = ()
        self.spine_key = node.spine
        self.su_key: SuKey = (node.spine, node.scalable_unit)
        self.leaf_key: LeafKey = (node.spine, node.scalable_unit, node.leaf_switch)
        self.held_by: str | None = None
        self.held_priority = 0
        # work declared to run at most this long may use the node though it is held
        # (``Policy.hold_backfill``); None: none may
        self.held_budget: timedelta | None = None
        self.held_tenant: str | None = None
        self.sig: Sig | None = None  # see ClassIndex.groups
        # job id -> expected end of the jobs that run here (``RunningJob.expected_end``); a
        # job released inside a cycle stays until ``forget`` (delay.node_drain skips it)
        self.ends: dict[str, datetime | None] = {}
        # (job id, POSIX time) of the entry of ``ends`` that ends last (inf: it declared no
        # end; None: not known yet), so delay.node_drain needs no scan while that job runs.
        # Entries leave by ``drop_end`` (``ClusterState.forget``), never inside a cycle, so
        # a trial that releases a job and rolls back finds them as they were.
        self.top_end: tuple[str, float] | None = None

    def note_end(self, job_id: str, end: datetime | None) -> None:
        """Record where a job that runs here is expected to end (``ends``)."""
        self.ends[job_id] = end
        top = self.top_end
        if top is None:
            return
        if top[0] == job_id:
            self.top_end = None  # its end moved: found again by the next scan
            return
        at = end_at(end)
        if at > top[1]:
            self.top_end = (job_id, at)

    def drop_end(self, job_id: str) -> None:
        self.ends.pop(job_id, None)
        top = self.top_end
        if top is not None and top[0] == job_id:
            self.top_end = None

    def usable_by(self, job: PendingJob) -> bool:
        """Held nodes stay usable by the holder, by strictly higher priority work, by work
        declared to end (``expected_runtime``) before the holder could start there, and
        by preemptible P4/P5 work of ``held_tenant`` (the holder evicts it when it
        starts: ``Policy.plan_large``)."""
        held_by = self.held_by
        if held_by is None or held_by == job.job_id or job.priority < self.held_priority:
            return True
        budget, runtime = self.held_budget, job.expected_runtime
        if budget is not None and runtime is not None and runtime <= budget:
            return True
        return job.tenant == self.held_tenant and job.priority >= LOWEST_VICTIM

    def matches(self, selector: Selector) -> bool:
        labels = self.node.labels
        return all(labels.get(k) == v for k, v in selector)


class ClassIndex:
    """Free-capacity index of the schedulable nodes of one (pool, model, vendor, arch)."""

    def __init__(self, key: ClassKey, nodes: list[NodeState]) -> None:
        self.key = key
        self.pool, self.model, self.vendor, self.arch = key
        self.max_devices = max(ns.node.accelerator_count for ns in nodes)
        size = self.max_devices + 1
        self.nodes = nodes
        self.buckets: list[dict[NodeState, None]] = [{} for _ in range(size)]
        self.cap = [0] * size
        self.leaf_cap: dict[LeafKey, list[int]] = {}
        self.su_cap: dict[SuKey, list[int]] = {}
        self.spine_cap: dict[str, list[int]] = {}
        self.leaf_nodes: dict[LeafKey, list[NodeState]] = {}
        self.su_leaves: dict[SuKey, list[LeafKey]] = {}
        self.spine_sus: dict[str, list[SuKey]] = {}
        self.shared: list[tuple[int, int, int]] = []  # (remaining milli, node idx, device)
        # deltas[old][new]: the (k, change of free // k) pairs that are not zero.
        self._deltas = [
            [
                tuple((k, new // k - old // k) for k in range(1, size) if new // k != old // k)
                for new in range(size)
            ]
            for old in range(size)
        ]
        for ns in nodes:
            ns.cls = self
            if ns.leaf_key not in self.leaf_cap:
                self.leaf_cap[ns.leaf_key] = [0] * size
                self.leaf_nodes[ns.leaf_key] = []
                if ns.su_key not in self.su_cap:
                    self.su_cap[ns.su_key] = [0] * size
                    self.su_leaves[ns.su_key] = []
                    if ns.spine_key not in self.spine_cap:
                        self.spine_cap[ns.spine_key] = [0] * size
                        self.spine_sus[ns.spine_key] = []
                    self.spine_sus[ns.spine_key].append(ns.su_key)
                self.su_leaves[ns.su_key].append(ns.leaf_key)
            self.leaf_nodes[ns.leaf_key].append(ns)
            ns.caps = (
                self.cap,
                self.leaf_cap[ns.leaf_key],
                self.su_cap[ns.su_key],
                self.spine_cap[ns.spine_key],
            )
            self.buckets[0][ns] = None
            self.moved(ns, 0, len(ns.free))
            for dev, rem in ns.shares.items():
                if rem > 0:
                    self.shared.append((rem, ns.idx, dev))
        self.shared.sort()
        # Node counts per domain never change in a cycle; they bound what a domain can ever
        # host, so hopeless tiers are skipped without looking at their domains.
        self.leaf_size = {key: len(members) for key, members in self.leaf_nodes.items()}
        self.su_size = {
            su: sum(self.leaf_size[leaf] for leaf in leaves)
            for su, leaves in self.su_leaves.items()
        }
        self.spine_size = {
            spine: sum(self.su_size[su] for su in sus) for spine, sus in self.spine_sus.items()
        }
        # Nodes grouped by what node scoring sees (``Sig``), built on first use by scoring.py
        # and then kept up to date by every change: scoring looks at each distinct kind of
        # node once instead of at every node.
        self.groups: dict[Sig, dict[NodeState, None]] | None = None
        self.sigs_by_whole: list[dict[Sig, None]] = []  # the groups' keys by whole free count
        # groups without a whole free device, by the largest remainder of a shared device
        self.sigs_by_rem: dict[int, dict[Sig, None]] = {}

    def enable_groups(self) -> dict[Sig, dict[NodeState, None]]:
        if self.groups is None:
            groups: dict[Sig, dict[NodeState, None]] = {}
            by_whole: list[dict[Sig, None]] = [{} for _ in range(self.max_devices + 1)]
            for ns in self.nodes:
                sig = ns.sig = sig_of(ns)
                if sig not in groups:
                    groups[sig] = {}
                    self._file(sig, by_whole)
                groups[sig][ns] = None
            self.groups = groups
            self.sigs_by_whole = by_whole
        return self.groups

    def _file(self, sig: Sig, by_whole: list[dict[Sig, None]]) -> None:
        by_whole[sig[1]][sig] = None
        if sig[1] == 0:
            self.sigs_by_rem.setdefault(sig[2][0] if sig[2] else 0, {})[sig] = None

    def _unfile(self, sig: Sig) -> None:
        del self.sigs_by_whole[sig[1]][sig]
        if sig[1] == 0:
            best = sig[2][0] if sig[2] else 0
            same = self.sigs_by_rem[best]
            del same[sig]
            if not same:
                del self.sigs_by_rem[best]

    def regroup(self, ns: NodeState) -> None:
        """Re-file a node whose free resources changed (only when groups are in use)."""
        groups = self.groups
        if groups is None:
            return
        new = sig_of(ns)
        old = ns.sig
        if new == old:
            return
        if old is not None:
            members = groups[old]
            del members[ns]
            if not members:
                del groups[old]
                self._unfile(old)
        if new not in groups:
            groups[new] = {}
            self._file(new, self.sigs_by_whole)
        groups[new][ns] = None
        ns.sig = new

    def moved(self, ns: NodeState, old: int, new: int) -> None:
        """Re-file a node whose whole-free count went from ``old`` to ``new``."""
        if old == new:
            return
        del self.buckets[old][ns]
        self.buckets[new][ns] = None
        deltas = self._deltas[old][new]
        for caps in ns.caps:
            for k, delta in deltas:
                caps[k] += delta


@dataclass(slots=True)
class ResolvedAllocation:
    ns: NodeState
    devices: tuple[int, ...]
    shares: tuple[tuple[int, int], ...]
    cpu: int
    mem: int


@dataclass(slots=True)
class RunningEntry:
    job: RunningJob
    allocations: list[ResolvedAllocation] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)  # model -> milli
    whole_by_class: dict[ClassKey, int] = field(default_factory=dict)


VictimKey = tuple[int, float, str]


def victim_key(job: RunningJob) -> VictimKey:
    """Preference among preemption victims: lowest priority, then the most recently started
    (least work lost), then the id (so the order is total)."""
    return (-job.priority, -job.started_at.timestamp(), job.job_id)


class VictimOrder:
    """A class's possible preemption victims (preemptible P4/P5 jobs with whole devices
    there), kept in preference order as jobs are registered and forgotten, so a cycle does
    not sort them again. Jobs released inside a cycle stay listed: readers check
    ``ClusterState.running``."""

    __slots__ = ("entries", "keys")

    def __init__(self) -> None:
        self.keys: list[VictimKey] = []
        self.entries: list[RunningEntry] = []

    def add(self, key: VictimKey, entry: RunningEntry) -> None:
        i = bisect_left(self.keys, key)
        if i < len(self.keys) and self.keys[i] == key:
            self.entries[i] = entry
            return
        self.keys.insert(i, key)
        self.entries.insert(i, entry)

    def remove(self, key: VictimKey) -> None:
        i = bisect_left(self.keys, key)
        if i < len(self.keys) and self.keys[i] == key:
            del self.keys[i]
            del self.entries[i]


class ClusterState:
    """Index + quota ledger + running jobs, changed only through logged operations."""

    def __init__(self, snapshot: ClusterSnapshot, *, quotas_enabled: bool) -> None:
        self.warnings: list[str] = []
        self.node_list = [NodeState(n, i) for i, n in enumerate(snapshot.nodes)]
        self.nodes: dict[str, NodeState] = {}
        for ns in self.node_list:
            if ns.node.node_id in self.nodes:
                self.warnings.append(f"duplicate node id {ns.node.node_id}; later entry ignored")
                continue
            self.nodes[ns.node.node_id] = ns
        self.pools = {p.pool_id for p in snapshot.pools} | {n.pool for n in snapshot.nodes}
        self.ledger = QuotaLedger(snapshot.quotas, enabled=quotas_enabled)
        self.running: dict[str, RunningEntry] = {}
        self.log: list[Callable[[], object]] = []  # undo actions, oldest first
        self.freed_by: dict[int, set[str]] = {}
        self.held: list[NodeState] = []  # nodes under a delay-scheduling hold
        self.scoring_cache: object | None = None  # scoring.ScoringCache, made on first use
        self.timed = False  # some running job declared its expected end (delay.choose_hold)
        # job id -> (the pending job, its normalised request): a state kept across cycles
        # sees the same queued jobs again and again.
        self.requests: dict[str, tuple[object, object]] = {}
        self._init_free()
        self._init_running(snapshot.running)
        self.classes: dict[ClassKey, ClassIndex] = {}
        self.pool_classes: dict[str, list[ClassIndex]] = {}
        self.pool_nodes: dict[str, list[NodeState]] = {}
        self._init_index()
        # Possible preemption victims per class, in preference order (preemption.py).
        self.victims: dict[ClassKey, VictimOrder] = {}
        self._victim_keys: dict[str, VictimKey] = {}
        for entry in self.running.values():
            self._add_victim(entry)

    # ------------------------------------------------------------------ building

    def _init_free(self) -> None:
        for ns in self.nodes.values():
            count = ns.node.accelerator_count
            given = ns.node.free_devices
            free = range(count) if given is None else (d for d in given if 0 <= d < count)
            ns.free = sorted(free)

    def _init_running(self, running: Iterable[RunningJob]) -> None:
        used: dict[int, set[int]] = {}
        for job in running:
            if job.job_id in self.running:
                self.warnings.append(f"duplicate running job {job.job_id}; later entry ignored")
                continue
            entry = self._resolve(job, used)
            for model, milli in entry.usage.items():
                self.ledger.add((job.tenant, job.pool, model), milli)
            self.running[job.job_id] = entry
        for ns in self.nodes.values():
            blocked = used.get(ns.idx, set()) | ns.shares.keys()
            if blocked:
                ns.free = [d for d in ns.free if d not in blocked]

    def _resolve(self, job: RunningJob, used: dict[int, set[int]]) -> RunningEntry:
        """Resolve a snapshot job's allocations to node states, taking its shares and CPU."""
        entry = RunningEntry(job)
        for alloc in job.allocations:
            ns = self.nodes.get(alloc.node_id)
            if ns is None:
                self.warnings.append(f"job {job.job_id} runs on unknown node {alloc.node_id}")
                continue
            taken = used.setdefault(ns.idx, set())
            devices: list[int] = []
            for dev in alloc.devices:
                if dev in taken or dev in ns.shares:
                    self.warnings.append(
                        f"device {dev} of node {alloc.node_id} is allocated twice "
                        f"(job {job.job_id}); counted once"
                    )
                    continue
                taken.add(dev)
                devices.append(dev)
            shares: list[tuple[int, int]] = []
            for share in alloc.shares:
                dev = share.device
                if dev in taken:
                    self.warnings.append(
                        f"device {dev} of node {alloc.node_id} is both whole and shared "
                        f"(job {job.job_id}); share ignored"
                    )
                    continue
                rem = ns.shares.get(dev, FULL_DEVICE_MILLI) - share.milli
                if rem < 0:
                    self.warnings.append(
                        f"device {dev} of node {alloc.node_id} is shared beyond 1000 milli"
                    )
                ns.shares[dev] = max(rem, 0)
                ns.share_users[dev] = ns.share_users.get(dev, 0) + 1
                shares.append((dev, share.milli))
            ns.cpu_free -= alloc.cpu_milli
            ns.mem_free -= alloc.memory_mib
            ns.note_end(job.job_id, job.expected_end)
            self.timed = self.timed or job.expected_end is not None
            entry.allocations.append(
                ResolvedAllocation(
                    ns, tuple(devices), tuple(shares), alloc.cpu_milli, alloc.memory_mib
                )
            )
            model = ns.node.accelerator_model
            milli = len(devices) * FULL_DEVICE_MILLI + sum(m for _, m in shares)
            if model and milli:
                entry.usage[model] = entry.usage.get(model, 0) + milli
        return entry

    def _init_index(self) -> None:
        members: dict[ClassKey, list[NodeState]] = {}
        for ns in self.nodes.values():
            node = ns.node
            if not node.healthy or node.cordoned:
                continue
            self.pool_nodes.setdefault(node.pool, []).append(ns)
            if node.accelerator_count > 0 and node.accelerator_model:
                key = (node.pool, node.accelerator_model, node.accelerator_vendor, node.arch)
                members.setdefault(key, []).append(ns)
        for key in sorted(members):
            index = ClassIndex(key, members[key])
            self.classes[key] = index
            self.pool_classes.setdefault(key[0], []).append(index)
        for entry in self.running.values():
            for alloc in entry.allocations:
                cls = alloc.ns.cls
                if cls is not None:
                    whole = entry.whole_by_class
                    whole[cls.key] = whole.get(cls.key, 0) + len(alloc.devices)

    # ------------------------------------------------------------- raw changes

    @staticmethod
    def _take(ns: NodeState, devices: tuple[int, ...], cpu: int, mem: int) -> None:
        old = len(ns.free)
        for dev in devices:
            ns.free.remove(dev)
        ns.cpu_free -= cpu
        ns.mem_free -= mem
        if ns.cls is not None:
            ns.cls.moved(ns, old, len(ns.free))
            if ns.cls.groups is not None:
                ns.cls.regroup(ns)

    @staticmethod
    def _give(ns: NodeState, devices: tuple[int, ...], cpu: int, mem: int) -> None:
        old = len(ns.free)
        for dev in devices:
            insort(ns.free, dev)
        ns.cpu_free += cpu
        ns.mem_free += mem
        if ns.cls is not None:
            ns.cls.moved(ns, old, len(ns.free))
            if ns.cls.groups is not None:
                ns.cls.regroup(ns)

    @staticmethod
    def _share_take(ns: NodeState, dev: int, milli: int, cpu: int, mem: int) -> None:
        cls = ns.cls
        if dev in ns.shares:
            rem = ns.shares[dev]
            if cls is not None and rem > 0:
                cls.shared.remove((rem, ns.idx, dev))
            ns.share_users[dev] += 1
        else:
            old = len(ns.free)
            ns.free.remove(dev)
            if cls is not None:
                cls.moved(ns, old, len(ns.free))
            rem = FULL_DEVICE_MILLI
            ns.share_users[dev] = 1
        rem -= milli
        ns.shares[dev] = rem
        if cls is not None and rem > 0:
            insort(cls.shared, (rem, ns.idx, dev))
        ns.cpu_free -= cpu
        ns.mem_free -= mem
        if cls is not None and cls.groups is not None:
            cls.regroup(ns)

    @staticmethod
    def _share_give(ns: NodeState, dev: int, milli: int, cpu: int, mem: int) -> None:
        cls = ns.cls
        rem = ns.shares[dev]
        if cls is not None and rem > 0:
            cls.shared.remove((rem, ns.idx, dev))
        ns.share_users[dev] -= 1
        ns.cpu_free += cpu
        ns.mem_free += mem
        if ns.share_users[dev] == 0:
            # The last share left: the device is whole again and returns to the free list.
            del ns.shares[dev]
            del ns.share_users[dev]
            old = len(ns.free)
            insort(ns.free, dev)
            if cls is not None:
                cls.moved(ns, old, len(ns.free))
                if cls.groups is not None:
                    cls.regroup(ns)
            return
        rem = min(rem + milli, FULL_DEVICE_MILLI)
        ns.shares[dev] = rem
        if cls is not None:
            insort(cls.shared, (rem, ns.idx, dev))
            if cls.groups is not None:
                cls.regroup(ns)

    # --------------------------------------------------------- logged changes

    def mark(self) -> int:
        return len(self.log)

    def rollback(self, mark: int) -> None:
        """Undo every logged change after ``mark``, newest first."""
        log = self.log
        while len(log) > mark:
            log.pop()()

    def take_whole(self, ns: NodeState, k: int, cpu: int, mem: int) -> tuple[int, ...]:
        """Allocate the ``k`` lowest free devices of a node (all equal behind NVSwitch)."""
        devs = tuple(ns.free[:k])
        self._take(ns, devs, cpu, mem)
        self.log.append(partial(self._give, ns, devs, cpu, mem))
        return devs

    def take_share(self, ns: NodeState, dev: int, milli: int, cpu: int, mem: int) -> None:
        self._share_take(ns, dev, milli, cpu, mem)
        self.log.append(partial(self._share_give, ns, dev, milli, cpu, mem))

    def charge(self, key: QuotaKey, milli: int) -> None:
        self.ledger.add(key, milli)
        self.log.append(partial(self.ledger.add, key, -milli))

    def hold(
        self,
        ns: NodeState,
        job_id: str,
        priority: int,
        budget: timedelta | None = None,
        tenant: str | None = None,
    ) -> None:
        self.log.append(
            partial(self._unhold, ns, ns.held_by, ns.held_priority, ns.held_budget, ns.held_tenant)
        )
        ns.held_by, ns.held_priority, ns.held_budget = job_id, priority, budget
        ns.held_tenant = tenant
        self.held.append(ns)

    def _unhold(
        self,
        ns: NodeState,
        by: str | None,
        priority: int,
        budget: timedelta | None,
        tenant: str | None,
    ) -> None:
        ns.held_by, ns.held_priority, ns.held_budget = by, priority, budget
        ns.held_tenant = tenant
        self.held.remove(ns)

    def release_job(self, job_id: str) -> RunningEntry:
        """Free everything a running job holds (a victim is always removed whole)."""
        entry = self.running.pop(job_id)
        self.log.append(partial(self.running.__setitem__, job_id, entry))
        for alloc in entry.allocations:
            ns = alloc.ns
            for dev, milli in alloc.shares:
                self._share_give(ns, dev, milli, 0, 0)
                self.log.append(partial(self._share_take, ns, dev, milli, 0, 0))
            self._give(ns, alloc.devices, alloc.cpu, alloc.mem)
            self.log.append(partial(self._take, ns, alloc.devices, alloc.cpu, alloc.mem))
        job = entry.job
        for model, milli in entry.usage.items():
            self.charge((job.tenant, job.pool, model), -milli)
        return entry

    def commit(self) -> None:
        """Forget the undo log: what is in the state now is decided."""
        self.log.clear()

    # ------------------------------------------------- a state kept across cycles

    def register(self, job: RunningJob) -> RunningEntry:
        """Record a job whose resources a committed placement already took from this state.

        Used by ``LiveCluster``, which keeps one state across cycles instead of indexing a new
        snapshot each time. Nothing is taken again and the quota was charged by the placement.
        """
        entry = RunningEntry(job)
        nodes = self.nodes
        for alloc in job.allocations:
            ns = nodes[alloc.node_id]
            ns.note_end(job.job_id, job.expected_end)
            self.timed = self.timed or job.expected_end is not None
            shares = tuple((s.device, s.milli) for s in alloc.shares)
            entry.allocations.append(
                ResolvedAllocation(ns, alloc.devices, shares, alloc.cpu_milli, alloc.memory_mib)
            )
            model = ns.node.accelerator_model
            milli = len(alloc.devices) * FULL_DEVICE_MILLI + sum(m for _, m in shares)
            if model and milli:
                entry.usage[model] = entry.usage.get(model, 0) + milli
            cls = ns.cls
            if cls is not None and alloc.devices:
                whole = entry.whole_by_class
                whole[cls.key] = whole.get(cls.key, 0) + len(alloc.devices)
        self.running[job.job_id] = entry
        self._add_victim(entry)
        return entry

    def _add_victim(self, entry: RunningEntry) -> None:
        job = entry.job
        if not job.preemptible or job.priority < LOWEST_VICTIM or not entry.whole_by_class:
            return
        if job.job_id in self._victim_keys:  # registered again without being forgotten
            self.forget(job.job_id)
        key = self._victim_keys[job.job_id] = victim_key(job)
        for cls_key in entry.whole_by_class:
            order = self.victims.get(cls_key)
            if order is None:
                order = self.victims[cls_key] = VictimOrder()
            order.add(key, entry)

    def forget(self, job_id: str, allocations: Iterable[NodeAllocation] = ()) -> None:
        """Drop a job that is no longer running from the per-class victim candidates (and
        from the expected ends of the nodes it ran on)."""
        key = self._victim_keys.pop(job_id, None)
        if key is not None:
            for order in self.victims.values():
                order.remove(key)
        for alloc in allocations:
            ns = self.nodes.get(alloc.node_id)
            if ns is not None:
                ns.drop_end(job_id)

    def request_for(self, job: T, build: Callable[[T], R]) -> R:
        """``build(job)``, remembered while the same job object is queued (kept states)."""
        hit = self.requests.get(job.job_id)  # type: ignore[attr-defined]
        if hit is not None and hit[0] is job:
            return hit[1]  # type: ignore[return-value]
        value = build(job)
        self.requests[job.job_id] = (job, value)  # type: ignore[attr-defined]
        return value

    def begin_cycle(self) -> None:
        """Reset what only lives for one cycle: holds, trial bookkeeping, caches, warnings."""
        for ns in self.held:
            ns.held_by, ns.held_priority, ns.held_budget = None, 0, None
            ns.held_tenant = None
        self.held.clear()
        self.log.clear()
        self.freed_by.clear()
        self.warnings.clear()
        if len(self.requests) > 4 * (len(self.running) + 1024):
            self.requests.clear()
