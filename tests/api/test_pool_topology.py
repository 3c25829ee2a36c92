"""A pool's topology view: counts per node and domain by hand, the largest whole-node gang
per tier, the queue by pending reason, no other tenant's names, constant queries; and the
same counts as Prometheus metrics on /metrics."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families
from rest_framework.test import APIClient

from apps.clusters.models import Device, Node, NodeHealth, ResourcePool
from apps.jobs.models import Allocation, Job, JobKind, JobState
from apps.jobs.services import submit_job
from apps.scheduling.models import Hold, SchedulerLock
from apps.tenancy.models import Role, Tenant
from tests.conftest import World
from tests.factories import make_node, make_pool, make_running

pytestmark = pytest.mark.django_db


def _spec(per_replica: int, replicas: int = 1) -> dict[str, Any]:
    return {
        "image": "registry.example.com/ml/train:1",
        "command": ["python", "train.py"],
        "replica_groups": [{"name": "worker", "replicas": replicas, "accelerators": per_replica}],
        "accelerator_models": ["A800"],
    }


def _job(
    world: World, tenant: Tenant, pool: ResourcePool, per_replica: int, replicas: int = 1
) -> Job:
    label = "a" if tenant == world.tenant_a else "b"
    return submit_job(tenant=tenant, owner=world.user(label, Role.MEMBER), name="sft",
                      kind=JobKind.TRAINING, pool=pool, priority=2,
                      spec=_spec(per_replica, replicas))  # fmt: skip


def _node(pool: ResourcePool, name: str, leaf: str, unit: str, **fields: Any) -> Node:
    return make_node(pool=pool, name=name, leaf_switch=leaf, scalable_unit=unit, spine="s0",
                     **fields)  # fmt: skip


@pytest.fixture
def pool(world: World) -> ResourcePool:
    """su0/leaf0: n1 free, n2 3 devices + a share, n3 cordoned, n4 a spare; su0/leaf1: n5 full,
    n6 one faulty device; su1/leaf2: n7 (held for a starving gang) and n8 free."""
    pool = make_pool(name="a800-train")
    n1 = _node(pool, "n1", "leaf0", "su0")
    n2 = _node(pool, "n2", "leaf0", "su0")
    _node(pool, "n3", "leaf0", "su0", cordoned=True)
    _node(pool, "n4", "leaf0", "su0", is_spare=True)
    n5 = _node(pool, "n5", "leaf1", "su0")
    n6 = _node(pool, "n6", "leaf1", "su0")
    n7 = _node(pool, "n7", "leaf2", "su1")
    _node(pool, "n8", "leaf2", "su1")
    make_running(_job(world, world.tenant_b, pool, 3), n2)
    shared = _job(world, world.tenant_b, pool, 0)
    Allocation.objects.create(job=shared, node=n2, replica_group="worker", replica_index=0,
                              accelerator_model="A800", shares=[[3, 500]])  # fmt: skip
    Job.objects.filter(pk=shared.pk).update(state=JobState.RUNNING)
    make_running(_job(world, world.tenant_b, pool, 8), n5)
    Device.objects.create(node=n6, index=5, model="A800", health=NodeHealth.FAULTY)
    starving = _job(world, world.tenant_b, pool, 8, replicas=4)
    waiting = _job(world, world.tenant_a, pool, 4)
    Job.objects.filter(pk=starving.pk).update(state=JobState.QUEUED, pending_code="reserved")
    Job.objects.filter(pk=waiting.pk).update(state=JobState.QUEUED, pending_code="capacity")
    Hold.objects.create(job=starving, priority=2, node_ids=[n7.pk],
                        expires_at=timezone.now() + timedelta(hours=1))  # fmt: skip
    Hold.objects.create(job=waiting, priority=2, node_ids=[n1.pk],
                        expires_at=timezone.now() - timedelta(minutes=1))  # fmt: skip
    return pool


def _counts(nodes: int, devices: int, used: int, free: int, unavailable: int, stranded: int,
            whole: int, spare: int = 0) -> dict[str, int]:  # fmt: skip
    return {"nodes": nodes, "devices": devices, "used": used, "free": free,
            "unavailable": unavailable, "stranded": stranded, "whole_free_nodes": whole,
            "spare_nodes": spare}  # fmt: skip


def test_counts_by_node_and_domain(world: World, client_for, pool: ResourcePool) -> None:
    res = client_for(world.user("a", Role.MEMBER)).get(f"/api/v1/pools/{pool.pk}/topology/")
    assert res.status_code == 200, res.json()
    body = res.json()
    assert body["pool"] == {"id": pool.pk, "name": "a800-train"}
    [spine] = body["spines"]
    su0, su1 = spine["units"]
    leaf0, leaf1 = su0["leaves"]
    [leaf2] = su1["leaves"]
    states = {n["name"]: (n["state"], n["used"], n["free"], n["broken"], n["held"])
              for lf in (leaf0, leaf1, leaf2) for n in lf["nodes"]}  # fmt: skip
    assert states == {
        "n1": ("free", 0, 8, 0, False),  # its hold has expired
        "n2": ("partial", 4, 4, 0, False),  # 3 whole devices and one shared
        "n3": ("unavailable", 0, 0, 0, False),
        "n4": ("spare", 0, 0, 0, False),
        "n5": ("full", 8, 0, 0, False),
        "n6": ("partial", 0, 7, 1, False),
        "n7": ("free", 0, 8, 0, True),
        "n8": ("free", 0, 8, 0, False),
    }
    # leaf0: n3's 8 devices out of service; n2's 4 free devices are stranded (< 8)
    assert leaf0["summary"] == _counts(3, 24, 4, 12, 8, 4, 1, spare=1)
    assert leaf1["summary"] == _counts(2, 16, 8, 7, 1, 7, 0)
    assert leaf2["summary"] == _counts(2, 16, 0, 16, 0, 0, 2)
    assert su0["summary"] == _counts(5, 40, 12, 19, 9, 11, 1, spare=1)
    assert spine["summary"] == body["summary"] == _counts(7, 56, 12, 35, 9, 11, 3, spare=1)
    # whole free nodes: leaf2 has two (16 devices), su0 one, the pool three
    assert body["largest_gang"] == [{"model": "A800", "leaf": 16, "scalable_unit": 16, "pool": 24}]
    assert body["queue"] == {
        "jobs": 2,
        "devices": 36,
        "by_code": [
            {"code": "capacity", "jobs": 1, "devices": 4},
            {"code": "reserved", "jobs": 1, "devices": 32},
        ],
    }


def test_a_job_waiting_for_others_is_counted_but_asks_for_no_devices(
    world: World, client_for, pool: ResourcePool
) -> None:
    step = _job(world, world.tenant_a, pool, 8, replicas=2)
    Job.objects.filter(pk=step.pk).update(
        state=JobState.QUEUED, pending_code="after", waiting_for_jobs=True
    )
    body = client_for(world.platform_admin).get(f"/api/v1/pools/{pool.pk}/topology/").json()
    assert body["queue"]["jobs"] == 3
    assert body["queue"]["devices"] == 36  # not 52: the pipeline step asks for nothing yet
    assert {"code": "after", "jobs": 1, "devices": 16} in body["queue"]["by_code"]


def test_names_no_job_or_tenant(world: World, client_for, pool: ResourcePool) -> None:
    """Counts only: tenant a's member reads the pool where tenant b runs and waits."""
    text = client_for(world.user("a", Role.VIEWER)).get(f"/api/v1/pools/{pool.pk}/topology/")
    assert text.status_code == 200
    assert "tenant-b" not in text.content.decode()
    assert "sft" not in text.content.decode()


