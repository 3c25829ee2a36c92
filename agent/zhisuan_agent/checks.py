"""The checks. Each is a small function of a ``Host`` (and a GPU snapshot where it needs one),
returning a ``Result``; absent hardware is ``absent``, never an exception."""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Iterator
from pathlib import Path

from .gpu import GpuSnapshot
from .host import Host, read
from .model import Result, Status, absent, bad, ok

NVIDIA_VENDOR = "0x10de"
GPU_CLASSES = ("0x0300", "0x0302")  # VGA and 3D controllers
NVSWITCH_CLASS = "0x0680"  # "bridge, other": NVSwitch on HGX baseboards
# XIDs that mean the GPU or its memory is gone or corrupt; others (13, 31, 43: usually the
# application's fault) are warnings. The platform's catalogue has the final say.
CRITICAL_XIDS = frozenset({48, 61, 62, 63, 64, 74, 79, 92, 94, 95, 119, 120, 140})
THROTTLE_THERMAL = 0x20 | 0x40  # SW and HW thermal slowdown
THROTTLE_POWER = 0x08 | 0x80  # HW slowdown and HW power brake (a power cap alone is normal)
NVLINK_ERROR_LIMIT = 0  # any replay/recovery/CRC error on a link is worth a warning


def pci_devices(host: Host) -> Iterator[tuple[str, str]]:
    """(address, class) of every NVIDIA PCI function."""
    base = host.path("/sys/bus/pci/devices")
    if not base.is_dir():
        return
    for dev in sorted(base.iterdir()):
        if read(dev / "vendor") == NVIDIA_VENDOR:
            yield dev.name, (read(dev / "class") or "")[:6]


def pci_gpu_count(host: Host) -> int:
    return sum(1 for _a, cls in pci_devices(host) if cls in GPU_CLASSES)


def has_nvswitch(host: Host) -> bool:
    return any(cls == NVSWITCH_CLASS for _a, cls in pci_devices(host))


def check_gpu_count(host: Host, snap: GpuSnapshot) -> Result:
    """Fewer GPUs than expected: one has fallen off the bus (XID 79) or was never enumerated."""
    pci = pci_gpu_count(host)
    expected = host.expected_gpus if host.expected_gpus is not None else pci
    if expected == 0:
        return absent("gpu_count", "no NVIDIA GPU expected or present")
    seen = len(snap.gpus) if snap.available else 0
    data = {"expected": expected, "pci": pci, "nvml": seen if snap.available else None}
    if not snap.available:
        return bad(
            "gpu_count",
            Status.FAIL,
            f"{expected} GPUs expected but {snap.reason}",
            ["gpu:missing"],
            **data,
        )
    if min(pci, seen) < expected:
        return bad(
            "gpu_count",
            Status.FAIL,
            f"{min(pci, seen)} of {expected} GPUs visible (pci {pci}, nvml {seen})",
            ["gpu:missing"],
            **data,
        )
    return ok("gpu_count", f"{seen} GPUs", **data)


def check_ecc(host: Host, snap: GpuSnapshot) -> Result:
    """Uncorrectable errors, pending page retirement or row remapping fail the node; many
    corrected (single-bit) errors are a warning the catalogue may rate-limit."""
    if not snap.available or not snap.gpus:
        return absent("ecc", snap.reason or "no GPU")
    faults: list[str] = []
    notes: list[str] = []
    for g in snap.gpus:
        if g.ecc_volatile_uncorrected > 0:
            faults.append("ecc:uncorrectable")
            notes.append(f"gpu{g.index}: {g.ecc_volatile_uncorrected} uncorrectable")
        if g.retired_pending or g.remap_pending:
            faults.append("ecc:pending_retirement")
            notes.append(f"gpu{g.index}: page retirement/row remap pending (reset needed)")
        if g.remap_failed:
            faults.append("ecc:remap_failed")
            notes.append(f"gpu{g.index}: row remapping failed")
        if g.ecc_volatile_corrected >= host.sbe_warn_count:
            faults.append("ecc:sbe")
            notes.append(f"gpu{g.index}: {g.ecc_volatile_corrected} corrected")
    data = {
        f"gpu{g.index}": {
            "volatile": [g.ecc_volatile_corrected, g.ecc_volatile_uncorrected],
            "aggregate": [g.ecc_aggregate_corrected, g.ecc_aggregate_uncorrected],
            "retired_pages": [g.retired_pages_sbe, g.retired_pages_dbe],
        }
        for g in snap.gpus
    }
    if not faults:
        return ok("ecc", "no ECC errors above thresholds", **data)
    status = Status.WARN if set(faults) == {"ecc:sbe"} else Status.FAIL
    return bad("ecc", status, "; ".join(notes), faults, **data)


_XID = re.compile(r"NVRM: Xid \(PCI:([0-9a-fA-F:.]+)\): (\d+)")


