"""Loaders against a few rows copied from the real traces (tests/sim/fixtures)."""

import random
from dataclasses import replace
from pathlib import Path

import pytest

from apps.scheduling.sim.llm import declared_limit, llm_workload
from apps.scheduling.sim.loaders import (
    inflate,
    openb_nodes,
    openb_tasks,
    openb_workload,
    spot_nodes,
    traces_dir,
)

FIX = Path(__file__).parent / "fixtures"
ROOT = Path(__file__).resolve().parents[2]


def test_openb_nodes_keep_model_count_cpu_and_memory():
    nodes = openb_nodes(FIX / "openb_nodes.csv")
    assert [(n.node_id, n.accelerator_model, n.accelerator_count) for n in nodes] == [
        ("openb-node-0026", "G2", 8),
        ("openb-node-0027", "G2", 8),
        ("openb-node-0035", "T4", 4),
        ("openb-node-0000", "P100", 2),
    ]
    assert nodes[0].cpu_milli == 96000 and nodes[0].memory_mib == 393216


def test_openb_tasks_map_to_shares_whole_gpus_cpu_only_and_model_constraints():
    tasks = {t.name: t for t in openb_tasks(FIX / "openb_pods.csv")}
    share = tasks["openb-pod-0001"].group()
    assert (share.accelerators, share.accelerator_milli, share.cpu_milli) == (0, 460, 6000)
    assert tasks["openb-pod-0001"].milli == 460
    whole = tasks["openb-pod-0017"].group()
    assert (whole.accelerators, whole.accelerator_milli) == (8, 0)
    assert tasks["openb-pod-0017"].milli == 8000
    cpu = tasks["openb-pod-0005"].group()
    assert (cpu.accelerators, cpu.accelerator_milli, cpu.cpu_milli) == (0, 0, 20000)
    spec = tasks["openb-pod-0035"]
    assert spec.gpu_spec == frozenset({"V100M16", "V100M32"})
    assert spec.group().models == frozenset({"V100M16", "V100M32"})
    assert tasks["openb-pod-0000"].deletion_time == 12537496


def test_inflation_shuffles_then_samples_until_the_target_demand():
    tasks = openb_tasks(FIX / "openb_pods.csv")
    capacity = 22_000  # the fixture's 22 GPUs
    seq = inflate(tasks, capacity, 1.3, random.Random(42))
    assert sorted(t.name for t in seq[: len(tasks)]) == sorted(t.name for t in tasks)
    total = sum(t.milli for t in seq)
    assert total <= 1.3 * capacity
    assert seq == inflate(tasks, capacity, 1.3, random.Random(42))
    assert seq != inflate(tasks, capacity, 1.3, random.Random(43))


def test_openb_workload_is_the_one_shot_experiment(tmp_path):
    base = tmp_path / "openb"
    base.mkdir()
    (base / "openb_node_list_gpu_node.csv").write_text((FIX / "openb_nodes.csv").read_text())
    (base / "openb_pod_list_default.csv").write_text((FIX / "openb_pods.csv").read_text())
    w = openb_workload(42, base=base)
    assert w.one_shot and w.capacity_milli == 22_000
    assert [j.submit for j in w.jobs] == [float(i) for i in range(len(w.jobs))]
    assert all(j.duration is None for j in w.jobs)
    assert {q.accelerator_model for q in w.quotas} == {"G2", "T4", "P100"}


def test_spot_nodes_lay_models_on_separate_scalable_units():
    nodes = spot_nodes(FIX / "spot_nodes.csv", nodes_per_leaf=2, leaves_per_su=2)
    by_model: dict[str, set[str]] = {}
    for n in nodes:
        by_model.setdefault(n.accelerator_model, set()).add(n.scalable_unit)
    assert len(nodes) == 6
    sus = list(by_model.values())
    assert all(a.isdisjoint(b) for i, a in enumerate(sus) for b in sus[i + 1 :])
    a100 = next(n for n in nodes if n.accelerator_model == "A100-SXM4-80GB")
    assert (a100.accelerator_count, a100.cpu_milli) == (8, 128_000)


def test_traces_resolve_beside_the_repository(monkeypatch):
    monkeypatch.delenv("ZHISUAN_TRACES", raising=False)
    assert traces_dir() == ROOT.parent / "shared" / "traces"
    monkeypatch.setenv("ZHISUAN_TRACES", "/x")
    assert traces_dir() == Path("/x")


def test_llm_generator_follows_its_file():
    w = llm_workload(ROOT / "bench" / "llm_workload.toml", 1, jobs=2000, gpus=1024, load=1.0)
    assert len(w.jobs) == 2000 and w.capacity_milli == 1024 * 1000
    assert [j.submit for j in w.jobs] == sorted(j.submit for j in w.jobs)
    gpus = {j.gpus for j in w.jobs}
    assert {0.25, 0.5, 1.0, 8.0} <= gpus and max(gpus) >= 256
    big = [j for j in w.jobs if j.replicas > 1]
    assert big and all(j.groups[0].accelerators == 8 for j in big)
    assert {q.tenant for q in w.quotas} == {
        "foundation",
        "research-a",
        "research-b",
        "product",
        "notebooks",
    }
    assert sum(q.guarantee for q in w.quotas) <= 1024
    # Offered GPU time over the window is the load asked for (long jobs run past it).
    window = w.jobs[-1].submit
    offered = sum(j.gpus * j.duration for j in w.jobs if j.duration)
    assert 0.9 < offered / (window * 1024) < 1.1


def test_declared_limits_are_round_values_above_the_run_time():
    hour = 3600.0
    rounds = (1.0, 2.0, 4.0, 24.0)
    assert declared_limit(1800, 1.5, rounds) == hour  # 45 min -> 1 h
    assert declared_limit(3 * hour, 1.0, rounds) == 4 * hour
    assert declared_limit(3 * hour, 2.0, rounds) == 24 * hour  # 6 h -> the next round value
    assert declared_limit(30 * hour, 1.0, rounds) == 48 * hour  # past the last: whole days


def test_llm_generator_with_declared_limits_draws_the_same_jobs():
    path = ROOT / "bench" / "llm_workload.toml"
    exact = llm_workload(path, 3, jobs=3000, gpus=1024)
    declared = llm_workload(path, 3, jobs=3000, gpus=1024, runtimes="declared")
    assert exact.exact_runtimes and not declared.exact_runtimes
    assert all(j.runtime_limit is None for j in exact.jobs)
    assert [replace(j, runtime_limit=None) for j in declared.jobs] == list(exact.jobs)
    rounds = {h * 3600.0 for h in (1, 2, 4, 8, 12, 24, 48, 72, 168)}
    ratios = []
    for j in declared.jobs:
        if j.duration is None:  # services and notebooks declare no limit
            assert j.runtime_limit is None
            continue
        assert j.runtime_limit is not None
        assert j.runtime_limit >= j.duration + j.restart_cost
        assert j.runtime_limit in rounds or j.runtime_limit % 86400 == 0
        ratios.append(j.runtime_limit / j.duration)
    ratios.sort()
    assert 2.0 < ratios[len(ratios) // 2] < 5.0  # users overestimate several times
    with pytest.raises(ValueError, match="runtimes must be one of exact, declared"):
        llm_workload(path, 3, jobs=10, gpus=1024, runtimes="oracle")
