"""The discrete-event simulator: replays a workload through the scheduling core.

A run is a loop over a heap of events on a virtual clock (``events.py``): arrivals,
completions, node failures and repairs, and the scheduling cycles they cause. A cycle runs
the *same* core as production (``LiveCluster.schedule``: ``Scheduler`` on a kept index) on
every waiting job, and its decisions are applied: placed jobs run for their duration,
preempted jobs are requeued and resume from their last checkpoint after a restart cost,
jobs on a failed node are requeued the same way. Cycles are coalesced: all events of one
instant (or of ``cycle_interval`` seconds) share one cycle.

Determinism: the only randomness is the ``seed`` given to the run (used to break ties in
node order when the workload asks for it); there is no global state, so two runs with the
same inputs give the same results, and runs can go side by side in one process.
"""

from __future__ import annotations

import time as _time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import cast

from apps.scheduling.core import (
    FULL_DEVICE_MILLI,
    ClusterSnapshot,
    Node,
    PendingJob,
    Placement,
    Policy,
    ReplicaGroup,
    Tier,
)
from apps.scheduling.core.delay import starvation_threshold_for, topology_patience_for
from apps.scheduling.core.live import LiveCluster
from apps.scheduling.core.model import TaskShape

from .events import EventQueue, Kind
from .metrics import Recorder, SimResult
from .policies import PolicySpec
from .workload import PART_MARK, NodeFailure, SimJob, Workload

EPOCH = datetime(2025, 1, 1)
ProgressFn = Callable[[float, str], None]
"""Called now and then with the share of the run done (0..1) and a short message."""


@dataclass(slots=True)
class JobRun:
    """The simulator's mutable record of one job."""

    job: SimJob
    index: int
    pending: PendingJob | None = None  # what the core sees while the job waits
    status: str = "new"  # new | waiting | running | done | dropped
    remaining: float | None = None
    first_start: float | None = None
    end: float | None = None
    due: float | None = None  # when the current run completes (None: runs until stopped)
    start: float = 0.0
    penalty: float = 0.0  # start-up time of the current run (restart cost)
    next_penalty: float = 0.0
    generation: int = 0
    queued_since: float = 0.0
    waited: float = 0.0
    preemptions: int = 0
    failures: int = 0
    lost_gpu_s: float = 0.0
    parts: list[str] = field(default_factory=list)  # ids the core knows as running
    left: dict[str, int] = field(default_factory=dict)  # replicas still to place (gang off)
    nodes: set[str] = field(default_factory=set)
    tier: Tier | None = None
    part_seq: int = 0
    limited: bool = False  # the current run ends at the job's runtime limit, its work undone


def _tier(nodes: set[str], topo: dict[str, tuple[str, str, str]]) -> Tier:
    if len(nodes) <= 1:
        return Tier.NODE
    keys = [topo[n] for n in nodes]
    spine, su, leaf = keys[0]
    if all(k == (spine, su, leaf) for k in keys):
        return Tier.LEAF
    if all(k[0] == spine and k[1] == su for k in keys):
        return Tier.SU
    if all(k[0] == spine for k in keys):
        return Tier.SPINE
    return Tier.ANY


