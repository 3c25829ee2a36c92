"""What a simulation replays: a cluster, jobs with arrival times and durations, quotas."""

from __future__ import annotations

from dataclasses import dataclass, field

from apps.scheduling.core import (
    FULL_DEVICE_MILLI,
    Node,
    Pool,
    Quota,
    ReplicaGroup,
    TopologyRequirement,
)

NO_TOPOLOGY = TopologyRequirement()

PART_MARK = "~"
"""The core knows a job's runs after the first (after a preemption or a failure, or the
replicas left to place) as ``<job id>~<n>``; no job id of a workload may contain it."""


@dataclass(frozen=True, slots=True)
class SimJob:
    """One job of a workload. Times are seconds of virtual time from the start of the run.

    ``duration`` is the work the job needs once running (``None``: it runs until the end of
    the run, like a notebook or an inference service). After a preemption or a node failure
    the job resumes from its last checkpoint (every ``checkpoint_interval`` seconds of work;
    ``None``: from scratch) after ``restart_cost`` seconds of start-up. ``runtime_limit``:
    the most a run of the job may last, start-up included, as its owner declared it (the
    product's ``max_runtime_s``); a run ends there at the latest. ``None``: undeclared.
    ``after``: ids of jobs of the workload that must complete before this one joins the queue
    (a pipeline step, the product's ``Job.after``); it joins when the last of them completes,
    and its wait runs from then, as the product's max wait runs from ``released_at``. A run
    stopped at its runtime limit has failed (the product fails it), and the jobs after it
    never join.
    """

    job_id: str
    submit: float
    tenant: str
    pool: str
    priority: int
    groups: tuple[ReplicaGroup, ...]
    duration: float | None = None
    topology: TopologyRequirement = NO_TOPOLOGY
    kind: str = "task"
    max_wait: float | None = None
    checkpoint_interval: float | None = None
    restart_cost: float = 0.0
    runtime_limit: float | None = None
    after: tuple[str, ...] = ()

    @property
    def milli(self) -> int:
        """Accelerator demand in milli-devices."""
        return sum(
            g.replicas * (g.accelerators * FULL_DEVICE_MILLI + g.accelerator_milli)
            for g in self.groups
        )

    @property
    def gpus(self) -> float:
        return self.milli / FULL_DEVICE_MILLI

    @property
    def replicas(self) -> int:
        return sum(g.replicas for g in self.groups)


@dataclass(frozen=True, slots=True)
class NodeFailure:
    """A node leaves service at ``time`` and is back ``repair`` s later.

    ``drain_after``: seconds after ``time`` at which the jobs running on it are stopped and
    requeued: 0, at once (a hardware failure); ``None``, never (a cordon: the node takes no
    new work while its running work goes on). The what-if replay gives a cordon that was
    later escalated to a drain the seconds in between.
    """

    time: float
    node_id: str
    repair: float
    drain_after: float | None = 0.0


@dataclass(frozen=True, slots=True)
class Workload:
    """A cluster and the jobs to replay on it.

    ``one_shot``: every job gets exactly one scheduling attempt, at its arrival, and is
    dropped if it does not fit; this is the methodology of the "Beware of Fragmentation"
    experiments (tasks never leave; the cluster fills until it saturates).
    ``horizon``: stop at this time (``None``: when no event is left).
    ``measure_until``: the end of the measurement window (``None``: the last arrival).
    ``exact_runtimes``: the scheduler is told each job's real remaining run time as its
    declared runtime (what perfect estimates would give); otherwise only the jobs'
    ``runtime_limit`` (what the product's scheduler knows).
    """

    name: str
    nodes: tuple[Node, ...]
    jobs: tuple[SimJob, ...]
    quotas: tuple[Quota, ...] = ()
    pools: tuple[Pool, ...] = ()
    failures: tuple[NodeFailure, ...] = ()
    one_shot: bool = False
    horizon: float | None = None
    warmup: float = 0.0
    measure_until: float | None = None
    exact_runtimes: bool = True
    meta: dict[str, object] = field(default_factory=dict)

    @property
    def capacity_milli(self) -> int:
        return sum(n.accelerator_count for n in self.nodes) * FULL_DEVICE_MILLI


SIZE_CLASSES: tuple[tuple[str, float, float], ...] = (
    ("cpu", 0.0, 0.0),
    ("<1", 0.001, 0.999),
    ("1", 1.0, 1.0),
    ("2-8", 2.0, 8.0),
    ("9-64", 9.0, 64.0),
    ("65-255", 65.0, 255.0),
    (">=256", 256.0, 1e12),
)
"""Job size classes by accelerators requested: (label, lowest, highest), both inclusive."""


def size_class(gpus: float) -> str:
    for label, low, high in SIZE_CLASSES:
        if low <= gpus <= high:
            return label
    return "2-8" if gpus < 9 else "9-64"
