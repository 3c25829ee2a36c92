"""A small simulated cluster with quotas, and a virtual clock driving the simulated backend."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from apps.clusters.backends.simulated import SimulatedBackend, inventory
from apps.clusters.models import ResourcePool
from apps.clusters.registry import set_backend
from apps.jobs.relay import reconcile, relay
from apps.quotas.models import Quota
from apps.scheduling.loop import run_cycle
from tests.conftest import World
from tests.factories import make_node, make_pool


@dataclass
class VirtualClock:
    now: float = 0.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass
class Cluster:
    pool: ResourcePool
    backend: SimulatedBackend
    clock: VirtualClock


def tick(cluster: Cluster, seconds: float = 0) -> None:
    """Advance the clock, then one admission cycle and the relay around a reconcile: queued
    work is admitted, dispatched, and its state read back."""
    cluster.clock.advance(seconds)
    run_cycle()
    relay()
    reconcile(grace_s=3600)
    relay()


@pytest.fixture
def cluster(world: World) -> Iterator[Cluster]:
    """2 leaves x 2 nodes x 8 A800 = 32 GPUs; tenant-a: guarantee 16 + borrow 8, tenant-b 16+16."""
    pool = make_pool(name="train")
    for i in range(4):
        make_node(pool=pool, name=f"n{i}", leaf_switch=f"leaf{i // 2}", scalable_unit="su0")
    Quota.objects.create(tenant=world.tenant_a, pool=pool, accelerator_model="A800",
                         guarantee=16, borrow_limit=8)  # fmt: skip
    Quota.objects.create(tenant=world.tenant_b, pool=pool, accelerator_model="A800",
                         guarantee=16, borrow_limit=16)  # fmt: skip
    clock = VirtualClock()
    backend = SimulatedBackend(clock=clock, startup_s=5, default_duration_s=60)
    for i in range(4):
        backend.nodes[f"n{i}"] = inventory(f"n{i}", "nvidia.com/gpu", 8, {})
    set_backend(backend)
    yield Cluster(pool=pool, backend=backend, clock=clock)
    set_backend(None)


def training_body(pool: ResourcePool, **overrides: object) -> dict[str, object]:
    body: dict[str, object] = {
        "name": "llama-sft",
        "kind": "training",
        "pool": pool.pk,
        "priority": 4,
        "image": "registry.example.com/ml/pytorch:2.5-cuda12",
        "command": ["torchrun", "train.py"],
        "env": {"NCCL_DEBUG": "WARN"},
        "replica_groups": [{"name": "worker", "replicas": 2, "accelerators": 8}],
        "accelerator_model": "A800",
        "topology": {"mode": "soft", "highest_tier": "leaf"},
    }
    body.update(overrides)
    return body


def notebook_body(cluster: Cluster, **overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "name": "explore",
        "kind": "notebook",
        "pool": cluster.pool.pk,
        "image": "quay.io/jupyter/base-notebook:latest",
        "replica_groups": [{"name": "notebook", "replicas": 1, "accelerators": 1}],
        "accelerator_model": "A800",
        "notebook": {"flavor": "jupyter", "storage_gib": 5},
    }
    body.update(overrides)
    return body