class XidWatcher:
    """New XID events from the kernel log (``/dev/kmsg`` records: ``prio,seq,usec,flags;msg``).

    Remembers the last sequence number, so each event is reported in one round only."""

    def __init__(self) -> None:
        self.last_seq = -1

    def _records(self, path: Path) -> Iterator[str]:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        except OSError:
            return
        try:
            if path.is_char_device():  # /dev/kmsg: one record per read, EAGAIN at the end
                while True:
                    try:
                        chunk = os.read(fd, 8192)
                    except BlockingIOError:
                        break
                    except OSError as exc:
                        if exc.errno == errno.EPIPE:  # overwritten while we read: go on
                            continue
                        break
                    if not chunk:
                        break
                    yield chunk.decode(errors="replace")
            else:  # a plain file (fixtures, a copied log)
                with os.fdopen(os.dup(fd), errors="replace") as fh:
                    yield from fh
        finally:
            os.close(fd)

    def check(self, host: Host) -> Result:
        path = host.path("/dev/kmsg")
        if not path.exists():
            return absent("xid", "no kernel log readable")
        xids: list[tuple[str, int]] = []
        for record in self._records(path):
            head, _, message = record.partition(";")
            fields = head.split(",")
            seq = int(fields[1]) if len(fields) > 1 and fields[1].isdigit() else -1
            if seq != -1 and seq <= self.last_seq:
                continue
            self.last_seq = max(self.last_seq, seq)
            match = _XID.search(message)
            if match:
                xids.append((match.group(1), int(match.group(2))))
        if not xids:
            return ok("xid", "no new XID events")
        codes = sorted({x for _b, x in xids})
        status = Status.FAIL if any(x in CRITICAL_XIDS for x in codes) else Status.WARN
        detail = ", ".join(f"XID {x} on {bus}" for bus, x in xids[:10])
        return bad("xid", status, detail, [f"xid:{x}" for x in codes], events=len(xids))


def check_throttle(host: Host, snap: GpuSnapshot) -> Result:
    if not snap.available or not snap.gpus:
        return absent("throttle", snap.reason or "no GPU")
    faults: list[str] = []
    notes: list[str] = []
    for g in snap.gpus:
        if g.throttle_reasons & THROTTLE_THERMAL:
            faults.append("throttle:thermal")
            notes.append(f"gpu{g.index}: thermal slowdown ({g.temperature_c} C)")
        if g.throttle_reasons & THROTTLE_POWER:
            faults.append("throttle:power")
            notes.append(f"gpu{g.index}: power brake / hardware slowdown")
    if not faults:
        return ok("throttle", "no thermal or power slowdown")
    return bad("throttle", Status.WARN, "; ".join(notes), faults)


def check_nvlink(host: Host, snap: GpuSnapshot) -> Result:
    if not snap.available or not snap.gpus:
        return absent("nvlink", snap.reason or "no GPU")
    if not any(g.nvlink_errors for g in snap.gpus):
        return absent("nvlink", "no NVLink on these GPUs")
    errors = {f"gpu{g.index}": g.nvlink_errors for g in snap.gpus if g.nvlink_errors}
    noisy = [k for k, v in errors.items() if sum(v.values()) > NVLINK_ERROR_LIMIT]
    if noisy:
        return bad(
            "nvlink",
            Status.WARN,
            f"NVLink errors on {', '.join(noisy)}",
            ["nvlink:errors"],
            **errors,
        )
    return ok("nvlink", "no NVLink errors", **errors)


def loaded_modules(host: Host) -> set[str] | None:
    text = read(host.path("/proc/modules"))
    if text is None:
        return None
    return {line.split()[0] for line in text.splitlines() if line.strip()}


def ib_ports(host: Host) -> list[Path]:
    base = host.path("/sys/class/infiniband")
    if not base.is_dir():
        return []
    return sorted(p for dev in base.iterdir() for p in sorted((dev / "ports").glob("*")))


def check_modules(host: Host) -> Result:
    """GPU modules when there are GPUs; RDMA modules when there are RDMA NICs."""
    loaded = loaded_modules(host)
    if loaded is None:
        return absent("modules", "/proc/modules unreadable")
    required: list[str] = []
    if pci_gpu_count(host) or (host.expected_gpus or 0) > 0:
        required += ["nvidia", "nvidia_uvm"]
    if ib_ports(host) or host.path("/sys/bus/pci/drivers/mlx5_core").is_dir():
        required += ["ib_core", "mlx5_core"]
        if "nvidia" in required:
            required.append("nvidia_peermem")  # GPUDirect RDMA
    if not required:
        return absent("modules", "no GPU or RDMA hardware")
    missing = [m for m in required if m not in loaded]
    if missing:
        return bad(
            "modules",
            Status.FAIL,
            f"kernel modules not loaded: {', '.join(missing)}",
            [f"module:{m}" for m in missing],
            required=required,
        )
    return ok("modules", f"{len(required)} modules loaded", required=required)


_KERNEL_VERSION = re.compile(r"Kernel Module(?: for \S+)?\s+(\d+\.\d+(?:\.\d+)?)")


def _library_version(host: Host, stem: str) -> str | None:
    for d in host.lib_dirs:
        base = host.path("/" + d)
        if not base.is_dir():
            continue
        for f in sorted(base.glob(f"{stem}.so.*.*")):
            return f.name.split(".so.", 1)[1]
    return None


