"""Fragmentation: free devices that a whole-node replica cannot use.

The number operators watch next to utilisation: with 100 free GPUs scattered one per node, a
64-GPU training job still cannot start. Computed from the index buckets, so it costs
``O(classes x devices per node)``, not a node scan.
"""

from __future__ import annotations

from .index import ClusterState
from .model import ClusterSnapshot, Fragmentation


def fragmentation_of(state: ClusterState, replica_size: int = 8) -> Fragmentation:
    free = stranded = whole_nodes = hostable = 0
    for cls in state.classes.values():
        threshold = max(1, min(replica_size, cls.max_devices))
        hostable += cls.cap[threshold]
        for f, bucket in enumerate(cls.buckets):
            if not bucket:
                continue
            free += f * len(bucket)
            if f < threshold:
                stranded += f * len(bucket)
        # A shared device is never in the free list, so a full bucket means untouched nodes.
        whole_nodes += len(cls.buckets[cls.max_devices])
    return Fragmentation(
        replica_size=replica_size,
        free_devices=free,
        stranded_devices=stranded,
        whole_free_nodes=whole_nodes,
        hostable_replicas=hostable,
    )


def fragmentation(snapshot: ClusterSnapshot, replica_size: int = 8) -> Fragmentation:
    """Fragmentation of a snapshot's schedulable (healthy, uncordoned) nodes."""
    return fragmentation_of(ClusterState(snapshot, quotas_enabled=False), replica_size)
