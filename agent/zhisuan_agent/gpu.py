"""GPU facts from NVML, in plain data so checks are pure functions and tests use fixtures.

``nvmlInit()`` raising ``NVMLError_LibraryNotFound`` (or ``DriverNotLoaded``) is the normal
state of a node without a GPU or driver: the snapshot says so, nothing crashes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class GpuInfo:
    index: int
    uuid: str = ""
    pci_bus_id: str = ""
    ecc_volatile_corrected: int = 0
    ecc_volatile_uncorrected: int = 0
    ecc_aggregate_corrected: int = 0
    ecc_aggregate_uncorrected: int = 0
    retired_pages_sbe: int = 0
    retired_pages_dbe: int = 0
    retired_pending: bool = False
    remap_pending: bool = False
    remap_failed: bool = False
    throttle_reasons: int = 0
    temperature_c: int | None = None
    nvlink_errors: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class GpuSnapshot:
    available: bool
    reason: str = ""
    driver_version: str = ""
    cuda_driver_version: int | None = None  # NVML's integer, e.g. 12020 for CUDA 12.2
    gpus: tuple[GpuInfo, ...] = ()


def from_json(path: Path) -> GpuSnapshot:
    """A snapshot recorded as JSON (test fixtures, or ``--nvml-fixture`` for dry runs)."""
    raw: dict[str, Any] = json.loads(path.read_text())
    gpus = tuple(GpuInfo(**g) for g in raw.pop("gpus", []))
    return GpuSnapshot(gpus=gpus, **raw)


def _call(default: Any, fn: Any, *args: Any) -> Any:
    """One NVML query; an unsupported field (older GPU, MIG, no NVLink) reads as ``default``."""
    import pynvml

    try:
        return fn(*args)
    except pynvml.NVMLError:
        return default


def _ecc(handle: Any, error_type: int, counter: int) -> int:
    import pynvml

    return int(_call(0, pynvml.nvmlDeviceGetTotalEccErrors, handle, error_type, counter))


def _nvlink_errors(handle: Any) -> dict[str, int]:
    import pynvml

    names = {
        "replay": pynvml.NVML_NVLINK_ERROR_DL_REPLAY,
        "recovery": pynvml.NVML_NVLINK_ERROR_DL_RECOVERY,
        "crc_flit": pynvml.NVML_NVLINK_ERROR_DL_CRC_FLIT,
    }
    totals = dict.fromkeys(names, 0)
    for link in range(pynvml.NVML_NVLINK_MAX_LINKS):
        if _call(None, pynvml.nvmlDeviceGetNvLinkState, handle, link) is None:
            continue  # link absent on this GPU
        for name, counter in names.items():
            totals[name] += int(
                _call(0, pynvml.nvmlDeviceGetNvLinkErrorCounter, handle, link, counter)
            )
    return totals


def _gpu(index: int) -> GpuInfo:
    import pynvml

    h = pynvml.nvmlDeviceGetHandleByIndex(index)
    corrected, uncorrected = pynvml.NVML_SINGLE_BIT_ECC, pynvml.NVML_DOUBLE_BIT_ECC
    volatile, aggregate = pynvml.NVML_VOLATILE_ECC, pynvml.NVML_AGGREGATE_ECC
    remap = _call(None, pynvml.nvmlDeviceGetRemappedRows, h)  # (corr, unc, pending, failed)
    sbe_pages = _call(
        [],
        pynvml.nvmlDeviceGetRetiredPages,
        h,
        pynvml.NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS,
    )
    dbe_pages = _call(
        [],
        pynvml.nvmlDeviceGetRetiredPages,
        h,
        pynvml.NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR,
    )
    pending = _call(0, pynvml.nvmlDeviceGetRetiredPagesPendingStatus, h)
    uuid = _call(b"", pynvml.nvmlDeviceGetUUID, h)
    pci = _call(None, pynvml.nvmlDeviceGetPciInfo, h)
    return GpuInfo(
        index=index,
        uuid=uuid.decode() if isinstance(uuid, bytes) else str(uuid),
        pci_bus_id=str(getattr(pci, "busId", b"").decode() if pci else ""),
        ecc_volatile_corrected=_ecc(h, corrected, volatile),
        ecc_volatile_uncorrected=_ecc(h, uncorrected, volatile),
        ecc_aggregate_corrected=_ecc(h, corrected, aggregate),
        ecc_aggregate_uncorrected=_ecc(h, uncorrected, aggregate),
        retired_pages_sbe=len(sbe_pages),
        retired_pages_dbe=len(dbe_pages),
        retired_pending=bool(pending),
        remap_pending=bool(remap and remap[2]),
        remap_failed=bool(remap and remap[3]),
        throttle_reasons=int(_call(0, pynvml.nvmlDeviceGetCurrentClocksThrottleReasons, h)),
        temperature_c=_call(None, pynvml.nvmlDeviceGetTemperature, h, pynvml.NVML_TEMPERATURE_GPU),
        nvlink_errors=_nvlink_errors(h),
    )


def read_nvml() -> GpuSnapshot:
    """Query every GPU through NVML; no library or driver is an ``available=False`` snapshot."""
    import pynvml

    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:  # LibraryNotFound, DriverNotLoaded, NoPermission...
        return GpuSnapshot(available=False, reason=f"NVML unavailable: {exc}")
    try:
        version = pynvml.nvmlSystemGetDriverVersion()
        cuda = _call(None, pynvml.nvmlSystemGetCudaDriverVersion)
        count = int(pynvml.nvmlDeviceGetCount())
        return GpuSnapshot(
            available=True,
            driver_version=version.decode() if isinstance(version, bytes) else str(version),
            cuda_driver_version=int(cuda) if cuda is not None else None,
            gpus=tuple(_gpu(i) for i in range(count)),
        )
    except pynvml.NVMLError as exc:
        return GpuSnapshot(available=False, reason=f"NVML query failed: {exc}")
    finally:
        _call(None, pynvml.nvmlShutdown)
