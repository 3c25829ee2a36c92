"""Cluster backends: one interface (``ClusterBackend``), plain specs, typed errors.

The Kubernetes implementation lives in ``apps.clusters.backends.kubernetes`` and is imported
explicitly, so code that only needs the specs does not import the Kubernetes client.
"""

from .base import (
    BackendError,
    ClusterBackend,
    ConflictError,
    NotFoundError,
    PermanentError,
    Quantities,
    ResyncRequired,
    TransientError,
    WatchStream,
)
from .spec import (
    ApplyResult,
    DrainResult,
    InferenceSpec,
    LeafSwitch,
    NetworkTopology,
    NodeInventory,
    NotebookEndpoint,
    NotebookSpec,
    ObjectRef,
    ReplicaGroup,
    ScalableUnit,
    Spine,
    VolumeMount,
    WatchEvent,
    WorkloadSpec,
    WorkloadStatus,
    namespace_for,
    priority_class_name,
    workload_name,
)

__all__ = [
    "ApplyResult",
    "BackendError",
    "ClusterBackend",
    "ConflictError",
    "DrainResult",
    "InferenceSpec",
    "LeafSwitch",
    "NetworkTopology",
    "NodeInventory",
    "NotFoundError",
    "NotebookEndpoint",
    "NotebookSpec",
    "ObjectRef",
    "PermanentError",
    "Quantities",
    "ReplicaGroup",
    "ResyncRequired",
    "ScalableUnit",
    "Spine",
    "TransientError",
    "VolumeMount",
    "WatchEvent",
    "WatchStream",
    "WorkloadSpec",
    "WorkloadStatus",
    "namespace_for",
    "priority_class_name",
    "workload_name",
]