class Simulator:
    """One run of one workload under one policy. ``run()`` once; read the result."""

    def __init__(
        self,
        workload: Workload,
        spec: PolicySpec,
        *,
        seed: int = 0,
        progress: ProgressFn | None = None,
        cycle_interval: float = 0.0,
        sample_interval: float | None = None,
        profile_every: int | None = None,
    ) -> None:
        self.workload = workload
        self.spec = spec
        self.seed = seed
        self.progress = progress
        self.cycle_interval = cycle_interval
        self.profile_every = profile_every
        self.events = EventQueue()
        self.runs: list[JobRun] = [JobRun(job, i) for i, job in enumerate(workload.jobs)]
        self.by_id: dict[str, JobRun] = {r.job.job_id: r for r in self.runs}
        # A job's later runs are named "<id>~<n>" in the core: ids must not clash with those.
        if len(self.by_id) != len(self.runs):
            raise ValueError("the workload's job ids are not unique")
        if any(PART_MARK in i for i in self.by_id):
            raise ValueError(f"a job id may not contain {PART_MARK!r}")
        self.owner: dict[str, JobRun] = {}  # core job id (a job or a part of one) -> run
        self.waiting: dict[str, JobRun] = {}  # in queue order of arrival
        # Jobs that start after others: arrived but not yet in the queue, and who waits on whom.
        self.blocked: dict[str, JobRun] = {}
        self.succeeded: set[str] = set()
        self.dependents: dict[str, list[JobRun]] = {}
        for run in self.runs:
            for before in run.job.after:
                if before not in self.by_id:
                    raise ValueError(
                        f"job {run.job.job_id} starts after {before}, which is not in the workload"
                    )
                self.dependents.setdefault(before, []).append(run)
        self.nodes: dict[str, Node] = {n.node_id: n for n in workload.nodes}
        self.topo = {n.node_id: (n.spine, n.scalable_unit, n.leaf_switch) for n in workload.nodes}
        snapshot = ClusterSnapshot(
            nodes=workload.nodes, quotas=workload.quotas, pools=workload.pools
        )
        self.live = LiveCluster(snapshot, quotas_enabled=spec.policy.quotas)
        self.policy: Policy = spec.policy
        self.recorder = Recorder(workload, spec, sample_interval=sample_interval)
        self._cycle_at: float | None = None
        self._last_cycle = -1e18
        self._shape_counts: dict[TaskShape, int] = {}
        self._arrived = 0
        self._profile_at = 0
        self.cycles = 0
        self._ran = False

    # ------------------------------------------------------------------ driver

    def run(self) -> SimResult:
        if self._ran:
            raise RuntimeError("a Simulator runs once")
        self._ran = True
        started = _time.perf_counter()
        ev = self.events
        for run in self.runs:
            ev.push(run.job.submit, Kind.ARRIVE, run)
        for failure in self.workload.failures:
            ev.push(failure.time, Kind.NODE_FAIL, failure)
        if self.recorder.sample_interval:
            ev.push(0.0, Kind.SAMPLE)
        horizon = self.workload.horizon
        total = max(len(self.runs), 1)
        next_report = 0.0
        while ev:
            t = ev.peek_time()
            if horizon is not None and t is not None and t > horizon:
                break
            event = ev.pop()
            now = event.time
            self.recorder.advance(now)
            kind = event.kind
            if kind == Kind.ARRIVE:
                assert isinstance(event.payload, JobRun)
                self._arrive(event.payload, now)
            elif kind == Kind.COMPLETE:
                done, generation = cast(tuple[JobRun, int], event.payload)
                self._complete(done, generation, now)
            elif kind == Kind.CYCLE:
                self._cycle_at = None
                self._cycle(now)
            elif kind == Kind.NODE_FAIL:
                assert isinstance(event.payload, NodeFailure)
                self._fail(event.payload, now)
            elif kind == Kind.NODE_DRAIN:
                assert isinstance(event.payload, str)
                if self.nodes[event.payload].cordoned:  # not repaired in the meantime
                    self._drain(event.payload, now)
            elif kind == Kind.NODE_REPAIR:
                assert isinstance(event.payload, str)
                self._repair(event.payload, now)
            elif kind == Kind.WAKE:
                self._want_cycle(now)
            elif kind == Kind.SAMPLE:
                self.recorder.sample(now, self)
                if ev and self.recorder.sample_interval:
                    ev.push(now + self.recorder.sample_interval, Kind.SAMPLE)
            if self.progress is not None and self._arrived / total >= next_report:
                self.progress(self._arrived / total, f"t={now:.0f}s cycles={self.cycles}")
                next_report += 0.05
        end = ev.now if horizon is None else horizon
        self.recorder.advance(end)
        if self.progress is not None:
            self.progress(1.0, "done")
        return self.recorder.result(self, end, _time.perf_counter() - started)

    def _want_cycle(self, now: float) -> None:
        if self._cycle_at is not None:
            return
        at = max(now, self._last_cycle + self.cycle_interval)
        self._cycle_at = at
        self.events.push(at, Kind.CYCLE)

    # ------------------------------------------------------------------ events

    def _pending_job(self, run: JobRun, groups: tuple[ReplicaGroup, ...], job_id: str) -> None:
        job = run.job
        run.pending = PendingJob(
            job_id=job_id,
            tenant=job.tenant,
            pool=job.pool,
            priority=3 if self.spec.fifo else job.priority,
            groups=groups,
            submit_time=EPOCH + timedelta(seconds=job.submit),
            topology=job.topology,
            max_wait=None if job.max_wait is None else timedelta(seconds=job.max_wait),
            expected_runtime=self._declared(run),
        )
        self.owner[job_id] = run

    def _declared(self, run: JobRun) -> timedelta | None:
        """The runtime the core is told: with ``exact_runtimes`` what is left of the job plus
        its restart (long-runners declare none), else the job's own limit."""
        if not self.workload.exact_runtimes:
            limit = run.job.runtime_limit
            return None if limit is None else timedelta(seconds=limit)
        if run.remaining is None:
            return None
        return timedelta(seconds=run.remaining + run.next_penalty)

    def _arrive(self, run: JobRun, now: float) -> None:
        job = run.job
        if not self._ready(job):
            self.blocked[job.job_id] = run  # joins the queue when they have all completed
            return
        self._arrived += 1
        run.status = "waiting"
        run.remaining = job.duration
        run.queued_since = now
        run.left = {g.name: g.replicas for g in job.groups}
        self._pending_job(run, job.groups, job.job_id)
        self.waiting[job.job_id] = run
        self.recorder.arrived(run, now, self)
        if self.spec.learn_profile:
            self._learn(job)
        policy = self.policy
        if policy.delay_scheduling and job.gpus >= policy.large_job_devices:
            wake = now + starvation_threshold_for(int(job.gpus), policy).total_seconds()
            self.events.push(wake, Kind.WAKE)
        patience = topology_patience_for(int(job.gpus), policy).total_seconds()
        if patience > 0 and job.replicas > 1:
            self.events.push(now + patience, Kind.WAKE)
        self._want_cycle(now)

    def _learn(self, job: SimJob) -> None:
        """Count task shapes seen so far; the core gets the mix when the count of arrivals
        doubles (then every ``profile_every`` arrivals if set), not per job, so that its
        per-profile caches stay useful."""
        for g in job.groups:
            shape = TaskShape(
                accelerators=g.accelerators,
                milli=g.accelerator_milli,
                cpu_milli=g.cpu_milli,
                memory_mib=g.memory_mib,
                models=g.models,
            )
            weight = g.replicas
            if self.spec.profile_by_demand:
                weight *= g.accelerators * FULL_DEVICE_MILLI + g.accelerator_milli
            self._shape_counts[shape] = self._shape_counts.get(shape, 0) + weight
        n = self._arrived
        if n >= self._profile_at:
            total = sum(self._shape_counts.values()) or 1
            profile = tuple(
                replace(s, weight=c / total)
                for s, c in sorted(self._shape_counts.items(), key=lambda kv: -kv[1])
            )
            self.policy = replace(self.spec.policy, workload_profile=profile)
            every = self.profile_every
            self._profile_at = n * 2 if every is None or n < every else n + every

    def _complete(self, run: JobRun, generation: int, now: float) -> None:
        if run.status != "running" or run.generation != generation:
            return  # a stale completion of a run that was interrupted
        for part in run.parts:
            self._release_part(part)
        run.parts.clear()
        run.status = "done"
        run.end = now
        self.recorder.completed(run, now, self)
        if not run.limited:
            self._succeeded(run.job.job_id, now)
        self._want_cycle(now)

    def _succeeded(self, job_id: str, now: float) -> None:
        """Let in the jobs that waited only for this one: each joins the queue now, its wait
        (and its max wait) counted from now, as the product counts from ``released_at``."""
        self.succeeded.add(job_id)
        for dep in self.dependents.get(job_id, ()):
            if dep.job.job_id in self.blocked and self._ready(dep.job):
                del self.blocked[dep.job.job_id]
                dep.job = replace(dep.job, submit=now)
                self._arrive(dep, now)

    def _ready(self, job: SimJob) -> bool:
        """Every job it starts after has completed (not stopped at its runtime limit)."""
        return all(before in self.succeeded for before in job.after)

    def _release_part(self, part: str) -> None:
        self.live.release(part)
        self.recorder.freed(part)
        self.owner.pop(part, None)

    def _fail(self, failure: NodeFailure, now: float) -> None:
        """The node leaves service: drained at once, or cordoned (and drained later, if
        ``drain_after`` says so). A node already out of service ignores the failure."""
        node = self.nodes.get(failure.node_id)
        if node is None or not node.healthy or node.cordoned:
            return
        if failure.drain_after == 0.0:
            self._drain(node.node_id, now)
        else:
            self.nodes[node.node_id] = replace(node, cordoned=True)
            self.live.set_node(self.nodes[node.node_id])
            self.recorder.node_changed(self)
            if failure.drain_after is not None:
                self.events.push(now + failure.drain_after, Kind.NODE_DRAIN, node.node_id)
        self.events.push(now + failure.repair, Kind.NODE_REPAIR, node.node_id)
        self._want_cycle(now)

    def _drain(self, node_id: str, now: float) -> None:
        """Stop the node's jobs (each back to the queue, as after a failure) and take the
        node out of service."""
        victims = {self.owner[j].job.job_id: self.owner[j] for j in self.live.jobs_on(node_id)}
        for run in victims.values():
            self._interrupt(run, now, failure=True)
        self.nodes[node_id] = replace(self.nodes[node_id], healthy=False)
        self.live.set_node(self.nodes[node_id])
        self.recorder.node_changed(self)
        self._want_cycle(now)

    def _repair(self, node_id: str, now: float) -> None:
        node = self.nodes[node_id]
        self.nodes[node_id] = replace(node, healthy=True, cordoned=False)
        self.live.set_node(self.nodes[node_id])
        self.recorder.node_changed(self)
        self._want_cycle(now)

    def _interrupt(self, run: JobRun, now: float, *, failure: bool, gone: str = "") -> None:
        """Stop a running (or partly placed) job and put it back in the queue."""
        for part in list(run.parts):
            if part != gone:
                self._release_part(part)
            else:
                self.owner.pop(part, None)
        run.parts.clear()
        lost = 0.0
        if run.status == "running":
            ran = now - run.start
            work = max(0.0, ran - run.penalty)
            ckpt = run.job.checkpoint_interval
            saved = (work // ckpt) * ckpt if ckpt else 0.0
            if run.remaining is None:
                saved = work  # a long-runner has nothing to redo, only its restart
            else:
                run.remaining = max(run.remaining - saved, 0.0)
            lost = (work - saved) + min(ran, run.penalty)
            run.generation += 1
        run.lost_gpu_s += lost * run.job.gpus
        if failure:
            run.failures += 1
        else:
            run.preemptions += 1
        self.recorder.interrupted(run, lost * run.job.gpus, failure=failure)
        run.status = "waiting"
        run.queued_since = now
        run.next_penalty = run.job.restart_cost
        run.left = {g.name: g.replicas for g in run.job.groups}
        run.nodes = set()
        run.part_seq += 1
        self._pending_job(run, run.job.groups, f"{run.job.job_id}{PART_MARK}{run.part_seq}")
        self.waiting[run.job.job_id] = run

    # ------------------------------------------------------------------ cycles

    def _cycle(self, now: float) -> None:
        self._last_cycle = now
        if not self.waiting:
            return
        self.cycles += 1
        queue = [r.pending for r in self.waiting.values() if r.pending is not None]
        decisions = self.live.schedule(
            queue, self.policy, EPOCH + timedelta(seconds=now), quiet=True
        )
        for pre in decisions.preemptions:
            run = self.owner.get(pre.victim_job_id)
            if run is None:
                continue
            self.recorder.freed(pre.victim_job_id)
            self._interrupt(run, now, failure=False, gone=pre.victim_job_id)
        for placement in decisions.placements:
            self._placed(placement, now)
        if self.workload.one_shot:
            for run in list(self.waiting.values()):
                if not run.parts:
                    run.status = "dropped"
                    del self.waiting[run.job.job_id]
                    self.recorder.dropped(run, now)
        for res in decisions.reservations:
            expiry = (res.expires_at - EPOCH).total_seconds()
            if expiry > now:
                self.events.push(expiry, Kind.WAKE)
        self.recorder.cycled(now, self, decisions)

    def _placed(self, placement: Placement, now: float) -> None:
        run = self.owner[placement.job_id]
        run.parts.append(placement.job_id)
        running = self.live.running[placement.job_id]
        self.recorder.took(running, self)
        for r in placement.replicas:
            run.nodes.add(r.node_id)
            run.left[r.group] -= 1
        if placement.partial or any(v > 0 for v in run.left.values()):
            # Gang off: some replicas hold resources, the rest wait as a job of their own.
            run.part_seq += 1
            groups = tuple(
                replace(g, replicas=run.left[g.name]) for g in run.job.groups if run.left[g.name]
            )
            self._pending_job(run, groups, f"{run.job.job_id}{PART_MARK}{run.part_seq}")
            return
        self._start(run, now)

    def _start(self, run: JobRun, now: float) -> None:
        del self.waiting[run.job.job_id]
        run.pending = None
        run.status = "running"
        run.start = now
        run.penalty = run.next_penalty
        run.waited += now - run.queued_since
        if run.first_start is None:
            run.first_start = now
            run.tier = _tier(run.nodes, self.topo)
        self.recorder.started(run, now, self)
        end = None if run.remaining is None else now + run.penalty + run.remaining
        limit = run.job.runtime_limit
        run.limited = limit is not None and (end is None or end > now + limit)
        if run.limited:
            assert limit is not None
            end = now + limit  # stopped at its runtime limit (a failure), as the product does
        run.due = end
        if end is not None:
            self.events.push(end, Kind.COMPLETE, (run, run.generation))

    # ------------------------------------------------------------------ views

    def allocated_milli(self) -> int:
        return self.recorder.allocated

    def capacity_milli(self) -> int:
        return (
            sum(n.accelerator_count for n in self.nodes.values() if n.healthy and not n.cordoned)
            * FULL_DEVICE_MILLI
        )
