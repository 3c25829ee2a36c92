"""Replicas an autoscaler adds are admitted against quota and free room like any job, and given
back (and billed) when the service shrinks. The race test runs on PostgreSQL with real
threads."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from apps.accounting.models import UsageSegment
from apps.clusters.backends.simulated import SimulatedBackend
from apps.clusters.models import Cluster, ClusterKind, Node, ResourcePool
from apps.inference import services
from apps.inference.models import InferenceService, ScalingDecision
from apps.inference.runtime_metrics import RuntimeTraffic
from apps.jobs import relay, workload
from apps.jobs.models import Allocation, Job, JobKind
from apps.jobs.services import request_scale, submit_job
from apps.quotas.models import Quota
from apps.scheduling.replicas import admit_replicas, held_replicas, release_replicas
from apps.tenancy.models import Role, Tenant
from tests.conftest import World
from tests.factories import make_node, make_pool, make_running


def _pool(kind: str = ClusterKind.KUBERNETES) -> ResourcePool:
    pool = make_pool(cluster=Cluster.objects.create(name=f"c-{kind}", kind=kind))
    make_node(pool=pool)  # 8 x A800
    return pool


def _service(world: World, pool: ResourcePool, tenant: str = "a") -> InferenceService:
    user = world.user(tenant, Role.MEMBER)
    service = services.create_service(
        tenant=user.memberships.get().tenant, owner=user, name=f"svc-{tenant}", pool=pool,
        settings={"model_uri": "s3://m/x", "min_replicas": 1, "max_replicas": 8,
                  "target_value": 4.0},
    )  # fmt: skip
    make_running(service.job)
    service.refresh_from_db()
    return service


def _quota(tenant: Tenant, pool: ResourcePool, guarantee: int, borrow: int = 0) -> None:
    Quota.objects.create(tenant=tenant, pool=pool, accelerator_model="A800",
                         guarantee=guarantee, borrow_limit=borrow)  # fmt: skip


def _running_b_job(
    world: World, pool: ResourcePool, *, devices: int, priority: int, node: Node | None = None
) -> Job:
    """A running one-replica training job of tenant b holding ``devices`` devices."""
    job = submit_job(
        tenant=world.tenant_b, owner=world.user("b", Role.MEMBER), name="train",
        kind=JobKind.TRAINING, pool=pool, priority=priority,
        spec={"image": "pytorch:2.5", "accelerator_models": ["A800"],
              "replica_groups": [{"name": "w", "replicas": 1, "accelerators": devices}]},
    )  # fmt: skip
    make_running(job, node=node)
    return job


def test_extra_replicas_stop_at_the_tenants_quota(world: World) -> None:
    pool = _pool()
    service = _service(world, pool)
    _quota(world.tenant_a, pool, guarantee=2, borrow=1)  # 3 devices in all; the base holds 1
    admitted = admit_replicas(service.job, 6, timezone.now())
    assert admitted.replicas == 3
    assert "quota" in admitted.short.english.lower(), admitted.short
    extras = Allocation.objects.filter(job=service.job, extra=True)
    assert extras.count() == 2
    assert sorted(extras.values_list("replica_index", flat=True)) == [1, 2]
    # no device is handed out twice: base and extras are on distinct devices
    devices = [d for a in Allocation.objects.filter(job=service.job) for d in a.devices]
    assert len(devices) == len(set(devices)) == 3


def test_extra_replicas_only_take_free_room_and_never_preempt(world: World) -> None:
    pool = _pool()
    _quota(world.tenant_a, pool, guarantee=8)
    _quota(world.tenant_b, pool, guarantee=0, borrow=8)
    service = _service(world, pool)
    other = _running_b_job(world, pool, devices=5, priority=5)  # b borrows 5 of 8 at P5
    admitted = admit_replicas(service.job, 8, timezone.now())
    assert admitted.replicas == 3  # 1 base + the 2 free devices; b's borrowed work is untouched
    assert admitted.short
    assert Job.objects.get(pk=other.pk).state == "running"


def test_a_stopped_service_is_refused_in_a_note(world: World) -> None:
    pool = _pool()
    service = _service(world, pool)
    _quota(world.tenant_a, pool, guarantee=4)
    Job.objects.filter(pk=service.job_id).update(state="succeeded")
    Allocation.objects.filter(job=service.job).delete()
    admitted = admit_replicas(service.job, 2, timezone.now())
    assert admitted.replicas == 0
    assert admitted.short.english == "the service is not running"
    assert admitted.short.detail == [{"key": "serviceNotRunning", "args": {}}]


def test_the_tick_records_what_was_wanted_and_why_fewer_were_admitted(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    pool = _pool()
    service = _service(world, pool)
    _quota(world.tenant_a, pool, guarantee=2)
    busy = RuntimeTraffic(pods=1, running=40.0, waiting=0.0, qps=10.0, p50_s=1.0, p95_s=9.0,
                          p99_s=9.5)  # fmt: skip
    monkeypatch.setattr(services, "kube_traffic", lambda _service: busy)
    start = timezone.now()
    for second in range(20):
        services.autoscale_tick(now=start + timedelta(seconds=second))
    service.refresh_from_db()
    assert service.desired_replicas == 2  # what the quota admits, not the 8 wanted
    capped = ScalingDecision.objects.filter(service=service).exclude(limited_by="").first()
    assert capped is not None
    assert capped.desired == 2 and capped.wanted is not None and capped.wanted > 2
    assert "quota" in capped.limited_by.lower()
    # The same as the core's phrases, for the dashboard to say in the reader's language.
    [said] = capped.limited_detail  # 1 of the 7 extras placed; the rest over the quota
    assert said["key"] == "gangOff" and said["args"]["rest"][0]["key"] == "overQuota"
    # a refused scale-up is not asked again every tick: one decision, not twenty
    assert ScalingDecision.objects.filter(service=service).count() == 1


def test_the_relay_releases_extras_after_the_cluster_shrank_and_bills_them(world: World) -> None:
    pool = _pool()
    service = _service(world, pool)
    _quota(world.tenant_a, pool, guarantee=4)
    backend = SimulatedBackend(startup_s=0.0)
    backend.apply(workload.build(Job.objects.get(pk=service.job_id)))
    added_at = timezone.now()
    assert admit_replicas(service.job, 4, added_at).replicas == 4
    InferenceService.objects.filter(pk=service.pk).update(desired_replicas=1)
    request_scale(service.job)
    assert relay.relay_one(backend) is True
    assert held_replicas(service.job) == 1  # the base replica stays
    segments = list(UsageSegment.objects.filter(job=service.job))
    assert [(s.reason, s.device_milli) for s in segments] == [("ScaledDown", 3000)]
    assert segments[0].started_at == added_at  # billed from its own admission
    assert release_replicas(service.job, 0, timezone.now()) == 0  # the base is never released


@pytest.mark.django_db(transaction=True)
def test_concurrent_scale_ups_never_exceed_the_quota() -> None:
    assert connection.vendor == "postgresql", "races are tested on PostgreSQL"
    world = World()
    pool = _pool()
    services_ = [_service(world, pool) for _ in range(4)]  # tenant a, 4 base devices held
    _quota(world.tenant_a, pool, guarantee=6)  # room for 2 extras among all four
    barrier = threading.Barrier(len(services_))
    results: list[int] = []

    def scale(service: InferenceService) -> None:
        try:
            barrier.wait()
            results.append(admit_replicas(service.job, 3, timezone.now()).replicas)
        finally:
            connection.close()

    threads = [threading.Thread(target=scale, args=(s,)) for s in services_]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 4
    assert Allocation.objects.filter(job__tenant=world.tenant_a).count() == 6
    assert Allocation.objects.filter(extra=True).count() == 2
    assert sum(results) == 6


def test_the_relay_hands_the_cluster_the_nodes_of_the_replicas_that_stay(world: World) -> None:
    pool = _pool()
    first = pool.nodes.get()
    second = make_node(pool=pool)
    _quota(world.tenant_a, pool, guarantee=8)
    _quota(world.tenant_b, pool, guarantee=8)
    _running_b_job(world, pool, devices=7, priority=4, node=first)  # one device stays free
    service = _service(world, pool)  # its base replica takes it
    backend = SimulatedBackend(startup_s=0.0)
    backend.apply(workload.build(Job.objects.get(pk=service.job_id)))
    assert backend.serve_nodes[service.job_id] == (first.name,)
    assert admit_replicas(service.job, 3, timezone.now()).replicas == 3  # extras on the second

    InferenceService.objects.filter(pk=service.pk).update(desired_replicas=3)
    request_scale(service.job)
    assert relay.relay_one(backend) is True
    assert backend.serve_nodes[service.job_id] == (first.name, second.name)
    InferenceService.objects.filter(pk=service.pk).update(desired_replicas=1)
    request_scale(service.job)
    assert relay.relay_one(backend) is True
    assert backend.serve_nodes[service.job_id] == (first.name,)  # the second leaves the service
    assert held_replicas(service.job) == 1