def test_sign_in_needed_and_unknown_pool(world: World, client_for, pool: ResourcePool) -> None:
    assert client_for(None).get(f"/api/v1/pools/{pool.pk}/topology/").status_code in (401, 403)
    missing = client_for(world.platform_admin).get(f"/api/v1/pools/{pool.pk + 99}/topology/")
    assert missing.status_code == 404


def test_queries_do_not_grow_with_the_pool(world: World, client_for, pool: ResourcePool) -> None:
    client = client_for(world.platform_admin)
    with CaptureQueriesContext(connection) as before:
        client.get(f"/api/v1/pools/{pool.pk}/topology/")
    for i in range(6):
        node = _node(pool, f"m{i}", f"leaf{3 + i % 2}", "su2")
        make_running(_job(world, world.tenant_a, pool, 2), node)
    with CaptureQueriesContext(connection) as after:
        body = client.get(f"/api/v1/pools/{pool.pk}/topology/").json()
    assert body["summary"]["nodes"] == 13
    assert len(after.captured_queries) == len(before.captured_queries)


def _scrape() -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    text = APIClient().get("/metrics").content.decode()
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name.startswith(("zhisuan_pool_", "zhisuan_scheduler_"))
    }


def test_the_same_counts_on_metrics(world: World, pool: ResourcePool) -> None:
    SchedulerLock.objects.update_or_create(
        name="admission",
        defaults={"last_cycle_at": timezone.now(), "last_cycle_ms": 250.0},
    )
    got = _scrape()

    def at(name: str, **labels: str) -> float:
        return got[(name, frozenset({"cluster": pool.cluster.name, "pool": "a800-train",
                                     **labels}.items()))]  # fmt: skip

    assert at("zhisuan_pool_devices", state="used") == 12
    assert at("zhisuan_pool_devices", state="free") == 35
    assert at("zhisuan_pool_devices", state="unavailable") == 9
    assert at("zhisuan_pool_stranded_devices") == 11
    assert at("zhisuan_pool_whole_free_nodes") == 3
    assert at("zhisuan_pool_largest_gang_devices", model="A800", tier="leaf") == 16
    assert at("zhisuan_pool_largest_gang_devices", model="A800", tier="pool") == 24
    assert at("zhisuan_pool_queued_jobs", reason="reserved") == 1
    assert at("zhisuan_pool_queued_devices") == 36
    assert got[("zhisuan_scheduler_last_cycle_duration_seconds", frozenset())] == 0.25


