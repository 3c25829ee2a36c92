"""The simulated cluster's telemetry: load-following, deterministic values per GPU and node.

A GPU held by a running job is busy (utilization ~70-98 % with noise, memory 60-95 % used,
power 250-400 W, temperature following power), except a notebook's: a person reading and
typing leaves it nearly idle (utilization 0-4 %, memory held by the kernel, power near idle),
so the idle governance of a notebook can be seen on the simulated cluster. Any other GPU
idles. Noise is a hash of
(seed, GPU, tick), so the same seed and inventory give the same numbers on every run, and the
class keeps only the node counters (node-exporter totals must grow monotonically). Pure Python:
the inventory is plain data, loaded from the database by :mod:`apps.telemetry.inventory`.
"""

from __future__ import annotations

import math
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

from apps.telemetry import metrics as m
from apps.telemetry.metrics import Collection, GpuSample, NodeSample

MASK = (1 << 64) - 1
FB_TOTAL_MIB = {"A800": 81_920, "H800": 81_920, "H100": 81_920, "A100": 40_960, "L40S": 46_068}
DEFAULT_FB_MIB = 81_920
IDLE_POWER_W = 60.0


@dataclass(frozen=True, slots=True)
class GpuSlot:
    hostname: str
    gpu: int
    model_name: str
    uuid: str = ""
    job_id: int | None = None  # set while a job holds the GPU and runs
    pod: str = ""
    namespace: str = ""
    tenant_id: int | None = None
    pool_id: int | None = None
    interactive: bool = False  # held by a notebook: mostly waiting for its user


@dataclass(frozen=True, slots=True)
class NodeSlot:
    hostname: str
    cpus: int = 128
    memory_bytes: int = 1 << 40
    nics: int = 2
    ib_ports: int = 8
    pool_id: int | None = None


@dataclass(frozen=True, slots=True)
class Inventory:
    gpus: tuple[GpuSlot, ...]
    nodes: tuple[NodeSlot, ...]


def fake_uuid(hostname: str, gpu: int) -> str:
    """A stable GPU-... UUID for a simulated device without one."""
    h = zlib.crc32(f"{hostname}/{gpu}".encode())
    return f"GPU-{h:08x}-{gpu:04x}-4000-8000-{h ^ 0x5A5A5A5A:012x}"


def _mix(x: int) -> int:
    """splitmix64 finaliser: a cheap, well-spread integer hash."""
    x = (x + 0x9E3779B97F4A7C15) & MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)


def _unit(h: int) -> float:
    return (h >> 11) * (1.0 / (1 << 53))


@dataclass
class SimulatedSource:
    """Collections from an inventory provider; ``clock`` is injectable for virtual time."""

    inventory: Callable[[], Inventory]
    seed: int = 0
    clock: Callable[[], float] = time.time
    name: str = "simulated"
    _counters: dict[tuple[str, str], float] = field(default_factory=dict)
    _last_at: float | None = None

    def collect(self) -> Collection:
        inv = self.inventory()
        now = self.clock()
        dt = 0.0 if self._last_at is None else max(0.0, now - self._last_at)
        self._last_at = now
        tick = int(now)
        busy_by_host: dict[str, int] = {}
        gpus = []
        for slot in inv.gpus:
            values = gpu_values(slot, self.seed, tick)
            if slot.job_id is not None:
                busy_by_host[slot.hostname] = busy_by_host.get(slot.hostname, 0) + 1
            gpus.append(
                GpuSample(
                    hostname=slot.hostname,
                    gpu=slot.gpu,
                    uuid=slot.uuid or fake_uuid(slot.hostname, slot.gpu),
                    model_name=slot.model_name,
                    values=values,
                    pod=slot.pod,
                    namespace=slot.namespace,
                )
            )
        nodes = [self._node(n, busy_by_host.get(n.hostname, 0), dt, tick) for n in inv.nodes]
        return Collection(at=now, gpus=gpus, nodes=nodes)

    def _node(self, node: NodeSlot, busy_gpus: int, dt: float, tick: int) -> NodeSample:
        load = min(1.0, busy_gpus / 8)
        noise = _unit(_mix(self.seed ^ zlib.crc32(node.hostname.encode()) ^ (tick << 20)))
        cpu_busy = node.cpus * (0.02 + 0.55 * load + 0.03 * noise)

        def add(key: tuple[str, str], rate: float) -> float:
            total = self._counters.get(key, 0.0) + rate * dt
            self._counters[key] = total
            return total

        h = node.hostname
        values = {
            m.MEM_TOTAL: float(node.memory_bytes),
            m.MEM_AVAILABLE: node.memory_bytes * (0.95 - 0.6 * load - 0.02 * noise),
        }
        # CPU seconds are keyed by mode (node-exporter's per-cpu series, summed).
        devices: dict[tuple[str, str], float] = {
            (m.CPU_SECONDS, "user"): add((h, "cpu_user"), cpu_busy),
            (m.CPU_SECONDS, "idle"): add((h, "cpu_idle"), node.cpus - cpu_busy),
        }
        for i in range(node.nics):
            dev = f"eth{i}"
            devices[(m.NET_RX, dev)] = add((h, f"rx{dev}"), 2e6 + 4e8 * load * (0.8 + 0.4 * noise))
            devices[(m.NET_TX, dev)] = add((h, f"tx{dev}"), 1e6 + 3e8 * load * (0.8 + 0.4 * noise))
        for i in range(node.ib_ports):
            dev = f"mlx5_{i}"
            ib = 2.0e10 * load * (0.7 + 0.3 * noise) if busy_gpus > 1 or load else 0.0
            devices[(m.IB_RX, dev)] = add((h, f"ibrx{dev}"), ib)
            devices[(m.IB_TX, dev)] = add((h, f"ibtx{dev}"), ib)
        devices[(m.DISK_READ, "nvme0n1")] = add((h, "dr"), 1e6 + 8e8 * load * noise)
        devices[(m.DISK_WRITTEN, "nvme0n1")] = add((h, "dw"), 5e5 + 2e8 * load * noise)
        return NodeSample(hostname=h, values=values, devices=devices)


