"""The metric vocabulary: DCGM exporter and node-exporter names, so a real cluster plugs in.

Everything inside the platform speaks these names. The simulated cluster emits them, the
exporter serves them, and the Prometheus source queries them, so swapping the simulated
cluster for dcgm-exporter + node-exporter changes no code above the source. Pure Python.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# --- GPU (dcgm-exporter, default counters + profiling + NVLink/PCIe) ---------------------------
GPU_UTIL = "DCGM_FI_DEV_GPU_UTIL"  # %
FB_USED = "DCGM_FI_DEV_FB_USED"  # MiB
FB_FREE = "DCGM_FI_DEV_FB_FREE"  # MiB
GPU_TEMP = "DCGM_FI_DEV_GPU_TEMP"  # degrees C
POWER = "DCGM_FI_DEV_POWER_USAGE"  # W
SM_ACTIVE = "DCGM_FI_PROF_SM_ACTIVE"  # ratio 0..1
TENSOR_ACTIVE = "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"  # ratio 0..1
ECC_SBE = "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL"  # count
ECC_DBE = "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"  # count
XID = "DCGM_FI_DEV_XID_ERRORS"  # last XID code (0: none)
NVLINK_TX = "DCGM_FI_PROF_NVLINK_TX_BYTES"  # bytes/s
NVLINK_RX = "DCGM_FI_PROF_NVLINK_RX_BYTES"  # bytes/s
PCIE_TX = "DCGM_FI_PROF_PCIE_TX_BYTES"  # bytes/s
PCIE_RX = "DCGM_FI_PROF_PCIE_RX_BYTES"  # bytes/s

GPU_METRICS: tuple[str, ...] = (
    GPU_UTIL,
    FB_USED,
    FB_FREE,
    GPU_TEMP,
    POWER,
    SM_ACTIVE,
    TENSOR_ACTIVE,
    ECC_SBE,
    ECC_DBE,
    XID,
    NVLINK_TX,
    NVLINK_RX,
    PCIE_TX,
    PCIE_RX,
)
# dcgm-exporter's label names (it adds pod/namespace/container when run with the kubelet's
# pod-resources socket; the simulated cluster sets them to the job's pod and tenant namespace).
GPU_LABELS: tuple[str, ...] = ("gpu", "UUID", "Hostname", "modelName", "pod", "namespace")

# --- Node (node-exporter). Counters are totals; rates come from two scrapes. ------------------
CPU_SECONDS = "node_cpu_seconds_total"  # labels: cpu, mode
MEM_TOTAL = "node_memory_MemTotal_bytes"
MEM_AVAILABLE = "node_memory_MemAvailable_bytes"
NET_RX = "node_network_receive_bytes_total"  # labels: device
NET_TX = "node_network_transmit_bytes_total"
IB_RX = "node_infiniband_port_data_received_bytes_total"  # labels: device, port
IB_TX = "node_infiniband_port_data_transmitted_bytes_total"
DISK_READ = "node_disk_read_bytes_total"  # labels: device
DISK_WRITTEN = "node_disk_written_bytes_total"

NODE_METRICS: tuple[str, ...] = (
    CPU_SECONDS,
    MEM_TOTAL,
    MEM_AVAILABLE,
    NET_RX,
    NET_TX,
    IB_RX,
    IB_TX,
    DISK_READ,
    DISK_WRITTEN,
)
# node-exporter has no Hostname label; Prometheus' `instance` is mapped to it by relabelling
# (platform/prometheus/prometheus.yml sets `node` from the Kubernetes node name).
NODE_LABEL = "node"


@dataclass(frozen=True, slots=True)
class GpuSample:
    """One GPU at one instant, values under the DCGM names."""

    hostname: str
    gpu: int
    uuid: str
    model_name: str
    values: dict[str, float]
    pod: str = ""
    namespace: str = ""

    @property
    def key(self) -> str:
        return f"{self.hostname}:{self.gpu}"


@dataclass(frozen=True, slots=True)
class NodeSample:
    """One node at one instant: node-exporter totals (counters) and gauges."""

    hostname: str
    values: dict[str, float]
    # Per-interface counters keyed by (metric, device) for NICs, IB ports and disks.
    devices: dict[tuple[str, str], float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Collection:
    """Everything one collection returned, stamped with the source's time (seconds)."""

    at: float
    gpus: list[GpuSample]
    nodes: list[NodeSample]