def test_a_server_whose_every_gpu_failed_is_out_of_service(world: World, client_for) -> None:
    pool = make_pool(name="h800")
    node = make_node(pool=pool, name="h0")
    for index in range(8):
        Device.objects.create(node=node, index=index, model="A800", health=NodeHealth.FAULTY)
    body = client_for(world.platform_admin).get(f"/api/v1/pools/{pool.pk}/topology/").json()
    [leaf] = body["spines"][0]["units"][0]["leaves"]
    assert [(n["state"], n["free"], n["broken"]) for n in leaf["nodes"]] == [("unavailable", 0, 8)]
    assert body["summary"]["unavailable"] == 8
    assert body["largest_gang"] == [{"model": "A800", "leaf": 0, "scalable_unit": 0, "pool": 0}]


def test_metrics_read_every_pool_in_the_same_queries(world: World, pool: ResourcePool) -> None:
    with CaptureQueriesContext(connection) as one:
        _scrape()
    for i in range(3):
        other = make_pool(name=f"extra-{i}")
        make_running(_job(world, world.tenant_a, other, 2), _node(other, f"x{i}", "leaf9", "su9"))
    with CaptureQueriesContext(connection) as four:
        got = _scrape()
    assert got[("zhisuan_pool_devices", frozenset({"cluster": other.cluster.name,
                "pool": "extra-2", "state": "used"}.items()))] == 2  # fmt: skip
    assert len(four.captured_queries) == len(one.captured_queries)
