"""Zhisuan node agent: runs on every GPU node (a DaemonSet), checks the GPUs, kernel modules,
driver and CUDA versions, fabric manager, InfiniBand ports and disks, exposes Prometheus
metrics and reports each round to the platform with a node-scoped token."""

__version__ = "0.1.0"
