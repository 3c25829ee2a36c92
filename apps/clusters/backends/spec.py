"""Plain descriptions of workloads, statuses and nodes, independent of Kubernetes.

These frozen dataclasses are the vocabulary between the platform (Django models, the scheduling
core, Celery tasks) and a cluster backend. They import nothing from Django or Kubernetes so that
tasks, the simulator and tests can build them without settings. Every constructor validates its
input and raises ``ValueError``: an invalid spec never reaches a cluster.

Mapping fields (``env``, ``labels``, quantities) are stored as given; the dataclasses are frozen
but, because of them, not hashable.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, get_args

WorkloadKind = Literal["training", "notebook", "inference"]
TopologyMode = Literal["none", "soft", "hard"]
Phase = Literal["pending", "running", "succeeded", "failed", "unknown"]
NotebookFlavor = Literal["jupyter", "vscode"]
WatchEventType = Literal["added", "modified", "deleted"]

WORKLOAD_KINDS: tuple[WorkloadKind, ...] = get_args(WorkloadKind)
TOPOLOGY_MODES: tuple[TopologyMode, ...] = get_args(TopologyMode)
PHASES: tuple[Phase, ...] = get_args(Phase)
NOTEBOOK_FLAVORS: tuple[NotebookFlavor, ...] = get_args(NotebookFlavor)

PRIORITY_LEVELS = 6  # P0 (highest) .. P5 (lowest)

# Labels every object we create carries; the job-id label is how a 409 is told apart.
LABEL_MANAGED_BY = "app.kubernetes.io/managed-by"
MANAGED_BY_VALUE = "zhisuan"
LABEL_JOB_ID = "zhisuan.io/job-id"
LABEL_TENANT = "zhisuan.io/tenant"
LABEL_KIND = "zhisuan.io/kind"
LABEL_PRIORITY = "zhisuan.io/priority"
LABEL_POOL = "zhisuan.io/pool"
LABEL_GROUP = "zhisuan.io/replica-group"
ANNOTATION_NAME = "zhisuan.io/name"
ANNOTATION_CORDON_REASON = "zhisuan.io/cordon-reason"
RESERVED_LABEL_PREFIXES = ("zhisuan.io/", "app.kubernetes.io/managed-by")

NAMESPACE_PREFIX = "zs-"
_NAME_PREFIX = {"training": "zs-train-", "notebook": "zs-nb-", "inference": "zs-inf-"}

# \Z, not $: $ also matches before a trailing newline, which Kubernetes would refuse.
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
_ENV_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*\Z")
_LABEL_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\Z")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?\Z")
_RESOURCE_NAME = re.compile(
    r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?\Z"
)


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(message)


def is_dns_label(value: str, max_length: int = 63) -> bool:
    """Whether ``value`` is an RFC 1123 label (namespace, Service, task names)."""
    return len(value) <= max_length and bool(_DNS_LABEL.match(value))


def is_dns_subdomain(value: str) -> bool:
    """Whether ``value`` is an RFC 1123 subdomain (node and most object names)."""
    return len(value) <= 253 and bool(_DNS_SUBDOMAIN.match(value))


def is_label_key(key: str) -> bool:
    prefix, _, name = key.rpartition("/")
    if prefix and not is_dns_subdomain(prefix):
        return False
    return len(name) <= 63 and bool(_LABEL_NAME.match(name))


def is_label_value(value: str) -> bool:
    return len(value) <= 63 and bool(_LABEL_VALUE.match(value))


def is_resource_name(value: str) -> bool:
    """Whether ``value`` looks like a Kubernetes resource name (``cpu``, ``nvidia.com/gpu``)."""
    return bool(_RESOURCE_NAME.match(value))


_LABEL_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def label_safe(value: str) -> str:
    """``value`` made into a valid label value (pool names may hold spaces, non-ASCII...)."""
    cleaned = _LABEL_UNSAFE.sub("-", value)[:63]
    return re.sub(r"^[^A-Za-z0-9]+|[^A-Za-z0-9]+$", "", cleaned)


def namespace_for(tenant: str) -> str:
    """The namespace of a tenant: ``zs-<slug>``."""
    _require(is_dns_label(tenant, 63 - len(NAMESPACE_PREFIX)), f"invalid tenant slug {tenant!r}")
    return NAMESPACE_PREFIX + tenant


def workload_name(job_id: int, kind: WorkloadKind) -> str:
    """The name of the primary object of a job: derived from the id only, so repeats collide."""
    _require(kind in WORKLOAD_KINDS, f"unknown workload kind {kind!r}")
    _require(job_id > 0, "job_id must be positive")
    return f"{_NAME_PREFIX[kind]}{job_id}"


def priority_class_name(priority: int) -> str:
    """``zhisuan-p0`` .. ``zhisuan-p5``."""
    _require(0 <= priority < PRIORITY_LEVELS, f"priority must be 0..5, got {priority}")
    return f"zhisuan-p{priority}"


@dataclass(frozen=True)
class VolumeMount:
    """A PersistentVolumeClaim of the tenant mounted into every replica."""

    name: str
    claim_name: str
    mount_path: str
    read_only: bool = False
    sub_path: str = ""

    def __post_init__(self) -> None:
        _require(is_dns_label(self.name), f"invalid volume name {self.name!r}")
        _require(is_dns_subdomain(self.claim_name), f"invalid claim name {self.claim_name!r}")
        _require(
            self.mount_path.startswith("/") and ":" not in self.mount_path,
            f"mount path must be absolute without ':', got {self.mount_path!r}",
        )
        _require(not self.sub_path.startswith("/"), "sub_path must be relative")


@dataclass(frozen=True)
class ReplicaGroup:
    """One role of a workload (``master``, ``worker``, ``notebook``, ``server``).

    ``accelerators`` whole devices of ``accelerator_resource`` per replica, or a fractional share
    ``accelerator_milli`` (1..999 thousandths of one device; then ``accelerators`` is 0).
    ``node_names`` is the placement our scheduling core decided: the replicas are confined to
    these nodes (required node affinity); empty leaves the choice to Volcano. ``image`` may be
    empty only for notebooks (the flavor's default image).
    """

    name: str
    replicas: int
    image: str
    command: tuple[str, ...] = ()
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    accelerators: int = 0
    accelerator_milli: int | None = None
    accelerator_resource: str = "nvidia.com/gpu"
    cpu_milli: int = 1000
    memory_mib: int = 1024
    rdma_nics: int = 0
    node_names: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _require(is_dns_label(self.name, 40), f"invalid replica group name {self.name!r}")
        _require(self.replicas >= 1, f"group {self.name}: replicas must be >= 1")
        _require(self.accelerators >= 0, f"group {self.name}: accelerators must be >= 0")
        if self.accelerator_milli is not None:
            _require(
                0 < self.accelerator_milli < 1000,
                f"group {self.name}: accelerator_milli must be 1..999",
            )
            _require(
                self.accelerators == 0,
                f"group {self.name}: a fractional share excludes whole accelerators",
            )
        _require(
            is_resource_name(self.accelerator_resource),
            f"group {self.name}: invalid accelerator resource {self.accelerator_resource!r}",
        )
        _require(self.cpu_milli > 0, f"group {self.name}: cpu_milli must be > 0")
        _require(self.memory_mib > 0, f"group {self.name}: memory_mib must be > 0")
        _require(self.rdma_nics >= 0, f"group {self.name}: rdma_nics must be >= 0")
        for env_name in self.env:
            _require(bool(_ENV_NAME.match(env_name)), f"invalid env var name {env_name!r}")
        for node in self.node_names:
            _require(is_dns_subdomain(node), f"invalid node name {node!r}")


# A notebook's home volume when its submitter names no size (the API's default too).
DEFAULT_NOTEBOOK_STORAGE_GIB = 20


@dataclass(frozen=True)
class NotebookSpec:
    """A browser IDE: JupyterLab or code-server, protected by ``token``.

    ``home_job_id`` names the earlier notebook whose home volume this one mounts (a restart
    that keeps the files); ``None`` creates a new volume of ``storage_gib``."""

    flavor: NotebookFlavor
    token: str = field(repr=False)
    storage_gib: int = DEFAULT_NOTEBOOK_STORAGE_GIB
    storage_class: str | None = None
    home_job_id: int | None = None

    def __post_init__(self) -> None:
        _require(self.flavor in NOTEBOOK_FLAVORS, f"unknown notebook flavor {self.flavor!r}")
        _require(len(self.token) >= 16, "notebook token must have at least 16 characters")
        _require(self.storage_gib >= 1, "storage_gib must be >= 1")
        _require(self.home_job_id is None or self.home_job_id >= 1, "home_job_id must be a job id")


@dataclass(frozen=True)
class NotebookEndpoint:
    """Where the platform's notebook proxy reaches a running notebook, and how it signs in.

    ``base_url`` ends with ``/``; the proxy appends the path below ``/notebooks/<job id>/``.
    ``token`` never leaves the platform: the proxy sends it upstream as
    ``Authorization: token <token>`` (Jupyter's header, which the simulated notebook also
    accepts) or, for code-server, logs in with it once and keeps the session cookie.
    """

    base_url: str
    token: str = field(repr=False)
    flavor: NotebookFlavor = "jupyter"
    simulated: bool = False

    def __post_init__(self) -> None:
        _require(
            self.base_url.startswith(("http://", "https://")) and self.base_url.endswith("/"),
            f"notebook base_url must be an http(s) URL ending with '/': {self.base_url!r}",
        )
        _require(self.flavor in NOTEBOOK_FLAVORS, f"unknown notebook flavor {self.flavor!r}")


@dataclass(frozen=True)
class InferenceSpec:
    """An online model service: ``replicas`` pods (this count, not the replica group's) behind
    a Service on ``port``; a pod receives traffic once ``readiness_path`` answers and is
    restarted when ``liveness_path`` stops answering. A rollout adds at most ``max_surge`` pods
    and removes at most ``max_unavailable`` ready ones at a time. ``startup_timeout_s`` is how
    long a new pod may take to load its model before liveness checks begin. ``revision`` counts
    the service's versions (image, model): a new one changes the pod template, which rolls
    the pods."""

    port: int = 8000
    replicas: int = 1
    readiness_path: str = "/health"
    liveness_path: str = "/health"
    probe_initial_delay_s: int = 30
    probe_period_s: int = 10
    max_surge: int = 1
    max_unavailable: int = 0
    startup_timeout_s: int = 900
    revision: int = 1

    def __post_init__(self) -> None:
        _require(0 < self.port < 65536, "port must be 1..65535")
        _require(self.replicas >= 1, "replicas must be >= 1")
        _require(self.readiness_path.startswith("/"), "readiness_path must start with '/'")
        _require(self.liveness_path.startswith("/"), "liveness_path must start with '/'")
        _require(self.probe_initial_delay_s >= 0, "probe_initial_delay_s must be >= 0")
        _require(self.probe_period_s >= 1, "probe_period_s must be >= 1")
        _require(self.max_surge >= 0 and self.max_unavailable >= 0, "surge must be >= 0")
        # The Deployment API rejects a rollout that may neither add nor remove a pod.
        _require(
            self.max_surge > 0 or self.max_unavailable > 0,
            "max_surge and max_unavailable cannot both be 0",
        )
        _require(self.startup_timeout_s >= self.probe_period_s, "startup_timeout_s too short")
        _require(self.revision >= 1, "revision must be >= 1")


@dataclass(frozen=True)
class WorkloadSpec:
    """Everything a backend needs to run one job, already admitted and placed by our core."""

    job_id: int
    name: str
    tenant: str
    kind: WorkloadKind
    priority: int
    pool: str
    queue: str
    replica_groups: tuple[ReplicaGroup, ...]
    topology_mode: TopologyMode = "none"
    topology_highest_tier: int | None = None
    max_retry: int = 3
    volumes: tuple[VolumeMount, ...] = ()
    labels: Mapping[str, str] = field(default_factory=dict)
    notebook: NotebookSpec | None = None
    inference: InferenceSpec | None = None
    # Operator-approved exception: add the IPC_LOCK capability to RDMA replicas. It breaks the
    # Pod Security "restricted" profile, so the tenant namespace must also have been ensured with
    # allow_ipc_lock=True. Off by default; prefer an unlimited memlock limit in the runtime.
    allow_ipc_lock: bool = False

    def __post_init__(self) -> None:
        _require(self.job_id > 0, "job_id must be positive")
        _require(bool(self.name), "name must not be empty")
        namespace_for(self.tenant)
        _require(self.kind in WORKLOAD_KINDS, f"unknown workload kind {self.kind!r}")
        priority_class_name(self.priority)
        _require(bool(self.pool.strip()), "pool must not be empty")
        _require(is_dns_subdomain(self.queue), f"invalid queue name {self.queue!r}")
        _require(len(self.replica_groups) >= 1, "at least one replica group is required")
        names = [group.name for group in self.replica_groups]
        _require(len(set(names)) == len(names), f"replica group names must be unique: {names}")
        _require(
            self.topology_mode in TOPOLOGY_MODES, f"unknown topology mode {self.topology_mode!r}"
        )
        if self.topology_highest_tier is not None:
            _require(self.topology_highest_tier >= 1, "topology_highest_tier must be >= 1")
        _require(self.max_retry >= 0, "max_retry must be >= 0")
        volume_names = [volume.name for volume in self.volumes]
        _require(len(set(volume_names)) == len(volume_names), "volume names must be unique")
        for key, value in self.labels.items():
            _require(is_label_key(key), f"invalid label key {key!r}")
            _require(is_label_value(value), f"invalid label value {value!r} for {key!r}")
            _require(not key.startswith(RESERVED_LABEL_PREFIXES), f"label {key!r} is reserved")
        if self.kind != "notebook":
            for group in self.replica_groups:
                _require(bool(group.image), f"group {group.name}: image is required")
        if self.kind == "notebook":
            _require(self.notebook is not None, "a notebook needs a NotebookSpec")
            _require(
                len(self.replica_groups) == 1 and self.replica_groups[0].replicas == 1,
                "a notebook has exactly one group with one replica",
            )
        else:
            _require(self.notebook is None, "only notebooks take a NotebookSpec")
        if self.kind == "inference":
            _require(self.inference is not None, "an inference service needs an InferenceSpec")
            _require(len(self.replica_groups) == 1, "an inference service has exactly one group")
        else:
            _require(self.inference is None, "only inference services take an InferenceSpec")

    @property
    def namespace(self) -> str:
        return namespace_for(self.tenant)

    @property
    def object_name(self) -> str:
        return workload_name(self.job_id, self.kind)

    @property
    def gang_size(self) -> int:
        """How many pods must be placed together (all of them: gang scheduling)."""
        return sum(group.replicas for group in self.replica_groups)

    @property
    def priority_class(self) -> str:
        return priority_class_name(self.priority)


@dataclass(frozen=True)
class WorkloadStatus:
    """What the cluster reports for one job, mapped onto our five phases.

    Inference services also report their rollout: ``revision`` is the one the pod template
    carries (0: unknown), ``replicas_updated`` how many pods run that template, ``rolled_out``
    whether the rollout (or scale) is complete (every wanted pod updated and available, no old
    pod left), ``rollout_failed`` whether it passed its progress deadline while older pods
    still serve (the phase then stays ``running``). Other kinds keep the defaults."""

    job_id: int
    kind: WorkloadKind
    namespace: str
    name: str
    phase: Phase
    message: str = ""
    resource_version: str = ""
    replicas_desired: int = 0
    replicas_pending: int = 0
    replicas_running: int = 0
    replicas_succeeded: int = 0
    replicas_failed: int = 0
    retry_count: int = 0
    replicas_updated: int = 0
    revision: int = 0
    rolled_out: bool = True
    rollout_failed: bool = False

    @property
    def tenant(self) -> str:
        return self.namespace.removeprefix(NAMESPACE_PREFIX)


@dataclass(frozen=True)
class WatchEvent:
    """One change seen by ``watch``; ``resource_version`` is the cursor to resume after it."""

    type: WatchEventType
    status: WorkloadStatus
    resource_version: str


@dataclass(frozen=True)
class NodeInventory:
    """A node as the cluster reports it. Quantities are Kubernetes quantity strings."""

    name: str
    labels: Mapping[str, str]
    capacity: Mapping[str, str]
    allocatable: Mapping[str, str]
    unschedulable: bool
    ready: bool
    cordon_reason: str | None = None

    def allocatable_count(self, resource: str) -> int:
        """Whole units of a countable resource (GPUs, NPUs, NICs); 0 when absent."""
        return _count(self.allocatable.get(resource))

    def capacity_count(self, resource: str) -> int:
        return _count(self.capacity.get(resource))


def _count(quantity: str | None) -> int:
    if quantity is None:
        return 0
    try:
        return int(quantity)
    except ValueError:
        return 0


@dataclass(frozen=True)
class ObjectRef:
    """One Kubernetes object a backend created or found."""

    api_version: str
    kind: str
    namespace: str | None
    name: str


@dataclass(frozen=True)
class ApplyResult:
    """``created`` is False when every object already existed and carried our job-id label."""

    job_id: int
    created: bool
    objects: tuple[ObjectRef, ...]


@dataclass(frozen=True)
class DrainResult:
    """Pods evicted, skipped (DaemonSet and mirror pods) and blocked (a disruption budget said
    not now); call ``drain`` again while ``complete`` is False."""

    node: str
    evicted: tuple[str, ...]
    skipped: tuple[str, ...]
    blocked: tuple[str, ...]

    @property
    def complete(self) -> bool:
        return not self.blocked


@dataclass(frozen=True)
class LeafSwitch:
    """Tier 1 of the fabric: the servers under one leaf switch."""

    name: str
    nodes: tuple[str, ...]

    def __post_init__(self) -> None:
        _require(bool(self.nodes), f"leaf {self.name} has no nodes")
        for node in self.nodes:
            _require(is_dns_subdomain(node), f"invalid node name {node!r}")


@dataclass(frozen=True)
class ScalableUnit:
    """Tier 2: a Scalable Unit, a set of leaf switches."""

    name: str
    leaves: tuple[LeafSwitch, ...]

    def __post_init__(self) -> None:
        _require(bool(self.leaves), f"scalable unit {self.name} has no leaves")


@dataclass(frozen=True)
class Spine:
    """Tier 3: the spine layer joining Scalable Units."""

    name: str
    units: tuple[ScalableUnit, ...]

    def __post_init__(self) -> None:
        _require(bool(self.units), f"spine {self.name} has no scalable units")


@dataclass(frozen=True)
class NetworkTopology:
    """The fabric of one cluster, as our topology model knows it."""

    spines: tuple[Spine, ...]

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for spine in self.spines:
            for unit in spine.units:
                for leaf in unit.leaves:
                    for node in leaf.nodes:
                        _require(node not in seen, f"node {node} is under two leaves")
                        seen.add(node)


@dataclass(frozen=True)
class LogLine:
    """One line of a workload's output: when (epoch seconds), which replica (pod), what."""

    ts: float
    replica: str
    text: str
