"""Each check against fixture /proc, /sys and /dev trees: a healthy HGX node, a faulty one,
and a CPU-only node where every GPU/RDMA check is ``absent`` rather than an error."""

from __future__ import annotations

from pathlib import Path

import pytest
from zhisuan_agent import checks, gpu
from zhisuan_agent.host import Host
from zhisuan_agent.model import Status

from tests.agent.conftest import FIXTURES


def host_for(name: str, **overrides: object) -> Host:
    root = FIXTURES / name
    snap = gpu.from_json(root / "nvml.json")
    fields: dict[str, object] = {
        "root": root,
        "gpu": lambda: snap,
        "statvfs": lambda path: (1000, 500),
        "ib_min_rate_gbps": 200.0,
    }
    fields.update(overrides)
    return Host(**fields)  # type: ignore[arg-type]


@pytest.fixture
def healthy() -> Host:
    return host_for("hgx_healthy", expected_gpus=8)


@pytest.fixture
def faulty() -> Host:
    return host_for("hgx_faulty", expected_gpus=8)


def test_healthy_hgx_node_passes_every_check(healthy: Host) -> None:
    results = checks.Checker(healthy).run()
    assert {r.check: str(r.status) for r in results} == {
        "gpu_count": "ok",
        "ecc": "ok",
        "xid": "ok",
        "throttle": "ok",
        "nvlink": "ok",
        "modules": "ok",
        "versions": "ok",
        "fabricmanager": "ok",
        "ib": "ok",
        "disk": "ok",
    }
    assert all(r.faults == () for r in results)


def test_gpu_fallen_off_the_bus_is_a_missing_gpu(faulty: Host) -> None:
    result = checks.check_gpu_count(faulty, faulty.gpu())
    assert result.status == Status.FAIL and result.faults == ("gpu:missing",)
    assert result.data == {"expected": 8, "pci": 8, "nvml": 7}


def test_gpu_count_without_nvml_fails_when_gpus_are_expected(healthy: Host) -> None:
    snap = gpu.GpuSnapshot(available=False, reason="NVML unavailable: driver not loaded")
    result = checks.check_gpu_count(healthy, snap)
    assert result.status == Status.FAIL and result.faults == ("gpu:missing",)


def test_ecc_uncorrectable_pending_remap_and_many_corrected(faulty: Host) -> None:
    result = checks.check_ecc(faulty, faulty.gpu())
    assert result.status == Status.FAIL
    assert result.faults == ("ecc:uncorrectable", "ecc:pending_retirement", "ecc:sbe")
    assert result.data["gpu2"]["retired_pages"] == [3, 0]


def test_only_corrected_ecc_errors_are_a_warning(healthy: Host) -> None:
    snap = gpu.GpuSnapshot(available=True, gpus=(gpu.GpuInfo(0, ecc_volatile_corrected=150),))
    result = checks.check_ecc(healthy, snap)
    assert result.status == Status.WARN and result.faults == ("ecc:sbe",)


def test_xid_events_are_reported_once(faulty: Host) -> None:
    watcher = checks.XidWatcher()
    first = watcher.check(faulty)
    assert first.status == Status.FAIL and first.faults == ("xid:13", "xid:79")
    assert "XID 79 on 0000:88:00" in first.detail
    assert watcher.check(faulty).status == Status.OK  # same records: not reported again


def test_application_xid_alone_is_a_warning(tmp_path: Path) -> None:
    (tmp_path / "dev").mkdir()
    (tmp_path / "dev" / "kmsg").write_text("4,7,100,-;NVRM: Xid (PCI:0000:18:00): 13, pid=1\n")
    result = checks.XidWatcher().check(Host(root=tmp_path))
    assert result.status == Status.WARN and result.faults == ("xid:13",)


def test_thermal_throttle_and_nvlink_errors_warn(faulty: Host) -> None:
    throttle = checks.check_throttle(faulty, faulty.gpu())
    assert throttle.status == Status.WARN and throttle.faults == ("throttle:thermal",)
    nvlink = checks.check_nvlink(faulty, faulty.gpu())
    assert nvlink.status == Status.WARN and nvlink.faults == ("nvlink:errors",)
    assert nvlink.data["gpu4"] == {"replay": 12, "recovery": 1, "crc_flit": 30}


def test_missing_kernel_module_for_gpudirect(faulty: Host) -> None:
    result = checks.check_modules(faulty)
    assert result.status == Status.FAIL and result.faults == ("module:nvidia_peermem",)


def test_driver_library_version_mismatch(faulty: Host) -> None:
    result = checks.check_versions(faulty, faulty.gpu())
    assert result.status == Status.FAIL and result.faults == ("driver:version_mismatch",)
    assert result.data["kernel_module"] == "535.129.03"
    assert result.data["libcuda"] == "535.104.05"


def test_fabricmanager_down_on_an_nvswitch_node(faulty: Host, healthy: Host) -> None:
    assert checks.has_nvswitch(faulty)
    result = checks.check_fabricmanager(faulty)
    assert result.status == Status.FAIL and result.faults == ("fabricmanager:down",)
    assert checks.check_fabricmanager(healthy).status == Status.OK


def test_ib_port_down_and_degraded_rate(faulty: Host, healthy: Host) -> None:
    result = checks.check_ib(faulty)
    assert result.status == Status.FAIL and result.faults == ("ib:port_down",)
    assert result.data["mlx5_1/1"] == {
        "state": "1: DOWN",
        "rate_gbps": 200.0,
        "link_layer": "InfiniBand",
    }
    slow = host_for("hgx_healthy", ib_min_rate_gbps=400.0)
    degraded = checks.check_ib(slow)
    assert degraded.status == Status.WARN and degraded.faults == ("ib:rate_degraded",)


def test_disk_offline_fails_and_nearly_full_warns(faulty: Host) -> None:
    result = checks.check_disk(faulty)
    assert result.status == Status.FAIL and result.faults == ("disk:failed",)
    full = host_for("hgx_healthy", statvfs=lambda path: (1000, 20))
    warn = checks.check_disk(full)
    assert warn.status == Status.WARN and warn.faults == ("disk:full",)
    assert warn.data["/"] == {"total_bytes": 1000, "free_bytes": 20, "free_ratio": 0.02}


def test_cpu_only_node_reports_absent_hardware_not_errors() -> None:
    host = host_for("cpu_only")
    results = {r.check: r.status for r in checks.Checker(host).run()}
    assert results == {
        "gpu_count": Status.ABSENT,
        "ecc": Status.ABSENT,
        "xid": Status.ABSENT,
        "throttle": Status.ABSENT,
        "nvlink": Status.ABSENT,
        "modules": Status.ABSENT,
        "versions": Status.ABSENT,
        "fabricmanager": Status.ABSENT,
        "ib": Status.ABSENT,
        "disk": Status.OK,
    }


def test_real_nvml_without_a_gpu_is_unavailable_not_a_crash() -> None:
    snap = gpu.read_nvml()
    if snap.available:  # a lent GPU machine
        assert snap.driver_version and len(snap.gpus) >= 1
    else:
        assert snap.reason.startswith("NVML")
