"""Where the agent looks: a root prefix for /proc, /sys and /dev (the host's, mounted into the
DaemonSet pod, or a fixture tree in tests) and what this node should have."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .gpu import GpuSnapshot, read_nvml


def _statvfs(path: str) -> tuple[int, int]:
    st = os.statvfs(path)
    return st.f_blocks * st.f_frsize, st.f_bavail * st.f_frsize


@dataclass
class Host:
    root: Path = Path("/")
    expected_gpus: int | None = None  # None: whatever PCI shows is expected
    disk_paths: tuple[str, ...] = ("/",)
    disk_min_free_ratio: float = 0.05
    ib_min_rate_gbps: float | None = None  # None: any rate; e.g. 200 for HDR
    sbe_warn_count: int = 100  # volatile corrected ECC errors per GPU before a warning
    lib_dirs: tuple[str, ...] = (
        "usr/lib/x86_64-linux-gnu",
        "usr/lib/aarch64-linux-gnu",
        "usr/lib64",
        "usr/local/nvidia/lib64",
    )
    gpu: Callable[[], GpuSnapshot] = read_nvml
    statvfs: Callable[[str], tuple[int, int]] = field(default=_statvfs)

    def path(self, absolute: str) -> Path:
        """The host path ``absolute`` under this agent's root."""
        return self.root / absolute.lstrip("/")


def read(path: Path) -> str | None:
    """File text, or None when it is absent or unreadable (absent hardware is no error)."""
    try:
        return path.read_text(errors="replace").strip()
    except OSError:
        return None