def check_versions(host: Host, snap: GpuSnapshot) -> Result:
    """The kernel module, NVML's driver, libcuda and libnvidia-ml must be one release: a
    mismatch ("Driver/library version mismatch") breaks every CUDA program on the node."""
    text = read(host.path("/proc/driver/nvidia/version"))
    if text is None and not snap.available:
        return absent("versions", "no NVIDIA driver loaded")
    match = _KERNEL_VERSION.search(text or "")
    found = {
        "kernel_module": match.group(1) if match else None,
        "nvml_driver": snap.driver_version or None,
        "libcuda": _library_version(host, "libcuda"),
        "libnvidia-ml": _library_version(host, "libnvidia-ml"),
    }
    versions = {v for v in found.values() if v}
    data = {**found, "cuda_driver": snap.cuda_driver_version}
    if len(versions) > 1:
        detail = ", ".join(f"{k} {v}" for k, v in found.items() if v)
        return bad(
            "versions",
            Status.FAIL,
            f"driver/library mismatch: {detail}",
            ["driver:version_mismatch"],
            **data,
        )
    return ok("versions", f"driver {next(iter(versions), 'unknown')}", **data)


def fabricmanager_running(host: Host) -> bool:
    proc = host.path("/proc")
    if not proc.is_dir():
        return False
    for entry in proc.iterdir():
        if entry.name.isdigit() and read(entry / "comm") == "nv-fabricmanager":
            return True
    return False


def check_fabricmanager(host: Host) -> Result:
    """On NVSwitch systems CUDA fails to initialise without nvidia-fabricmanager."""
    if not has_nvswitch(host):
        return absent("fabricmanager", "no NVSwitch on this node")
    if fabricmanager_running(host):
        return ok("fabricmanager", "nv-fabricmanager running")
    return bad(
        "fabricmanager",
        Status.FAIL,
        "NVSwitch present but nv-fabricmanager not running",
        ["fabricmanager:down"],
    )


_RATE = re.compile(r"([\d.]+)\s*Gb/sec")


def check_ib(host: Host) -> Result:
    """Every InfiniBand/RoCE port ACTIVE, at no less than the expected rate."""
    ports = ib_ports(host)
    if not ports:
        return absent("ib", "no InfiniBand/RoCE device")
    faults: list[str] = []
    notes: list[str] = []
    data: dict[str, object] = {}
    for port in ports:
        name = f"{port.parent.parent.name}/{port.name}"
        state = read(port / "state") or "unknown"
        rate_text = read(port / "rate") or ""
        m = _RATE.search(rate_text)
        rate = float(m.group(1)) if m else 0.0
        data[name] = {
            "state": state,
            "rate_gbps": rate,
            "link_layer": read(port / "link_layer") or "",
        }
        if "ACTIVE" not in state:
            faults.append("ib:port_down")
            notes.append(f"{name} {state}")
        elif host.ib_min_rate_gbps is not None and rate < host.ib_min_rate_gbps:
            faults.append("ib:rate_degraded")
            notes.append(f"{name} at {rate:g} Gb/s < {host.ib_min_rate_gbps:g}")
    if not faults:
        return ok("ib", f"{len(ports)} ports active", **data)
    status = Status.FAIL if "ib:port_down" in faults else Status.WARN
    return bad("ib", status, "; ".join(notes), faults, **data)


def check_disk(host: Host) -> Result:
    """Block devices offline fail the node; a nearly full filesystem is a warning."""
    faults: list[str] = []
    notes: list[str] = []
    data: dict[str, object] = {}
    block = host.path("/sys/block")
    if block.is_dir():
        for dev in sorted(block.iterdir()):
            state = read(dev / "device" / "state")
            if state is not None and state not in ("running", "live"):
                faults.append("disk:failed")
                notes.append(f"{dev.name} {state}")
    for mount in host.disk_paths:
        try:
            total, free = host.statvfs(str(host.path(mount)))
        except OSError:
            continue
        ratio = free / total if total else 1.0
        data[mount] = {"total_bytes": total, "free_bytes": free, "free_ratio": round(ratio, 4)}
        if ratio < host.disk_min_free_ratio:
            faults.append("disk:full")
            notes.append(f"{mount} {ratio:.1%} free")
    if not faults:
        return ok("disk", "disks healthy", **data)
    status = Status.FAIL if "disk:failed" in faults else Status.WARN
    return bad("disk", status, "; ".join(notes), faults, **data)


class Checker:
    """One round of every check; holds what must persist between rounds (the XID cursor)."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.xid = XidWatcher()

    def run(self) -> list[Result]:
        host = self.host
        snap = host.gpu()
        return [
            check_gpu_count(host, snap),
            check_ecc(host, snap),
            self.xid.check(host),
            check_throttle(host, snap),
            check_nvlink(host, snap),
            check_modules(host),
            check_versions(host, snap),
            check_fabricmanager(host),
            check_ib(host),
            check_disk(host),
        ]
