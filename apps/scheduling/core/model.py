"""Records that go into and come out of the scheduling core.

Everything here is a frozen dataclass of plain values so the same core runs in the web
app (fed by a Django adapter), in the simulator and in the benchmarks. The core never
mutates these records; it builds its own mutable index from them (see ``index.py``).

Units: accelerators are counted in whole devices in the input; internally and in quotas
fractional shares are counted in milli-devices (1 device = 1000 milli). CPU is in
millicores and memory in MiB, as Kubernetes reports them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import IntEnum, StrEnum

from .text import Phrase, Text

FULL_DEVICE_MILLI = 1000
"""A whole device expressed in milli-devices; fractional shares are strictly below it."""

PRIORITIES = range(6)
"""P0 (highest) .. P5 (lowest)."""

HIGHEST_PREEMPTOR = 2
"""Only P0-P2 preempt (``preemption.py`` has the product's rules)."""

LOWEST_VICTIM = 4
"""Only P4/P5 work is ever preempted."""


class Tier(IntEnum):
    """Network topology tiers, from the tightest (one server) to no constraint at all.

    Ordered so that ``tier <= max_tier`` means "at least as tight as allowed".
    """

    NODE = 0
    LEAF = 1
    SU = 2
    SPINE = 3
    ANY = 4


class TopologyMode(StrEnum):
    """How a job's replicas must be kept together on the network."""

    NONE = "none"
    SOFT = "soft"  # prefer the tightest tier, fall back to looser ones
    HARD = "hard"  # never cross ``TopologyRequirement.max_tier``


class Packing(StrEnum):
    """Node choice: binpack keeps whole nodes free, spread is the baseline to compare with.

    ``best_fit`` and ``fragmentation`` are binpack for gangs. For a job of one replica,
    ``best_fit`` picks the node, over all compatible models, left with the least free CPU and
    accelerators (equal weights); ``fragmentation`` picks the
    node (and shared device) whose placement least increases the expected fragmentation of
    the cluster for the mix of task shapes in ``Policy.workload_profile`` (fragmentation
    gradient descent, Weng et al., USENIX ATC 2023).
    """

    BINPACK = "binpack"
    SPREAD = "spread"
    BEST_FIT = "best_fit"
    FRAGMENTATION = "fragmentation"


class PendingCode(StrEnum):
    """Machine-readable category of a pending reason (the UI groups and filters by it)."""

    INVALID = "invalid"
    NO_MATCH = "no_match"
    QUOTA = "quota"
    CAPACITY = "capacity"
    TOPOLOGY = "topology"
    RESOURCES = "resources"
    HELD = "held"
    RESERVED = "reserved"
    BLOCKED = "blocked"
    PARTIAL = "partial"
    SHARING_DISABLED = "sharing_disabled"
    AFTER = "after"  # waits for other jobs to succeed first (``PendingJob.after``)


class PreemptionKind(StrEnum):
    PRIORITY = (
        "priority"  # a P0-P2 job evicting P4/P5 work of its own tenant (or any, without quotas)
    )
    RECLAIM = "reclaim"  # a tenant within guarantee taking back capacity another tenant borrowed


# --------------------------------------------------------------------------- inputs


@dataclass(frozen=True, slots=True)
class Pool:
    """A resource pool; nodes name their pool by ``pool_id``."""

    pool_id: str
    name: str = ""


@dataclass(frozen=True, slots=True)
class Node:
    """One server as the scheduler sees it.

    ``free_devices`` lists the device indices that are neither allocated nor broken; when it is
    ``None`` every index in ``range(accelerator_count)`` not used by a running allocation is
    free. A device listed as free but also used by a running allocation counts as used.
    ``cpu_milli``/``memory_mib`` are allocatable totals; running allocations are subtracted.
    """

    node_id: str
    pool: str
    accelerator_model: str = ""
    accelerator_vendor: str = ""
    accelerator_count: int = 0
    free_devices: frozenset[int] | None = None
    cpu_milli: int = 0
    memory_mib: int = 0
    arch: str = "x86_64"
    labels: Mapping[str, str] = field(default_factory=dict)
    healthy: bool = True
    cordoned: bool = False
    scalable_unit: str = ""
    leaf_switch: str = ""
    spine: str = ""


@dataclass(frozen=True, slots=True)
class DeviceShare:
    """A fractional share of one device, in milli-devices (0 < milli < 1000)."""

    device: int
    milli: int


@dataclass(frozen=True, slots=True)
class NodeAllocation:
    """What one running job holds on one node."""

    node_id: str
    devices: tuple[int, ...] = ()
    shares: tuple[DeviceShare, ...] = ()
    cpu_milli: int = 0
    memory_mib: int = 0


@dataclass(frozen=True, slots=True)
class RunningJob:
    """Work that already holds resources; a preemption victim is always a whole RunningJob."""

    job_id: str
    tenant: str
    pool: str
    priority: int
    started_at: datetime
    allocations: tuple[NodeAllocation, ...] = ()
    preemptible: bool = True
    # When it is expected to end (a declared runtime); None: unknown or runs until stopped.
    # Only used to choose which nodes to hold for a starving job (they drain soonest).
    expected_end: datetime | None = None


@dataclass(frozen=True, slots=True)
class Quota:
    """Per tenant x pool x accelerator model: a guarantee and how much more may be borrowed.

    The tenant may hold at most ``guarantee + borrow_limit`` devices of that model in that
    pool. Work above ``guarantee`` is borrowed and can be reclaimed by lenders.
    """

    tenant: str
    pool: str
    accelerator_model: str
    guarantee: int
    borrow_limit: int = 0


@dataclass(frozen=True, slots=True)
class ReplicaGroup:
    """A set of identical replicas (e.g. "master" x1, "worker" x16).

    Exactly one of ``accelerators`` (whole devices per replica, on one node) or
    ``accelerator_milli`` (a fractional share of one device) may be non-zero; both zero means
    a CPU-only replica. An empty ``models`` accepts any model.
    """

    name: str
    replicas: int
    accelerators: int = 0
    accelerator_milli: int = 0
    models: frozenset[str] = frozenset()
    vendor: str | None = None
    arch: str | None = None
    cpu_milli: int = 0
    memory_mib: int = 0
    node_selector: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class TopologyRequirement:
    mode: TopologyMode = TopologyMode.NONE
    max_tier: Tier = Tier.SPINE


@dataclass(frozen=True, slots=True)
class PendingJob:
    """A job waiting in the queue. ``priority`` is 0..5 for P0..P5."""

    job_id: str
    tenant: str
    pool: str
    priority: int
    groups: tuple[ReplicaGroup, ...]
    submit_time: datetime
    topology: TopologyRequirement = TopologyRequirement()
    max_wait: timedelta | None = None
    # How long it is expected to run once started (a declared runtime); None: unknown.
    expected_runtime: timedelta | None = None
    # Jobs that must succeed before this one may start, those not yet succeeded (the
    # platform drops each as it succeeds); the job is not placed while any is left.
    after: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Reservation:
    """Nodes held for a starving large job; also fed back in the next snapshot for stability.

    Lower-or-equal priority jobs may not take free devices on these nodes until
    ``expires_at``; higher-priority jobs still may (priority keeps its meaning).
    """

    job_id: str
    priority: int
    node_ids: tuple[str, ...]
    expires_at: datetime
    reason: str = ""
    # A planned large gang's fair-share target (``Policy.plan_large``, ``plan.py``), kept
    # from the cycle that first planned it so its place in the plan does not drift.
    deadline: datetime | None = None


@dataclass(frozen=True, slots=True)
class ClusterSnapshot:
    nodes: tuple[Node, ...]
    running: tuple[RunningJob, ...] = ()
    quotas: tuple[Quota, ...] = ()
    pools: tuple[Pool, ...] = ()
    reservations: tuple[Reservation, ...] = ()


@dataclass(frozen=True, slots=True)
class TaskShape:
    """One kind of task in the expected workload mix, for fragmentation-aware packing.

    ``accelerators`` whole devices or a ``milli`` share of one (both zero: CPU only), with
    ``weight`` its share of tasks (weights need not sum to 1). An empty ``models`` fits any.
    """

    accelerators: int = 0
    milli: int = 0
    cpu_milli: int = 0
    memory_mib: int = 0
    models: frozenset[str] = frozenset()
    weight: float = 1.0


@dataclass(frozen=True, slots=True)
class Policy:
    """Switches and parameters, one group per policy. Defaults are the production settings.

    Invariants that are not switchable, because the product defines them: P3 never preempts
    and is never preempted, P4/P5 never preempt, only P4/P5 can be victims, a victim always has
    a strictly lower priority than its preemptor, hard topology is never crossed, and model,
    vendor and architecture constraints always hold.
    """

    gang: bool = True
    packing: Packing = Packing.BINPACK
    preemption: bool = True
    preemptor_max_priority: int = 2  # clamped to 2
    victim_min_priority: int = 4  # clamped to >= 4
    max_preemption_trials: int = 64
    topology: bool = True  # off: "soft" requirements are ignored; "hard" still holds
    delay_scheduling: bool = True
    large_job_devices: int = 16
    starvation_threshold: timedelta = timedelta(minutes=30)
    max_hold: timedelta = timedelta(hours=2)
    max_holds: int = 1  # like Volcano's reservation: one elected job at a time
    # Soft topology: for this long after submission a multi-replica job only takes the
    # tightest tier that could ever host it (one leaf if it fits in one), then any tier.
    # Zero: fall back at once.
    topology_patience: timedelta = timedelta(0)
    # Gangs of at least ``large_patience_devices`` devices wait ``large_topology_patience``
    # instead (None: the same as everyone). A gang that big rarely finds its tightest domain
    # empty, and its own wait is what fairness is judged on: a shorter patience keeps the
    # topology preference from making it wait longer than its share of the turnover would.
    large_topology_patience: timedelta | None = None
    large_patience_devices: int = 256
    # Gangs of at least ``large_patience_devices`` start holding nodes (delay scheduling)
    # after this instead of ``starvation_threshold`` (None: the same threshold). Zero: at
    # once, so a gang that needs a whole leaf starts draining the leaf that empties soonest
    # from its first cycle instead of after half an hour.
    large_starvation_threshold: timedelta | None = None
    # With declared runtimes: a soft-topology gang whose held nodes lie in its tightest
    # tier keeps waiting for them past its topology patience while they are expected to be
    # free within this long (zero: off). It then starts in one domain when they drain,
    # instead of on scattered free nodes at once.
    drain_wait: timedelta = timedelta(0)
    # With ``drain_wait``: a gang that could start now on looser-tier nodes waits for its
    # draining held nodes only this long (None: ``drain_wait`` in every case). The tight
    # placement is worth a long wait only when the alternative is waiting anyway.
    placeable_drain_wait: timedelta | None = None
    # A starving P0-P2 job that its own tenant's borrowing limit blocks still holds nodes
    # when the tenant's own lower-priority P4/P5 work covers the room it lacks: once the
    # nodes drain it preempts that work for the room. Off: it waits for the room first and
    # only then starts draining nodes, two waits one after the other.
    hold_while_quota_blocked: bool = False
    # Gangs of ``large_patience_devices`` or more keep their tenant's quota room from their
    # starvation threshold until they start, not only during their hold window: after the
    # window, later jobs of the same priority would otherwise take every room that frees.
    quota_hold_until_start: bool = False
    # The quota room kept for such a gang is lent only to work it may preempt back (P4/P5
    # under a P0-P2 gang) or that is declared to end within ``quota_room_backfill`` (it
    # gives the room back before long), whatever its size. Off: only the tenant's other
    # gangs of ``large_job_devices`` or more are kept out of it.
    lend_quota_room_to_preemptible: bool = False
    quota_room_backfill: timedelta = timedelta(hours=1)
    # With declared runtimes: free devices on nodes held for another job also go to work
    # declared to end before the held nodes are expected to drain (EASY backfill's shadow
    # time): it gives the devices back before the holder could start, so the hold costs the
    # others less and delays the holder not at all.
    hold_backfill: bool = False
    # A starving large gang that waits for nodes (not for quota room) keeps the quota room
    # it needs from its tenant's later work: otherwise that work takes the room while the
    # gang's nodes drain, and the gang then waits for room after the nodes are free.
    keep_room_while_held: bool = False
    # With declared runtimes: every queued P0-P2 gang of ``large_patience_devices`` or more
    # gets a planned start and the nodes it will start on, in order of its fair-share
    # target (conservative backfilling, ``plan.py``); free devices on those nodes go only
    # to it or to work declared to end before its start, and its tenant's other long work
    # leaves it the quota room it needs then. Its delay-scheduling hold is replaced. An
    # experiment, off in every preset: smaller jobs wait far longer under it
    # (docs/benchmarks.md, sixteenth round; the simulator's ``ours-plan``). The product
    # runs presets only, and its stored holds do not keep ``Reservation.deadline``.
    plan_large: bool = False
    # A planned gang takes the tightest tier whose earliest start is at most this much
    # later than the earliest start in any tier.
    plan_topology_slack: timedelta = timedelta(hours=1)
    quotas: bool = True
    reclaim: bool = True
    fair_share: bool = True
    # With ``fair_share``: tenants before priorities, inside a priority band (P0-P2, P3,
    # P4/P5): the tenant with the smallest share of its guarantee is served first, and a
    # tenant's own jobs go by priority. As Kueue's fair sharing and Volcano's queue order do,
    # a borrowing tenant's P1 work no longer goes ahead of a P2 job of a tenant below its
    # share. Off: priority first across tenants, fair share only within one priority.
    tenant_first: bool = False
    sharing: bool = True
    backfill: bool = True
    fragmentation_replica_size: int = 8
    # Packing.FRAGMENTATION: the expected mix of task shapes. Empty: the shapes of the jobs
    # in the snapshot and the queue, each counted once per replica.
    workload_profile: tuple[TaskShape, ...] = ()


# -------------------------------------------------------------------------- outputs


@dataclass(frozen=True, slots=True)
class ReplicaPlacement:
    """One replica on one node: whole ``devices``, or ``share_milli`` of ``devices[0]``."""

    group: str
    replica_index: int
    node_id: str
    devices: tuple[int, ...]
    share_milli: int = 0
    cpu_milli: int = 0
    memory_mib: int = 0


@dataclass(frozen=True, slots=True)
class Placement:
    """Every replica of a job (or, with gang off, the replicas that fit: ``partial``).

    ``waits_for`` names preemption victims on the same nodes: their pods must be gone before
    this job's pods start. ``tier`` is the tightest tier that contains all replicas.
    """

    job_id: str
    tenant: str
    pool: str
    accelerator_model: str
    replicas: tuple[ReplicaPlacement, ...]
    tier: Tier
    waits_for: tuple[str, ...] = ()
    partial: bool = False


@dataclass(frozen=True, slots=True)
class Preemption:
    victim_job_id: str
    victim_tenant: str
    preemptor_job_id: str
    kind: PreemptionKind
    reason: Phrase


@dataclass(frozen=True, slots=True)
class PendingReason:
    job_id: str
    code: PendingCode
    text: Text
    over_max_wait: bool = False

    @property
    def message(self) -> str:
        """The reason in English (the API's ``pending_message``, the CLI, logs)."""
        return str(self.text)


@dataclass(frozen=True, slots=True)
class Fragmentation:
    """Free devices that cannot host a ``replica_size``-device replica are stranded.

    In a class of nodes smaller than ``replica_size`` the threshold is the largest node size
    (a node can at best host a whole-node replica). ``whole_free_nodes`` counts the largest
    nodes of each class with every device free.
    """

    replica_size: int
    free_devices: int
    stranded_devices: int
    whole_free_nodes: int
    hostable_replicas: int

    @property
    def stranded_ratio(self) -> float:
        return self.stranded_devices / self.free_devices if self.free_devices else 0.0


@dataclass(frozen=True, slots=True)
class Decisions:
    placements: tuple[Placement, ...]
    preemptions: tuple[Preemption, ...]
    reservations: tuple[Reservation, ...]
    pending: tuple[PendingReason, ...]
    fragmentation: Fragmentation
    warnings: tuple[str, ...] = ()
