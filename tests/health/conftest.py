"""A simulated pool of 4 nodes + 1 hot spare, a virtual clock, and a backend that counts
cordons (a subclass of the simulated cluster, not a mock)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from apps.clusters.backends.simulated import SimulatedBackend, inventory
from apps.clusters.models import Node, ResourcePool
from apps.clusters.registry import set_backend
from apps.health import services
from apps.quotas.models import Quota
from tests.conftest import World
from tests.factories import make_node, make_pool
from tests.jobs.conftest import VirtualClock


@dataclass
class CountingBackend(SimulatedBackend):
    cordons: list[str] = field(default_factory=list)
    uncordons: list[str] = field(default_factory=list)
    drains: list[str] = field(default_factory=list)

    def cordon(self, node: str, reason: str) -> None:
        self.cordons.append(node)
        super().cordon(node, reason)

    def uncordon(self, node: str) -> None:
        self.uncordons.append(node)
        super().uncordon(node)

    def drain(self, node: str):
        self.drains.append(node)
        return super().drain(node)


@dataclass
class Pool:
    pool: ResourcePool
    nodes: list[Node]
    spare: Node
    backend: CountingBackend
    clock: VirtualClock


@pytest.fixture
def sim(world: World, settings) -> Iterator[Pool]:
    settings.HEALTH_RESTART_BACKOFF_S = 0
    pool = make_pool(name="train")
    nodes = [make_node(pool=pool, name=f"n{i}", leaf_switch="leaf0") for i in range(4)]
    spare = make_node(pool=pool, name="spare0", leaf_switch="leaf0", is_spare=True)
    # Guarantees within the 32 schedulable GPUs, with one node's worth to spare (a node can
    # become a spare); tenant-a may borrow up to the whole pool.
    Quota.objects.create(
        tenant=world.tenant_a, pool=pool, accelerator_model="A800", guarantee=16, borrow_limit=16
    )
    Quota.objects.create(
        tenant=world.tenant_b, pool=pool, accelerator_model="A800", guarantee=8, borrow_limit=0
    )
    clock = VirtualClock()
    backend = CountingBackend(clock=clock, startup_s=5, default_duration_s=100_000)
    for n in [*nodes, spare]:
        backend.nodes[n.name] = inventory(n.name, "nvidia.com/gpu", 8, {})
    set_backend(backend)
    yield Pool(pool=pool, nodes=nodes, spare=spare, backend=backend, clock=clock)
    set_backend(None)


def result(check: str, status: str = "ok", faults: tuple[str, ...] = (), detail: str = ""):
    return {"check": check, "status": status, "faults": list(faults), "detail": detail, "data": {}}


def report(node: Node, *results: dict[str, object]) -> list[str]:
    return services.ingest_report(node=node, results=list(results))
