"""Autoscaler decisions reach a Kubernetes cluster only through the outbox: the tick writes one
SCALE row per attempt, the relay applies the service's newest desired count."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.clusters.backends.simulated import SimulatedBackend
from apps.clusters.models import Cluster, ClusterKind
from apps.inference import services
from apps.inference.models import InferenceService, ScalingDecision, TrafficSample
from apps.inference.runtime_metrics import RuntimeTraffic
from apps.jobs import relay, workload
from apps.jobs.models import Job, JobState, OutboxAction, OutboxEntry, OutboxState
from apps.jobs.services import request_scale
from apps.quotas.models import Quota
from apps.scheduling.replicas import admit_replicas, held_replicas
from apps.tenancy.models import Role
from tests.conftest import World
from tests.factories import make_node, make_pool, make_running


def _service(
    world: World, kind: str = ClusterKind.KUBERNETES, min_replicas: int = 1
) -> InferenceService:
    cluster = Cluster.objects.create(name=f"c-{kind}", kind=kind)
    pool = make_pool(cluster=cluster)
    make_node(pool=pool)
    user = world.user("a", Role.MEMBER)
    service = services.create_service(
        tenant=user.memberships.get().tenant,
        owner=user,
        name="svc",
        pool=pool,
        settings={"model_uri": "s3://m/x", "min_replicas": min_replicas, "max_replicas": 6,
                  "target_value": 8.0},
    )  # fmt: skip
    make_running(service.job)
    service.refresh_from_db()
    return service


def _tick_with_a_change(service: InferenceService, seconds: int = 30) -> None:
    """Tick a service whose stored count (1) is below its minimum (2): the autoscaler's first
    decision raises it, whatever the simulated load does after that."""
    InferenceService.objects.filter(pk=service.pk).update(desired_replicas=1)
    start = timezone.now()
    for second in range(seconds):
        services.autoscale_tick(now=start + timedelta(seconds=second))
    service.refresh_from_db()


def _scale_rows(service: InferenceService) -> list[OutboxEntry]:
    return list(OutboxEntry.objects.filter(job_id=service.job_id, action=OutboxAction.SCALE))


def _cluster_with(service: InferenceService) -> SimulatedBackend:
    backend = SimulatedBackend(startup_s=0.0)
    job = Job.objects.select_related("tenant", "pool").get(pk=service.job_id)
    backend.apply(workload.build(job))
    return backend


def _desired_on(backend: SimulatedBackend, service: InferenceService) -> int:
    statuses, _ = backend.list_status()
    return next(s.replicas_desired for s in statuses if s.job_id == service.job_id)


def _reading(pods: int = 1, concurrency: float = 30.0) -> RuntimeTraffic:
    return RuntimeTraffic(
        pods=pods, running=concurrency, waiting=0.0, qps=5.0, p50_s=1.0, p95_s=2.0, p99_s=3.0,
        errors_per_s=0.5, gpu_by_pod={f"pod-{i}": 0.6 + 0.2 * i for i in range(pods)},
    )  # fmt: skip


def test_a_kubernetes_service_records_traffic_samples_from_its_runtime_metrics(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = _service(world, min_replicas=2)
    readings = iter([_reading(pods=2, concurrency=c) for c in range(1, 30)])
    monkeypatch.setattr(services, "kube_traffic", lambda _service: next(readings))
    start = timezone.now()
    for second in range(25):
        services.autoscale_tick(now=start + timedelta(seconds=second))
    samples = list(TrafficSample.objects.filter(service=service).order_by("at"))
    assert len(samples) == 2  # one per 10 s of readings (t=10 and t=21)
    first = samples[0]
    assert first.period_s == 10
    assert first.concurrency == pytest.approx(sum(range(1, 12)) / 11)  # readings t=0..10
    assert (first.qps, first.p50_ms, first.p95_ms, first.p99_ms) == (5.0, 1000, 2000, 3000)
    assert first.errors == 5  # 0.5 5xx/s over 10 s
    assert first.gpu_by_replica == {"pod-0": pytest.approx(0.6), "pod-1": pytest.approx(0.8)}
    assert first.gpu_util == pytest.approx(0.7)
    assert first.ready_replicas == 2


def test_without_a_metrics_reading_a_kubernetes_service_is_not_scaled(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = _service(world, min_replicas=2)
    monkeypatch.setattr(services, "kube_traffic", lambda _service: None)
    _tick_with_a_change(service)
    assert not ScalingDecision.objects.filter(service=service).exists()
    assert _scale_rows(service) == []  # made-up load never moves a real Deployment


def test_decisions_on_kubernetes_become_one_scale_row_relayed_with_the_latest_count(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = _service(world, min_replicas=2)
    monkeypatch.setattr(services, "kube_traffic", lambda _service: _reading())
    _tick_with_a_change(service)
    decided = list(
        ScalingDecision.objects.filter(service=service).values_list("current", "desired")
    )
    assert (
        decided and decided[0][0] == 1 and decided[0][1] >= 2
    )  # up from 1, to the minimum or more
    rows = _scale_rows(service)
    assert len(rows) == 1  # many decisions, one row: the count is read at relay time
    assert rows[0].state == OutboxState.PENDING

    backend = _cluster_with(service)
    assert relay.relay_one(backend) is True
    rows[0].refresh_from_db()
    assert rows[0].state == OutboxState.DONE
    assert _desired_on(backend, service) == service.desired_replicas


def _admit(service: InferenceService, replicas: int) -> None:
    """Give the tenant quota for ``replicas`` devices and admit that many replicas."""
    Quota.objects.create(tenant=service.tenant, pool=service.job.pool, accelerator_model="A800",
                         guarantee=replicas)  # fmt: skip
    admitted = admit_replicas(service.job, replicas, timezone.now())
    assert admitted.replicas == replicas, admitted.short


def test_the_relay_reads_the_count_at_relay_time_and_a_done_row_is_reused(world: World) -> None:
    service = _service(world)
    backend = _cluster_with(service)
    _admit(service, 5)
    InferenceService.objects.filter(pk=service.pk).update(desired_replicas=3)
    request_scale(service.job)
    InferenceService.objects.filter(pk=service.pk).update(desired_replicas=5)
    request_scale(service.job)  # still pending: nothing new
    assert len(_scale_rows(service)) == 1
    assert relay.relay_one(backend) is True
    assert _desired_on(backend, service) == 5
    assert relay.relay_one(backend) is False  # nothing left

    InferenceService.objects.filter(pk=service.pk).update(desired_replicas=2)
    request_scale(service.job)
    rows = _scale_rows(service)
    assert len(rows) == 1 and rows[0].state == OutboxState.PENDING and rows[0].tries == 0
    assert relay.relay_one(backend) is True
    assert _desired_on(backend, service) == 2
    assert held_replicas(service.job) == 2  # the three the cluster no longer runs are released


def test_the_relay_never_scales_past_what_the_scheduler_admitted(world: World) -> None:
    service = _service(world)
    backend = _cluster_with(service)
    InferenceService.objects.filter(pk=service.pk).update(desired_replicas=4)
    request_scale(service.job)
    assert relay.relay_one(backend) is True
    assert _desired_on(backend, service) == 1  # only the base replica holds devices


def test_a_simulated_cluster_gets_no_scale_rows(world: World) -> None:
    service = _service(world, ClusterKind.SIMULATED, min_replicas=2)
    _tick_with_a_change(service)
    assert ScalingDecision.objects.filter(service=service, current=1, desired=2).exists(), list(
        ScalingDecision.objects.filter(service=service).values_list("current", "desired")
    )
    assert _scale_rows(service) == []


def test_a_scale_for_a_job_no_longer_on_the_cluster_is_skipped(world: World) -> None:
    service = _service(world)
    backend = _cluster_with(service)
    request_scale(service.job)
    Job.objects.filter(pk=service.job_id).update(state=JobState.CANCELLED)
    assert relay.relay_one(backend) is True
    row = _scale_rows(service)[0]
    assert row.state == OutboxState.DONE
    assert row.last_error.startswith("skipped")
    assert _desired_on(backend, service) == 1  # untouched


def test_a_missing_deployment_fails_the_row_not_the_service(world: World) -> None:
    service = _service(world)
    request_scale(service.job)
    assert relay.relay_one(SimulatedBackend()) is True  # the workload is not there: 404
    row = _scale_rows(service)[0]
    assert row.state == OutboxState.FAILED
    assert "not on the cluster" in row.last_error
    assert Job.objects.get(pk=service.job_id).state == JobState.RUNNING
    request_scale(service.job)  # the next decision tries again
    assert _scale_rows(service)[0].state == OutboxState.PENDING


def test_a_new_attempt_on_kubernetes_is_brought_to_the_current_count(world: World) -> None:
    service = _service(world)
    _admit(service, 4)
    Job.objects.filter(pk=service.job_id).update(state=JobState.ADMITTED)
    InferenceService.objects.filter(pk=service.pk).update(desired_replicas=4)
    job = Job.objects.get(pk=service.job_id)
    OutboxEntry.objects.create(job=job, action=OutboxAction.APPLY, attempt=job.attempt)
    backend = SimulatedBackend(startup_s=0.0)
    assert relay.relay_one(backend) is True  # apply: the Deployment starts at min_replicas
    assert _desired_on(backend, service) == 1
    assert relay.relay_one(backend) is True  # then the scale row it queued
    assert _desired_on(backend, service) == 4
    assert [r.state for r in _scale_rows(service)] == [OutboxState.DONE]


def test_rollout_and_probe_settings_reach_the_workload_spec(world: World) -> None:
    service = _service(world)
    services.update_settings(
        service=service,
        changes={"max_surge": 0, "max_unavailable": 1, "liveness_path": "/live",
                 "readiness_path": "/v1/models", "probe_initial_delay_s": 60,
                 "probe_period_s": 20},
    )  # fmt: skip
    job = Job.objects.select_related("tenant", "pool").get(pk=service.job_id)
    inference = workload.build(job).inference
    assert inference is not None
    assert (inference.max_surge, inference.max_unavailable) == (0, 1)
    assert (inference.readiness_path, inference.liveness_path) == ("/v1/models", "/live")
    assert (inference.probe_initial_delay_s, inference.probe_period_s) == (60, 20)
    assert inference.replicas == 1  # the admitted count; the autoscaler's comes by scale


def test_a_job_spec_without_rollout_settings_gets_the_defaults(world: World) -> None:
    service = _service(world)
    job = Job.objects.select_related("tenant", "pool").get(pk=service.job_id)
    job.spec = {**job.spec, "inference": {"port": 8000}}
    inference = workload.build(job).inference
    assert inference is not None
    assert (inference.max_surge, inference.max_unavailable) == (1, 0)
    assert inference.liveness_path == "/health"
