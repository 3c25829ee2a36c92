"""Pure-Python scheduling core: dataclasses in, decisions out.

No Django, Celery or Kubernetes import here or below: the same code runs in the web app,
the simulator and the benchmarks. Entry point: ``schedule(snapshot, queue, policy, now)``.
"""

from .fragmentation import fragmentation
from .model import (
    FULL_DEVICE_MILLI,
    ClusterSnapshot,
    Decisions,
    DeviceShare,
    Fragmentation,
    Node,
    NodeAllocation,
    Packing,
    PendingCode,
    PendingJob,
    PendingReason,
    Placement,
    Policy,
    Pool,
    Preemption,
    PreemptionKind,
    Quota,
    ReplicaGroup,
    ReplicaPlacement,
    Reservation,
    RunningJob,
    Tier,
    TopologyMode,
    TopologyRequirement,
)
from .scheduler import Scheduler, schedule

__all__ = [
    "FULL_DEVICE_MILLI",
    "ClusterSnapshot",
    "Decisions",
    "DeviceShare",
    "Fragmentation",
    "Node",
    "NodeAllocation",
    "Packing",
    "PendingCode",
    "PendingJob",
    "PendingReason",
    "Placement",
    "Policy",
    "Pool",
    "Preemption",
    "PreemptionKind",
    "Quota",
    "ReplicaGroup",
    "ReplicaPlacement",
    "Reservation",
    "RunningJob",
    "Scheduler",
    "Tier",
    "TopologyMode",
    "TopologyRequirement",
    "fragmentation",
    "schedule",
]
