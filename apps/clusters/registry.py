"""Which cluster backend this process talks to (``ZS_CLUSTER_BACKEND``).

``simulated`` (the default) keeps one in-process simulated cluster built from the node
inventory in the database; ``kubernetes`` uses the official client with the in-cluster
service account, or the local kubeconfig.
"""

from __future__ import annotations

import threading

from django.conf import settings

from apps.clusters.backends.base import ClusterBackend
from apps.clusters.backends.simulated import SimulatedBackend, inventory
from apps.clusters.models import Node, Vendor

_lock = threading.Lock()
_backend: ClusterBackend | None = None

ACCELERATOR_RESOURCE = {Vendor.NVIDIA: "nvidia.com/gpu", Vendor.HUAWEI: "huawei.com/Ascend910"}


def accelerator_resource(vendor: str) -> str:
    return ACCELERATOR_RESOURCE.get(Vendor(vendor), "nvidia.com/gpu") if vendor else ""


def _simulated() -> SimulatedBackend:
    backend = SimulatedBackend()
    for node in Node.objects.all():
        backend.nodes[node.name] = inventory(
            node.name,
            accelerator_resource(node.accelerator_vendor) or "nvidia.com/gpu",
            node.accelerator_count,
            {"zhisuan.io/leaf": node.leaf_switch, "zhisuan.io/su": node.scalable_unit},
        )
    _adopt(backend)
    return backend


def _adopt(backend: SimulatedBackend) -> None:
    """The simulated cluster lives in this process's memory. After a restart, recreate the
    workloads the database says are on the cluster, as a real cluster would still run them."""
    from apps.jobs.models import Job, JobState
    from apps.jobs.workload import build

    on_cluster = Job.objects.filter(state__in=[JobState.DISPATCHING, JobState.RUNNING])
    for job in on_cluster.select_related("tenant", "pool"):
        backend.apply(build(job), started=job.state == JobState.RUNNING)


def _kubernetes() -> ClusterBackend:
    from apps.clusters.backends.kubernetes.backend import (
        KubernetesBackend,
        api_client_from_environment,
    )

    # In-cluster service account when running in a pod, else $KUBECONFIG / ~/.kube/config.
    return KubernetesBackend(api_client_from_environment())


def get_backend() -> ClusterBackend:
    global _backend  # one backend per process, built on first use
    with _lock:
        if _backend is None:
            kind = settings.CLUSTER_BACKEND
            if kind == "simulated":
                _backend = _simulated()
            elif kind == "kubernetes":
                _backend = _kubernetes()
            else:
                raise RuntimeError(f"ZS_CLUSTER_BACKEND must be simulated or kubernetes: {kind}")
        return _backend


def set_backend(backend: ClusterBackend | None) -> None:
    """Replace the process's backend (tests; a simulated cluster with a virtual clock)."""
    global _backend
    with _lock:
        _backend = backend
