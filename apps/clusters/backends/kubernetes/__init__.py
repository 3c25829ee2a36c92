"""The Kubernetes (Volcano) implementation of the cluster interface."""

from .backend import KubernetesBackend, KubernetesWatchStream, api_client_from_environment
from .manifests import RenderOptions, render_workload

__all__ = [
    "KubernetesBackend",
    "KubernetesWatchStream",
    "RenderOptions",
    "api_client_from_environment",
    "render_workload",
]
