"""The simulated source: load-following, deterministic, under the DCGM names."""

from __future__ import annotations

from apps.telemetry import metrics as m
from apps.telemetry.aggregate import RateTracker
from apps.telemetry.exporter import render
from apps.telemetry.sources.simulated import (
    IDLE_POWER_W,
    GpuSlot,
    Inventory,
    NodeSlot,
    SimulatedSource,
    gpu_values,
)


def inventory() -> Inventory:
    gpus = tuple(
        GpuSlot(hostname=f"n{n}", gpu=g, model_name="A800", job_id=7 if n == 0 else None,
                pod="zs-train-7-worker-0" if n == 0 else "", namespace="zs-a" if n == 0 else "")
        for n in range(2) for g in range(8)
    )  # fmt: skip
    return Inventory(gpus=gpus, nodes=(NodeSlot("n0"), NodeSlot("n1")))


def source(seed: int = 1) -> SimulatedSource:
    clock = iter(float(t) for t in range(1000, 2000))
    return SimulatedSource(inventory=inventory, seed=seed, clock=lambda: next(clock))


def test_busy_gpus_follow_load_and_idle_gpus_idle() -> None:
    src = source()
    for _ in range(60):
        data = src.collect()
        busy = [g.values for g in data.gpus if g.hostname == "n0"]
        idle = [g.values for g in data.gpus if g.hostname == "n1"]
        assert all(70 <= v[m.GPU_UTIL] <= 98 for v in busy)
        assert all(250 <= v[m.POWER] <= 400 for v in busy)
        assert all(v[m.FB_USED] > 0.59 * 81_920 for v in busy)
        assert all(v[m.GPU_UTIL] == 0 and v[m.FB_USED] == 0 for v in idle)
        assert all(v[m.POWER] < 70 for v in idle)
        assert min(v[m.GPU_TEMP] for v in busy) > max(v[m.GPU_TEMP] for v in idle)
        assert set(busy[0]) == set(m.GPU_METRICS)


def test_a_notebooks_gpu_holds_memory_but_mostly_waits_for_its_user() -> None:
    slot = GpuSlot(hostname="n0", gpu=0, model_name="A800", job_id=9, interactive=True,
                   pod="zs-nb-9-notebook-0", namespace="zs-a")  # fmt: skip
    training = GpuSlot(hostname="n0", gpu=0, model_name="A800", job_id=9)
    for tick in range(1000, 1600):
        values = gpu_values(slot, 1, tick)
        # Below the idle governance's 10 % threshold all the time: a notebook left open idles.
        assert values[m.GPU_UTIL] <= 4 and values[m.TENSOR_ACTIVE] == 0
        assert 0.15 * 81_920 <= values[m.FB_USED] <= 0.35 * 81_920  # the kernel's tensors
        assert IDLE_POWER_W < values[m.POWER] < 100
        assert gpu_values(training, 1, tick)[m.GPU_UTIL] >= 70  # a training job's is busy


def test_same_seed_same_values_other_seed_other_values() -> None:
    one, two, other = source(1), source(1), source(2)
    for _ in range(5):
        a, b, c = one.collect(), two.collect(), other.collect()
        assert [g.values for g in a.gpus] == [g.values for g in b.gpus]
    assert [g.values for g in a.gpus] != [g.values for g in c.gpus]


def test_node_counters_grow_and_become_rates() -> None:
    src, rates = source(), RateTracker()
    rates.rates(src.collect())
    row = rates.rates(src.collect())
    assert row["n0"]["cpu_pct"] > row["n1"]["cpu_pct"]
    assert row["n0"]["ib_rx_bps"] > 0 and row["n1"]["ib_rx_bps"] == 0
    assert row["n0"]["net_rx_bps"] > row["n1"]["net_rx_bps"] > 0


def test_exporter_serves_dcgm_and_node_exporter_names() -> None:
    text = render(source().collect).decode()
    assert (
        'DCGM_FI_DEV_GPU_UTIL{Hostname="n1",UUID="' in text
        and 'modelName="A800",namespace="",pod=""} 0.0' in text
    )
    assert 'namespace="zs-a",pod="zs-train-7-worker-0"' in text
    for name in (*m.GPU_METRICS, *m.NODE_METRICS):
        assert f"\n{name}{{" in text, name