def gpu_values(slot: GpuSlot, seed: int, tick: int) -> dict[str, float]:
    """One GPU's values at one whole second: a pure function of (slot, seed, tick)."""
    fb_total = float(FB_TOTAL_MIB.get(slot.model_name, DEFAULT_FB_MIB))
    base = _mix(seed ^ (zlib.crc32(slot.hostname.encode()) << 8) ^ slot.gpu)
    n1 = _unit(_mix(base ^ tick))
    n2 = _unit(_mix(base ^ (tick << 1) ^ 0xABCDEF))
    ecc_sbe = float(_mix(base) % 3 == 0) * float(_mix(base) % 5)  # a few GPUs carry old SBEs
    if slot.job_id is None or slot.interactive:
        # Idle, or a notebook's: memory its kernel holds, a little work now and then.
        held, sparse, power, pcie = 0.0, 0.0, IDLE_POWER_W + 5.0 * n1, 1e5
        if slot.job_id is not None:
            kernel = _unit(_mix(_mix(seed ^ slot.job_id) ^ 7))
            held = float(round(fb_total * (0.15 + 0.2 * kernel)))
            sparse, power, pcie = float(round(4.0 * n1)), IDLE_POWER_W + 15.0 + 10.0 * n1, 1e7
        return {
            m.GPU_UTIL: sparse,
            m.FB_USED: held,
            m.FB_FREE: fb_total - held,
            m.GPU_TEMP: round(28.0 + 0.12 * power + n2, 1),
            m.POWER: round(power, 1),
            m.SM_ACTIVE: round(sparse / 100.0 * 0.9, 3),
            m.TENSOR_ACTIVE: 0.0,
            m.ECC_SBE: ecc_sbe,
            m.ECC_DBE: 0.0,
            m.XID: 0.0,
            m.NVLINK_TX: 0.0,
            m.NVLINK_RX: 0.0,
            m.PCIE_TX: pcie * n2,
            m.PCIE_RX: pcie * n1,
        }
    job = _mix(seed ^ slot.job_id)
    phase = _unit(job) * 2 * math.pi
    wave = 0.5 + 0.5 * math.sin(tick / 30.0 + phase)  # a training job's step rhythm
    load = min(1.0, max(0.0, 0.55 * wave + 0.45 * n1))
    util = 70.0 + 28.0 * load
    power = 250.0 + 150.0 * load
    mem_frac = 0.6 + 0.35 * _unit(_mix(job ^ 7)) + 0.01 * n2
    fb_used = round(fb_total * min(0.97, mem_frac))
    sm = util / 100.0 * 0.92
    return {
        m.GPU_UTIL: float(round(util)),
        m.FB_USED: float(fb_used),
        m.FB_FREE: fb_total - fb_used,
        m.GPU_TEMP: round(28.0 + 0.12 * power + n2, 1),
        m.POWER: round(power, 1),
        m.SM_ACTIVE: round(sm, 3),
        m.TENSOR_ACTIVE: round(sm * 0.62, 3),
        m.ECC_SBE: ecc_sbe,
        m.ECC_DBE: 0.0,
        m.XID: 0.0,
        m.NVLINK_TX: 2.0e10 + 2.0e10 * load,
        m.NVLINK_RX: 2.0e10 + 2.0e10 * load,
        m.PCIE_TX: 1.0e9 + 3.0e9 * n2,
        m.PCIE_RX: 1.0e9 + 3.0e9 * n1,
    }
