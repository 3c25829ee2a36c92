"""A cluster state kept across scheduling cycles.

``schedule(snapshot, ...)`` indexes a whole snapshot every cycle, which is right for the web
app (the snapshot comes fresh from the database) but wasteful in a loop that owns the truth,
such as the trace-driven simulator: there, most cycles change a handful of nodes. A
``LiveCluster`` indexes the cluster once and then applies each cycle's decisions and each
completion to the same index, so a cycle costs what its decisions cost.

Decisions are the same as ``schedule(live.snapshot(), queue, policy, now)`` would give: the
cycle runs the same ``Scheduler`` code on an index in the same state (tests compare both).
Changes of the node list (a failure, a repair) rebuild the index from a snapshot.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import datetime

from .index import ClusterState
from .model import (
    ClusterSnapshot,
    Decisions,
    DeviceShare,
    Node,
    NodeAllocation,
    PendingJob,
    Placement,
    Policy,
    Reservation,
    RunningJob,
)
from .scheduler import Scheduler, _gc_paused


def running_from_placement(
    placement: Placement, job: PendingJob, started_at: datetime, *, preemptible: bool = True
) -> RunningJob:
    """The running job a placement becomes (one allocation per replica)."""
    allocations = tuple(
        NodeAllocation(
            node_id=r.node_id,
            devices=() if r.share_milli else r.devices,
            shares=(DeviceShare(r.devices[0], r.share_milli),) if r.share_milli else (),
            cpu_milli=r.cpu_milli,
            memory_mib=r.memory_mib,
        )
        for r in placement.replicas
    )
    return RunningJob(
        job_id=placement.job_id,
        tenant=placement.tenant,
        pool=placement.pool,
        priority=job.priority,
        started_at=started_at,
        allocations=allocations,
        preemptible=preemptible,
        expected_end=(None if job.expected_runtime is None else started_at + job.expected_runtime),
    )


class LiveCluster:
    """One index, changed by cycles (``schedule``), completions (``release``) and node changes."""

    def __init__(
        self, snapshot: ClusterSnapshot, *, quotas_enabled: bool = True, pause_gc: bool = True
    ) -> None:
        self._quotas_enabled = quotas_enabled
        self._pause_gc = pause_gc
        self._snapshot = replace(snapshot, running=(), reservations=())
        self.nodes: dict[str, Node] = {n.node_id: n for n in snapshot.nodes}
        self.running: dict[str, RunningJob] = {j.job_id: j for j in snapshot.running}
        self.reservations: tuple[Reservation, ...] = snapshot.reservations
        self.state = self._build()

    def _build(self) -> ClusterState:
        snap = self.snapshot()
        with _gc_paused(self._pause_gc):
            return ClusterState(snap, quotas_enabled=self._quotas_enabled)

    def snapshot(self) -> ClusterSnapshot:
        """The equivalent snapshot: what ``schedule`` would need to decide the same."""
        return replace(
            self._snapshot,
            nodes=tuple(self.nodes.values()),
            running=tuple(self.running.values()),
            reservations=self.reservations,
        )

    def schedule(
        self,
        queue: Sequence[PendingJob],
        policy: Policy,
        now: datetime,
        *,
        non_preemptible: Iterable[str] = (),
        quiet: bool = False,
    ) -> Decisions:
        """Decide one cycle and apply it: placements run from ``now``, victims are gone."""
        if policy.quotas != self._quotas_enabled:
            raise ValueError("the policy's quota switch differs from this cluster's")
        sched = Scheduler.on_state(
            self.state, policy, now, self.reservations, pause_gc=self._pause_gc, quiet=quiet
        )
        decisions = sched.run(queue)
        state = self.state
        for pre in decisions.preemptions:
            victim = self.running.pop(pre.victim_job_id, None)
            state.forget(pre.victim_job_id, victim.allocations if victim else ())
        if decisions.placements:
            jobs = {j.job_id: j for j in queue}
            keep = set(non_preemptible)
            for placement in decisions.placements:
                job = jobs[placement.job_id]
                running = running_from_placement(
                    placement, job, now, preemptible=placement.job_id not in keep
                )
                state.register(running)
                self.running[running.job_id] = running
        self.reservations = decisions.reservations
        return decisions

    def release(self, job_id: str) -> RunningJob:
        """A running job ended (completed, failed or killed): give its resources back."""
        job = self.running.pop(job_id)
        state = self.state
        with _gc_paused(self._pause_gc):
            state.release_job(job_id)
            state.commit()
        state.forget(job_id, job.allocations)
        return job

    def set_node(self, node: Node) -> None:
        """Replace a node (health, cordon, devices); the index is rebuilt.

        Jobs on a node that is no longer healthy keep running in the index until released:
        the caller decides what a failure does to them.
        """
        self.nodes[node.node_id] = node
        self.state = self._build()

    def jobs_on(self, node_id: str) -> list[str]:
        return [
            j.job_id
            for j in self.running.values()
            if any(a.node_id == node_id for a in j.allocations)
        ]
