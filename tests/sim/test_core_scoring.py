"""Scored node choice for one-replica jobs: best fit across models, fragmentation gradient."""

from datetime import datetime

from apps.scheduling.core import (
    ClusterSnapshot,
    DeviceShare,
    Node,
    NodeAllocation,
    Packing,
    PendingJob,
    Policy,
    ReplicaGroup,
    RunningJob,
    TaskShape,
    schedule,
)
from apps.scheduling.core.scoring import model_profile, node_fragmentation

T0 = datetime(2025, 1, 1)


def node(node_id: str, model: str, gpus: int, cpu: int = 64_000) -> Node:
    return Node(node_id, "p", model, "nvidia", gpus, cpu_milli=cpu, memory_mib=512_000)


def pending(job_id: str, **group: object) -> PendingJob:
    return PendingJob(job_id, "t", "p", 3, (ReplicaGroup("w", 1, **group),), T0)  # type: ignore[arg-type]


def test_node_fragmentation_by_hand():
    # Profile: half 1-GPU tasks (4 CPUs), half 500-milli shares (2 CPUs).
    profile = (
        TaskShape(accelerators=1, cpu_milli=4000, weight=1),
        TaskShape(milli=500, cpu_milli=2000, weight=1),
    )
    mp = model_profile(profile, "A")
    # 2 whole GPUs + devices with 600 and 300 left, plenty of CPU: a 1-GPU task cannot use
    # the 900 partial milli, a 500 share cannot use the 300.
    assert node_fragmentation((10_000, 2, (600, 300)), mp) == 0.5 * 900 + 0.5 * 300
    # Not enough CPU for the 1-GPU task (3 < 4 cores): all 2,900 free milli are fragment.
    assert node_fragmentation((3_000, 2, (600, 300)), mp) == 0.5 * 2900 + 0.5 * 300
    # No whole GPU and no share big enough for 500: all of it, for both.
    assert node_fragmentation((10_000, 0, (300,)), mp) == 300
    # A shape that excludes the model counts everything.
    other = model_profile((TaskShape(accelerators=1, models=frozenset({"B"})),), "A")
    assert node_fragmentation((10_000, 2, ()), other) == 2000


def test_best_fit_looks_across_models_and_weighs_cpu():
    nodes = (node("big", "A", 8), node("small", "B", 2), node("cpu-poor", "B", 2, cpu=9_000))
    job = pending("j", accelerators=1, cpu_milli=8_000)
    d = schedule(
        ClusterSnapshot(nodes=nodes), [job], Policy(quotas=False, packing=Packing.BEST_FIT), T0
    )
    # "cpu-poor" is left with 1 core and 1 GPU: the best fit, though it is a different model
    # from the first class in order.
    assert d.placements[0].replicas[0].node_id == "cpu-poor"


def _partly_used() -> ClusterSnapshot:
    nodes = (node("a", "A", 8), node("b", "A", 8))
    # Node a: device 0 has 600 milli left; the other 7 devices are taken whole.
    running = (
        RunningJob("s", "t", "p", 4, T0, (NodeAllocation("a", shares=(DeviceShare(0, 400),)),)),
        RunningJob("w", "t", "p", 4, T0, (NodeAllocation("a", devices=tuple(range(1, 8))),)),
    )
    return ClusterSnapshot(nodes=nodes, running=running)


def test_fragmentation_keeps_a_usable_remainder_where_best_fit_squeezes():
    job = pending("j", accelerator_milli=400)
    profile = (TaskShape(milli=600, weight=1.0),)
    bf = schedule(_partly_used(), [job], Policy(quotas=False, packing=Packing.BEST_FIT), T0)
    fgd = schedule(
        _partly_used(),
        [job],
        Policy(quotas=False, packing=Packing.FRAGMENTATION, workload_profile=profile),
        T0,
    )
    # Best fit fills the 600 remainder (200 left, useless to 600-milli tasks); the gradient
    # keeps it for the next 600 task and opens a fresh device on b.
    assert bf.placements[0].replicas[0].node_id == "a"
    assert fgd.placements[0].replicas[0].node_id == "b"


def test_fragmentation_without_a_profile_uses_the_running_and_queued_shapes():
    job = pending("j", accelerator_milli=400)
    d = schedule(_partly_used(), [job], Policy(quotas=False, packing=Packing.FRAGMENTATION), T0)
    assert len(d.placements) == 1


def test_cpu_only_jobs_go_where_no_gpu_is_left_to_strand():
    nodes = (node("empty", "A", 8), node("full", "A", 8))
    running = (RunningJob("w", "t", "p", 4, T0, (NodeAllocation("full", tuple(range(8))),)),)
    job = pending("c", cpu_milli=16_000)
    profile = (TaskShape(accelerators=1, cpu_milli=60_000, weight=1.0),)
    d = schedule(
        ClusterSnapshot(nodes=nodes, running=running),
        [job],
        Policy(quotas=False, packing=Packing.FRAGMENTATION, workload_profile=profile),
        T0,
    )
    assert d.placements[0].replicas[0].node_id == "full"
