"""Validation and normalisation of a pending job into what placement needs.

Done once per job so the placement loop works on plain ints, and so an invalid request gets
a clear reason instead of an exception in the middle of a scheduling cycle.
"""

from __future__ import annotations

from dataclasses import dataclass

from .index import ClassIndex, ClusterState, Selector
from .model import FULL_DEVICE_MILLI, PendingJob, ReplicaGroup
from .text import Items, Text, phrase, say


@dataclass(slots=True)
class Demand:
    """One replica group with its per-replica needs as ints."""

    group: ReplicaGroup
    name: str
    replicas: int
    k: int  # whole devices per replica
    milli: int  # fractional share per replica (k == 0)
    cpu: int
    mem: int
    selector: Selector
    arch: str | None

    @property
    def needs_accelerator(self) -> bool:
        return self.k > 0 or self.milli > 0


@dataclass(slots=True)
class Request:
    job: PendingJob
    demands: list[Demand]  # whole (largest first), then shares, then CPU-only
    whole_need: list[tuple[int, int]]  # (devices per replica, replicas)
    total_whole: int
    total_replicas: int
    accel_milli: int  # what the quota is charged, in milli-devices
    has_shares: bool
    shape: tuple[object, ...]  # everything placement depends on, except the job's identity

    @property
    def needs_accelerator(self) -> bool:
        return self.accel_milli > 0

    @property
    def main(self) -> Demand:
        """The demand that decides feasibility: the largest whole group, else the first."""
        return self.demands[0]


def _invalid_group(g: ReplicaGroup) -> Text | None:
    if g.replicas < 1:
        return say("groupNoReplicas", group=g.name)
    if g.accelerators < 0 or g.cpu_milli < 0 or g.memory_mib < 0:
        return say("groupNegative", group=g.name)
    if g.accelerator_milli and not 0 < g.accelerator_milli < FULL_DEVICE_MILLI:
        return say("groupBadShare", group=g.name, milli=g.accelerator_milli)
    if g.accelerators and g.accelerator_milli:
        return say("groupMixed", group=g.name)
    return None


def build_request(job: PendingJob) -> Request | Text:
    """A normalised request, or the reason the job can never be scheduled as written."""
    if not 0 <= job.priority <= 5:
        return say("badPriority", priority=job.priority)
    if not job.groups:
        return say("noGroups")
    demands: list[Demand] = []
    names: set[str] = set()
    for g in job.groups:
        problem = _invalid_group(g)
        if problem:
            return problem
        if g.name in names:
            return say("groupTwice", group=g.name)
        names.add(g.name)
        demands.append(
            Demand(
                group=g,
                name=g.name,
                replicas=g.replicas,
                k=g.accelerators,
                milli=g.accelerator_milli,
                cpu=g.cpu_milli,
                mem=g.memory_mib,
                selector=tuple(sorted(g.node_selector.items())),
                arch=g.arch,
            )
        )
    demands.sort(key=lambda d: (-d.k, d.milli == 0, -d.milli))
    whole = [(d.k, d.replicas) for d in demands if d.k > 0]
    return Request(
        job=job,
        demands=demands,
        whole_need=whole,
        total_whole=sum(k * r for k, r in whole),
        total_replicas=sum(d.replicas for d in demands),
        accel_milli=sum(d.replicas * (d.k * FULL_DEVICE_MILLI + d.milli) for d in demands),
        has_shares=any(d.milli > 0 for d in demands),
        shape=(
            job.pool,
            job.priority,
            job.topology,
            tuple((d.k, d.milli, d.replicas, d.cpu, d.mem, d.selector, d.arch) for d in demands),
        ),
    )


def _accepts(d: Demand, cls: ClassIndex) -> bool:
    g = d.group
    if g.models and cls.model not in g.models:
        return False
    if g.vendor is not None and g.vendor.lower() != cls.vendor.lower():
        return False
    return g.arch is None or g.arch == cls.arch


def compatible_classes(state: ClusterState, req: Request) -> list[ClassIndex]:
    """Classes of the job's pool that satisfy every accelerator group.

    A job runs on one accelerator model: mixing models inside one gang would make the fast
    replicas wait for the slow ones, and quotas are per model.
    """
    accel = [d for d in req.demands if d.needs_accelerator]
    return [
        cls
        for cls in state.pool_classes.get(req.job.pool, ())
        if all(_accepts(d, cls) for d in accel)
    ]


def describe_constraints(req: Request) -> Items:
    """What the job's accelerator groups accept: models, vendors, architectures."""
    models: set[str] = set()
    vendors: set[str] = set()
    arches: set[str] = set()
    for d in req.demands:
        if d.needs_accelerator:
            models |= d.group.models
            if d.group.vendor:
                vendors.add(d.group.vendor)
            if d.group.arch:
                arches.add(d.group.arch)
    head = phrase("models", models=", ".join(sorted(models))) if models else phrase("anyModel")
    return Items(
        (
            head,
            *(phrase("arch", arch=a) for a in sorted(arches)),
            *(phrase("vendor", vendor=v) for v in sorted(vendors)),
        )
    )
