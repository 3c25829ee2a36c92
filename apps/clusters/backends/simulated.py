"""The simulated cluster: the ``ClusterBackend`` interface run in-process, for the embedded
default, demos and tests. Clearly a simulation: nothing here touches hardware.

Workloads start after ``startup_s``, training jobs finish after their duration, notebooks and
inference services run until deleted. Durations and failures come from two environment
variables of the workload's first replica group, which a real cluster ignores:
``ZS_SIM_DURATION_S`` (default ``default_duration_s``) and ``ZS_SIM_FAIL=1`` (end failed).
Time comes from an injected clock, so tests can drive a virtual one.

A running notebook is reachable: ``notebook_endpoint`` starts a small local HTTP server for it
(``sim_notebook``) that serves a page labelled as simulated; it stops when the notebook stops.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Self

from .base import NotFoundError, Quantities, ResyncRequired
from .sim_notebook import SimulatedNotebookServer
from .simlogs import simulated_logs
from .spec import (
    ApplyResult,
    DrainResult,
    LogLine,
    NetworkTopology,
    NodeInventory,
    NotebookEndpoint,
    ObjectRef,
    Phase,
    WatchEvent,
    WorkloadKind,
    WorkloadSpec,
    WorkloadStatus,
    namespace_for,
    workload_name,
)

Clock = Callable[[], float]


@dataclass
class _Workload:
    spec: WorkloadSpec
    created_at: float
    duration_s: float | None  # None: runs until deleted
    fails: bool
    forced: tuple[Phase, str] | None = None
    last_phase: Phase = "pending"
    resource_version: int = 0
    scaled_to: int | None = None  # the last ``scale`` of an inference service


@dataclass
class SimulatedBackend:
    """In-memory cluster. Thread-safe: the web thread and worker threads share one instance."""

    nodes: dict[str, NodeInventory] = field(default_factory=dict)
    clock: Clock = time.monotonic
    startup_s: float = 2.0
    default_duration_s: float = 60.0
    history_limit: int = 10_000

    def __post_init__(self) -> None:
        self._lock = threading.RLock()
        self._workloads: dict[int, _Workload] = {}
        self._rv = itertools.count(1)
        self._events: list[WatchEvent] = []
        self._cordoned: dict[str, str] = {}
        self.tenants: dict[str, Quantities] = {}
        self.queues: dict[str, tuple[Quantities, Quantities]] = {}
        self.topology: NetworkTopology | None = None
        self.apply_calls = 0
        # Inference job id -> the nodes its service may run on (what the Kubernetes backend
        # marks with the service's node label): from apply, then from each ``scale`` with nodes.
        self.serve_nodes: dict[int, tuple[str, ...]] = {}
        # Inference job id -> the service revision its pods run: from apply, then from each
        # ``update_template``. Reported by the service's status.
        self.revisions: dict[int, int] = {}
        self._notebook_servers: dict[int, SimulatedNotebookServer] = {}
        # Notebook home volumes by the id of the notebook that made them: they outlive their
        # notebooks, as claims do on Kubernetes, until ``delete_notebook_home``.
        self.notebook_homes: dict[int, str] = {}
        # cluster time -> epoch seconds, fixed once so a line keeps its timestamp across reads
        self._wall_offset = time.time() - self.clock()

    # ------------------------------------------------------------------ workloads
    def apply(self, spec: WorkloadSpec, *, started: bool = False) -> ApplyResult:
        """Create the workload; ``started`` skips the start-up delay (re-adopting a workload
        that was already running before this process restarted)."""
        with self._lock:
            self.apply_calls += 1
            ref = ObjectRef("batch.volcano.sh/v1alpha1", "Job", spec.namespace, spec.object_name)
            if spec.job_id in self._workloads:
                return ApplyResult(job_id=spec.job_id, created=False, objects=(ref,))
            env = spec.replica_groups[0].env
            duration = _float(env.get("ZS_SIM_DURATION_S"))
            if duration is None and spec.kind == "training":
                duration = self.default_duration_s
            work = _Workload(
                spec=spec,
                created_at=self.clock() - (self.startup_s if started else 0.0),
                duration_s=duration,
                fails=env.get("ZS_SIM_FAIL") == "1",
            )
            self._workloads[spec.job_id] = work
            if spec.notebook is not None:
                home = spec.notebook.home_job_id or spec.job_id
                self.notebook_homes.setdefault(home, spec.tenant)
            if spec.kind == "inference":
                nodes = {node for group in spec.replica_groups for node in group.node_names}
                if nodes:
                    self.serve_nodes[spec.job_id] = tuple(sorted(nodes))
                if spec.inference is not None:
                    self.revisions.setdefault(spec.job_id, spec.inference.revision)
            self._emit("added", work)
            return ApplyResult(job_id=spec.job_id, created=True, objects=(ref,))

    def delete(self, job_id: int, tenant: str, kind: WorkloadKind) -> bool:
        with self._lock:
            work = self._workloads.pop(job_id, None)
            self._stop_notebook(job_id)
            self.serve_nodes.pop(job_id, None)
            self.revisions.pop(job_id, None)
            if work is None:
                return False
            self._emit("deleted", work)
            return True

    def delete_notebook_home(self, home_job_id: int, tenant: str) -> bool:
        with self._lock:
            if self.notebook_homes.get(home_job_id) != tenant:
                return False
            del self.notebook_homes[home_job_id]
            return True

    def scale(
        self,
        job_id: int,
        tenant: str,
        replicas: int,
        node_names: Sequence[str] | None = None,
    ) -> None:
        """Record the replica count of an inference service; its status reports it. Nodes,
        when given, are recorded in ``serve_nodes``."""
        if replicas < 0:
            raise ValueError("replicas must be >= 0")
        with self._lock:
            work = self._workloads.get(job_id)
            if work is None or work.spec.tenant != tenant or work.spec.kind != "inference":
                raise NotFoundError(f"inference service {job_id} is not on the cluster", status=404)
            if node_names is not None:
                self.serve_nodes[job_id] = tuple(sorted(set(node_names)))
            if work.scaled_to != replicas:
                work.scaled_to = replicas
                self._emit("modified", work)

    def update_template(self, spec: WorkloadSpec) -> bool:
        """Record the service's revision; True when it changed. A simulated rollout completes
        at once (its replicas are counts, not pods), so only the revision its status reports
        moves (with a ``modified`` event when it holds the service). Unlike ``scale`` this never
        raises for a service it does not hold: the embedded mode models service replicas
        elsewhere, so the record is kept either way."""
        if spec.kind != "inference" or spec.inference is None:
            raise ValueError("update_template needs an inference spec")
        revision = spec.inference.revision
        with self._lock:
            if self.revisions.get(spec.job_id) == revision:
                return False
            self.revisions[spec.job_id] = revision
            work = self._workloads.get(spec.job_id)
            if work is not None and work.spec.tenant == spec.tenant:
                self._emit("modified", work)
            return True

    def service_pods(self, job_id: int, tenant: str) -> dict[str, int]:
        """Always empty: simulated replicas are counts on the workload, not pods placed on
        nodes, so there is nothing to count per node."""
        return {}

    def fail(self, job_id: int, message: str) -> None:
        """Fault injection: the workload's pods fail now (e.g. a node died under it)."""
        with self._lock:
            work = self._workloads[job_id]
            work.forced = ("failed", message)
            self._refresh(work)

    def count(self) -> int:
        with self._lock:
            return len(self._workloads)

    def job_ids(self) -> set[int]:
        with self._lock:
            return set(self._workloads)

    def _phase(self, work: _Workload) -> tuple[Phase, str]:
        if work.forced:
            return work.forced
        age = self.clock() - work.created_at
        if age < self.startup_s:
            return "pending", "pulling image (simulated)"
        if work.duration_s is not None and age >= self.startup_s + work.duration_s:
            return ("failed", "exit code 1 (simulated)") if work.fails else ("succeeded", "")
        return "running", ""

    def _status(self, work: _Workload) -> WorkloadStatus:
        phase, message = self._phase(work)
        n = work.spec.gang_size if work.scaled_to is None else work.scaled_to
        return WorkloadStatus(
            job_id=work.spec.job_id,
            kind=work.spec.kind,
            namespace=work.spec.namespace,
            name=work.spec.object_name,
            phase=phase,
            message=message,
            resource_version=str(work.resource_version),
            replicas_desired=n,
            replicas_pending=n if phase == "pending" else 0,
            replicas_running=n if phase == "running" else 0,
            replicas_succeeded=n if phase == "succeeded" else 0,
            replicas_failed=n if phase == "failed" else 0,
            revision=self.revisions.get(work.spec.job_id, 0),
        )

    def _emit(self, kind: str, work: _Workload) -> None:
        work.resource_version = next(self._rv)
        work.last_phase = self._phase(work)[0]
        if work.last_phase != "running":
            self._stop_notebook(work.spec.job_id)
        event = WatchEvent(kind, self._status(work), str(work.resource_version))  # type: ignore[arg-type]
        self._events.append(event)
        del self._events[: -self.history_limit]

    def _refresh(self, work: _Workload) -> None:
        if self._phase(work)[0] != work.last_phase:
            self._emit("modified", work)

    def list_status(self, namespace: str | None = None) -> tuple[list[WorkloadStatus], str]:
        with self._lock:
            for work in self._workloads.values():
                self._refresh(work)
            items = [
                self._status(w)
                for w in self._workloads.values()
                if namespace is None or w.spec.namespace == namespace
            ]
            rv = str(self._events[-1].resource_version) if self._events else "0"
            return items, rv

    def watch(
        self, resource_version: str, timeout_s: float, namespace: str | None = None
    ) -> _Stream:
        with self._lock:
            for work in self._workloads.values():
                self._refresh(work)
            after = int(resource_version or 0)
            if self._events and after and after < int(self._events[0].resource_version) - 1:
                raise ResyncRequired(f"resource version {after} is too old")
            events = [
                e
                for e in self._events
                if int(e.resource_version) > after
                and (namespace is None or e.status.namespace == namespace)
            ]
            last = events[-1].resource_version if events else (resource_version or "0")
            return _Stream(events, last)

    # ------------------------------------------------------------------ logs
    def read_logs(
        self, job_id: int, tenant: str, kind: WorkloadKind, *, since: float | None, limit: int
    ) -> list[LogLine]:
        """Simulated output (see ``simlogs``): every line is labelled as simulated."""
        with self._lock:
            work = self._workloads.get(job_id)
            if work is None or work.spec.tenant != tenant:
                return []
            end_at = None
            if work.duration_s is not None and work.forced is None:
                end_at = work.created_at + self.startup_s + work.duration_s
            rows = simulated_logs(
                work.spec,
                created_at=work.created_at,
                startup_s=self.startup_s,
                end_at=end_at,
                exit_code=1 if work.fails else 0,
                now=self.clock(),
                since=None if since is None else since - self._wall_offset,
                limit=limit,
            )
        return [LogLine(t + self._wall_offset, pod, text) for t, pod, text in rows]

    # ------------------------------------------------------------------ notebooks
    def notebook_endpoint(self, spec: WorkloadSpec) -> NotebookEndpoint:
        """Start (once) the local server of a running simulated notebook and say where it is."""
        with self._lock:
            work = self._workloads.get(spec.job_id)
            if work is None or work.spec.notebook is None:
                raise NotFoundError(f"notebook {spec.job_id} is not on the cluster", status=404)
            self._refresh(work)
            if work.last_phase != "running":
                raise NotFoundError(f"notebook {spec.job_id} is {work.last_phase}", status=404)
            server = self._notebook_servers.get(spec.job_id)
            if server is None:
                server = SimulatedNotebookServer(work.spec)
                self._notebook_servers[spec.job_id] = server
            return NotebookEndpoint(
                base_url=server.base_url,
                token=server.token,
                flavor=work.spec.notebook.flavor,
                simulated=True,
            )

    def notebook_server_count(self) -> int:
        with self._lock:
            return len(self._notebook_servers)

    def _stop_notebook(self, job_id: int) -> None:
        server = self._notebook_servers.pop(job_id, None)
        if server is not None:
            server.stop()

    # ------------------------------------------------------------------ nodes
    def cordon(self, node: str, reason: str) -> None:
        with self._lock:
            if node not in self.nodes:
                raise NotFoundError(f"node {node} not found", status=404)
            self._cordoned[node] = reason

    def uncordon(self, node: str) -> None:
        with self._lock:
            if node not in self.nodes:
                raise NotFoundError(f"node {node} not found", status=404)
            self._cordoned.pop(node, None)

    def drain(self, node: str) -> DrainResult:
        with self._lock:
            evicted = []
            for work in self._workloads.values():
                if any(node in g.node_names for g in work.spec.replica_groups):
                    work.forced = ("failed", f"evicted: node {node} drained")
                    self._refresh(work)
                    evicted.append(work.spec.object_name)
            return DrainResult(node=node, evicted=tuple(evicted), skipped=(), blocked=())

    def list_nodes(self) -> list[NodeInventory]:
        with self._lock:
            return [
                NodeInventory(
                    name=n.name,
                    labels=n.labels,
                    capacity=n.capacity,
                    allocatable=n.allocatable,
                    unschedulable=n.name in self._cordoned,
                    ready=n.ready,
                    cordon_reason=self._cordoned.get(n.name),
                )
                for n in self.nodes.values()
            ]

    # ------------------------------------------------------------------ tenancy
    def ensure_tenant(
        self, tenant: str, quota: Quantities, *, allow_ipc_lock: bool = False
    ) -> None:
        with self._lock:
            self.tenants[namespace_for(tenant)] = dict(quota)

    def ensure_queue(
        self,
        name: str,
        guarantee: Quantities,
        capability: Quantities,
        *,
        deserved: Quantities | None = None,
        reclaimable: bool = True,
        weight: int = 1,
    ) -> None:
        with self._lock:
            self.queues[name] = (dict(guarantee), dict(capability))

    def ensure_topology(self, topology: NetworkTopology) -> None:
        with self._lock:
            self.topology = topology

    @staticmethod
    def object_name(job_id: int, kind: WorkloadKind) -> str:
        return workload_name(job_id, kind)


class _Stream:
    def __init__(self, events: list[WatchEvent], resource_version: str) -> None:
        self._events: Iterator[WatchEvent] = iter(events)
        self._rv = resource_version

    @property
    def resource_version(self) -> str:
        return self._rv

    def __iter__(self) -> Iterator[WatchEvent]:
        return self

    def __next__(self) -> WatchEvent:
        return next(self._events)

    def close(self) -> None:
        self._events = iter(())

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _float(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def inventory(
    name: str, accelerator_resource: str, count: int, labels: Mapping[str, str]
) -> NodeInventory:
    quantities = {accelerator_resource: str(count), "cpu": "128", "memory": "1Ti"}
    return NodeInventory(
        name=name, labels=labels, capacity=quantities, allocatable=quantities,
        unschedulable=False, ready=True,
    )  # fmt: skip
