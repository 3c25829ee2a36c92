"""The one cluster interface, and the errors every implementation raises.

Callers (Celery tasks relaying outbox rows, the reconciler) program against ``ClusterBackend``.
Every method is idempotent, so a task may retry it after any ``TransientError``:

* ``TransientError``: the call may or may not have taken effect (429, 5xx, timeout, connection
  reset). Retry, after ``retry_after_s`` when given. A timeout is never reported as success.
* ``PermanentError``: retrying the same call will fail the same way (400, 403, 422, a name taken
  by an object we do not own). Mark the outbox row failed and tell a human.
* ``ResyncRequired``: a watch cursor expired (410 Gone). List again, then watch from the new
  cursor.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from types import TracebackType
from typing import Protocol, Self, runtime_checkable

from .spec import (
    ApplyResult,
    DrainResult,
    LogLine,
    NetworkTopology,
    NodeInventory,
    NotebookEndpoint,
    WatchEvent,
    WorkloadKind,
    WorkloadSpec,
    WorkloadStatus,
)

Quantities = Mapping[str, int | str]


class BackendError(Exception):
    """Base of every error a cluster backend raises; ``status`` is the HTTP status if any."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class TransientError(BackendError):
    """Retry later: 429, 5xx, timeouts, dropped connections. The outcome is unknown."""

    def __init__(
        self, message: str, *, status: int | None = None, retry_after_s: float | None = None
    ) -> None:
        super().__init__(message, status=status)
        self.retry_after_s = retry_after_s


class PermanentError(BackendError):
    """Do not retry unchanged: the request is invalid or forbidden (400, 401, 403, 422...)."""


class ConflictError(PermanentError):
    """The name is taken by an object that does not carry our job-id label (a foreign 409)."""


class NotFoundError(PermanentError):
    """The object the call needs (a node to cordon, say) does not exist."""


class ResyncRequired(BackendError):  # noqa: N818  # the name the interface promises
    """The watch cursor is too old (410 Gone): list again and watch from the new cursor."""


@runtime_checkable
class WatchStream(Protocol):
    """An iterator of ``WatchEvent`` that ends after the requested time.

    ``resource_version`` is the cursor to resume from; it also advances on bookmarks, so store it
    when the iteration ends. Iterating raises ``ResyncRequired`` or ``TransientError``.
    """

    @property
    def resource_version(self) -> str: ...

    def __iter__(self) -> Iterator[WatchEvent]: ...

    def __next__(self) -> WatchEvent: ...

    def close(self) -> None: ...

    def __enter__(self) -> Self: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...


@runtime_checkable
class ClusterBackend(Protocol):
    """Create, observe and remove workloads; manage nodes, tenants, queues and topology."""

    def apply(self, spec: WorkloadSpec) -> ApplyResult:
        """Create every object of the workload. Names derive from the job id, so a repeat is
        harmless: objects that exist with our job-id label count as success; an object of the
        same name without it raises ``ConflictError``."""
        ...

    def delete(self, job_id: int, tenant: str, kind: WorkloadKind) -> bool:
        """Delete the workload's objects; True if anything was deleted now. Missing is fine."""
        ...

    def delete_notebook_home(self, home_job_id: int, tenant: str) -> bool:
        """Delete the home volume notebook ``home_job_id`` created (its files are gone for
        good); True if it was there. The caller makes sure no notebook mounts it."""
        ...

    def list_status(self, namespace: str | None = None) -> tuple[list[WorkloadStatus], str]:
        """Status of every workload we manage (in one namespace, or all) and the cursor from
        which ``watch`` continues."""
        ...

    def watch(
        self, resource_version: str, timeout_s: float, namespace: str | None = None
    ) -> WatchStream:
        """Changes after the cursor for at most ``timeout_s`` seconds. An empty cursor starts
        with an ``added`` event for every existing workload."""
        ...

    def cordon(self, node: str, reason: str) -> None:
        """Mark the node unschedulable and record why."""
        ...

    def uncordon(self, node: str) -> None:
        """Make the node schedulable again and clear the recorded reason."""
        ...

    def drain(self, node: str) -> DrainResult:
        """Evict every pod on the node except DaemonSet and mirror pods. Whether a gang should
        be restarted elsewhere is decided above this layer."""
        ...

    def list_nodes(self) -> list[NodeInventory]:
        """Every node with its labels, capacity, allocatable resources and readiness."""
        ...

    def ensure_tenant(
        self, tenant: str, quota: Quantities, *, allow_ipc_lock: bool = False
    ) -> None:
        """Namespace ``zs-<tenant>`` with Pod Security "restricted" labels, a ResourceQuota and
        default-deny NetworkPolicies. ``allow_ipc_lock`` (operator-approved) relaxes the
        enforced Pod Security level so RDMA pods may add IPC_LOCK."""
        ...

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
        """Create or update a Volcano Queue."""
        ...

    def ensure_topology(self, topology: NetworkTopology) -> None:
        """Create or update one HyperNode per leaf switch, Scalable Unit and spine."""
        ...

    def notebook_endpoint(self, spec: WorkloadSpec) -> NotebookEndpoint:
        """Where the platform's proxy reaches the running notebook of ``spec`` and the token it
        signs in with. Raises ``NotFoundError`` when the backend knows the notebook is not
        serving (the caller checks the job's state first)."""
        ...

    def scale(
        self,
        job_id: int,
        tenant: str,
        replicas: int,
        node_names: Sequence[str] | None = None,
    ) -> None:
        """Set the replica count of the inference service ``job_id`` (its Deployment's
        ``scale`` subresource). Idempotent: the count is absolute. Raises ``NotFoundError``
        when the service is not on the cluster.

        ``node_names``, when given, is every node the service may run on from now: nodes new
        to the set admit replicas before the count changes; on a scale-down the replicas on
        nodes that leave the set are the ones removed. ``None`` leaves the nodes as they are."""
        ...

    def update_template(self, spec: WorkloadSpec) -> bool:
        """Bring the running inference Deployment's pod template, rollout strategy and progress
        deadline to ``spec`` (a new revision rolls its pods the Deployment's own way: at most
        maxSurge extra pods, at most maxUnavailable ready ones missing). ``spec.replicas``/the
        scale is never touched. True when a patch was sent. Raises ``NotFoundError`` when the
        Deployment is not there, ``ConflictError`` when it is not this job's."""
        ...

    def service_pods(self, job_id: int, tenant: str) -> dict[str, int]:
        """Node name -> how many of inference service ``job_id``'s pods are placed there and
        not terminating (pods without a node yet are not counted)."""
        ...

    def read_logs(
        self, job_id: int, tenant: str, kind: WorkloadKind, *, since: float | None, limit: int
    ) -> list[LogLine]:
        """Output lines of the workload's replicas written after ``since`` (epoch seconds;
        ``None``: from the start), oldest first, at most ``limit`` (the newest ones when there
        are more). Missing workloads give an empty list."""
        ...
