"""The inference service API: creation (with its job), validation, isolation, roles, and the
embedded tick producing metrics and recorded decisions."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.utils import timezone
from rest_framework.test import APIClient

from apps.accounts.models import User
from apps.clusters.models import ClusterKind
from apps.inference import services
from apps.inference.models import InferenceService, ScalingDecision, TrafficSample
from apps.jobs.models import Job, JobKind, JobState
from apps.tenancy.models import Role
from tests.conftest import World
from tests.factories import make_node, make_pool, make_running

Client = Callable[[User | None], APIClient]
URL = "/api/v1/tenants/{}/inference/services/"


def payload(pool_id: int, **kw: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "name": "chat",
        "pool": pool_id,
        "model_uri": "s3://models/llama-3-8b",
        "accelerators": 1,
        "min_replicas": 1,
        "max_replicas": 4,
        "target_metric": "concurrency",
        "target_value": 24,
    }
    body.update(kw)
    return body


def test_member_creates_a_service_and_its_inference_job(world: World, client_for: Client) -> None:
    pool = make_pool()
    make_node(pool=pool)
    client = client_for(world.user("a", Role.MEMBER))
    response = client.post(URL.format("tenant-a"), payload(pool.pk), format="json")
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["runtime_image"] == "vllm/vllm-openai:v0.6.3"
    assert body["state"] == "queued"
    job = Job.objects.get(pk=body["job"])
    assert job.kind == JobKind.INFERENCE
    assert job.spec["inference"] == {
        "port": 8000,
        "readiness_path": "/health",
        "liveness_path": "/health",
        "probe_initial_delay_s": 30,
        "probe_period_s": 10,
        "max_surge": 1,
        "max_unavailable": 0,
    }
    assert job.spec["args"] == ["--model", "s3://models/llama-3-8b", "--port", "8000"]
    assert job.spec["replica_groups"][0]["accelerators"] == 1
    assert job.tenant == world.tenant_a


def test_validation_is_a_400_with_field_errors(world: World, client_for: Client) -> None:
    pool = make_pool()
    make_node(pool=pool)
    client = client_for(world.user("a", Role.MEMBER))
    bad = payload(
        pool.pk,
        min_replicas=5,
        max_replicas=2,
        accelerators=1,
        accelerator_milli=500,
        runtime_image="Not An Image!",
        model_uri="ftp:/x",
        target_metric="cpu",
        max_surge=0,
        max_unavailable=0,
    )
    response = client.post(URL.format("tenant-a"), bad, format="json")
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert set(errors) >= {"runtime_image", "model_uri", "target_metric"}
    response = client.post(
        URL.format("tenant-a"),
        payload(
            pool.pk,
            min_replicas=5,
            max_replicas=2,
            accelerator_milli=500,
            max_surge=0,
            max_unavailable=0,
        ),
        format="json",
    )
    assert response.status_code == 400
    assert set(response.json()["errors"]) == {"min_replicas", "accelerator_milli", "max_surge"}
    response = client.post(URL.format("tenant-a"), payload(pool.pk, min_replicas=0), format="json")
    assert response.status_code == 400
    assert set(response.json()["errors"]) == {"scale_to_zero"}
    # A misspelt setting is refused, not deployed with the default; a bad name says the rule.
    typo = payload(pool.pk, max_replica=8, gpus=2, name="Bad_Name")
    response = client.post(URL.format("tenant-a"), typo, format="json")
    assert response.status_code == 400
    rule = "Use lower-case letters, digits and '-', starting and ending with a letter or digit."
    assert response.json()["errors"] == {  # every problem in one answer
        "max_replica": ["Unknown field; it cannot be set on an inference service."],
        "gpus": ["Unknown field; it cannot be set on an inference service."],
        "name": [rule],
    }
    urgent = client.post(URL.format("tenant-a"), payload(pool.pk, priority=1), format="json")
    assert urgent.json()["errors"] == {
        "priority": ["P1 may preempt other work; only tenant admins can submit P0-P2."]
    }
    typo.pop("max_replica"), typo.pop("gpus")
    response = client.post(URL.format("tenant-a"), typo, format="json")
    assert response.json()["errors"] == {"name": [rule]}
    assert InferenceService.objects.count() == 0
    assert Job.objects.count() == 0


def _service(world: World, tenant: str = "a") -> InferenceService:
    pool = make_pool()
    make_node(pool=pool)
    user = world.user(tenant, Role.MEMBER)
    return services.create_service(
        tenant=user.memberships.get().tenant,
        owner=user,
        name="svc",
        pool=pool,
        settings={
            "model_uri": "s3://m/x",
            "min_replicas": 1,
            "max_replicas": 6,
            "target_value": 8.0,
        },
    )


def test_another_tenants_service_is_a_404(world: World, client_for: Client) -> None:
    service = _service(world, "b")
    client = client_for(world.user("a", Role.TENANT_ADMIN))
    listing = client.get(URL.format("tenant-a")).json()
    ids = [s["id"] for s in (listing["results"] if isinstance(listing, dict) else listing)]
    assert service.pk not in ids
    for suffix in ("", "metrics/", "decisions/"):
        url = f"{URL.format('tenant-a')}{service.pk}/{suffix}"
        assert client.get(url).status_code == 404
    response = client.patch(
        f"{URL.format('tenant-a')}{service.pk}/", {"max_replicas": 9}, format="json"
    )
    assert response.status_code == 404
    assert client.get(f"{URL.format('tenant-b')}{service.pk}/").status_code == 404
    service.refresh_from_db()
    assert service.max_replicas == 6


def test_viewer_cannot_change_settings(world: World, client_for: Client) -> None:
    service = _service(world)
    client = client_for(world.user("a", Role.VIEWER))
    url = f"{URL.format('tenant-a')}{service.pk}/"
    assert client.get(url).status_code == 200
    assert client.patch(url, {"max_replicas": 9}, format="json").status_code == 403
    service.refresh_from_db()
    assert service.max_replicas == 6


def test_member_patches_scaling_settings(world: World, client_for: Client) -> None:
    service = _service(world)
    client = client_for(world.user("a", Role.MEMBER))
    url = f"{URL.format('tenant-a')}{service.pk}/"
    response = client.patch(url, {"max_replicas": 9, "target_metric": "qps"}, format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["max_replicas"] == 9
    response = client.patch(url, {"max_replicas": 0}, format="json")
    assert response.status_code == 400
    response = client.patch(url, {"name": "other"}, format="json")
    assert response.status_code == 400
    assert set(response.json()["errors"]) == {"name"}
    # Each replica's size was admitted with the job: another size is another service.
    accelerators = service.accelerators
    response = client.patch(url, {"accelerators": accelerators + 1}, format="json")
    assert response.status_code == 400
    assert set(response.json()["errors"]) == {"accelerators"}
    response = client.patch(url, {"accelerators": 0, "accelerator_milli": 500}, format="json")
    assert response.status_code == 400
    assert set(response.json()["errors"]) == {"accelerators", "accelerator_milli"}
    service.refresh_from_db()
    assert (service.accelerators, service.accelerator_milli) == (accelerators, 0)
    # The same size again is no change.
    assert client.patch(url, {"accelerators": accelerators}, format="json").status_code == 200


def test_tick_steps_running_services_and_records_metrics_and_decisions(
    world: World, client_for: Client
) -> None:
    assert services.autoscale_tick() == 0  # nothing running: nothing to do
    service = _service(world)
    make_running(service.job)
    start = timezone.now()
    for second in range(120):
        assert services.autoscale_tick(now=start + timedelta(seconds=second)) == 1
    assert TrafficSample.objects.filter(service=service).count() == 12
    assert ScalingDecision.objects.filter(service=service).exists()
    client = client_for(world.user("a", Role.VIEWER))
    base = f"{URL.format('tenant-a')}{service.pk}/"
    page = client.get(f"{base}metrics/").json()
    assert page["next"] is None  # one page of 12 (cursor pages of 50 by default)
    metrics = page["results"]
    assert len(metrics) == 12
    assert metrics[0]["at"] > metrics[-1]["at"]  # newest first
    assert set(metrics[0]) >= {
        "qps",
        "concurrency",
        "p50_ms",
        "p95_ms",
        "p99_ms",
        "errors",
        "gpu_util",
        "gpu_by_replica",
        "ready_replicas",
    }
    newest = metrics[0]
    assert len(newest["gpu_by_replica"]) == newest["ready_replicas"]
    decisions = client.get(f"{base}decisions/").json()["results"]
    assert decisions[0]["reason"]
    assert {"observed_stable", "observed_panic", "current", "desired"} <= set(decisions[0])
    service.refresh_from_db()
    assert service.desired_replicas >= 1
    Job.objects.filter(pk=service.job_id).update(state=JobState.CANCELLED)
    assert services.autoscale_tick() == 0
    assert services._RUNTIME == {}


def test_forecast_quantile_is_on_by_default_validated_and_reaches_the_scaler(
    world: World, client_for: Client
) -> None:
    service = _service(world)
    assert services.scaler_config(service).forecast_quantile == 0.9  # the benchmarked default
    client = client_for(world.user("a", Role.MEMBER))
    url = f"{URL.format('tenant-a')}{service.pk}/"
    bad = client.patch(url, {"forecast_quantile": 1.5}, format="json")
    assert bad.status_code == 400 and set(bad.json()["errors"]) == {"forecast_quantile"}
    off = client.patch(url, {"forecast_quantile": None}, format="json")
    assert off.status_code == 200 and off.json()["forecast_quantile"] is None
    service.refresh_from_db()
    assert services.scaler_config(service).forecast_quantile is None


def test_a_settings_change_keeps_the_running_autoscaler(
    world: World, client_for: Client, django_capture_on_commit_callbacks: Any
) -> None:
    service = _service(world)
    make_running(service.job)
    start = timezone.now()
    for second in range(60):
        services.autoscale_tick(now=start + timedelta(seconds=second))
    runtime = services._RUNTIME[service.pk]
    seen = len(runtime.scaler._window.samples)
    client = client_for(world.user("a", Role.MEMBER))
    url = f"{URL.format('tenant-a')}{service.pk}/"
    with django_capture_on_commit_callbacks(execute=True):
        body = {"max_replicas": 3, "cold_start_s": 30}
        assert client.patch(url, body, format="json").status_code == 200
    # The same scaler and replicas, with the new settings: what it saw and holds is kept
    # (rebuilt, it read a sudden quiet and dropped replicas at once).
    assert services._RUNTIME[service.pk] is runtime
    assert runtime.scaler.config.max_replicas == 3
    assert runtime.sim.model.cold_start_s == 30
    assert len(runtime.scaler._window.samples) == seen
    services._RUNTIME.pop(service.pk, None)


def test_the_autoscaler_command_runs_the_tick_for_running_services(world: World) -> None:
    from django.core.management import call_command

    service = _service(world)
    make_running(service.job)
    services._RUNTIME.pop(service.pk, None)
    call_command("inference_autoscaler", ticks=2, interval=0.01)
    assert service.pk in services._RUNTIME  # the loop stepped the service's scaler
    services._RUNTIME.pop(service.pk, None)


def test_a_cancelled_service_reports_no_replicas(world: World, client_for: Client) -> None:
    service = _service(world)
    InferenceService.objects.filter(pk=service.pk).update(
        desired_replicas=4, ready_replicas=2, loading_replicas=2, panic=True
    )
    client = client_for(world.user("a", Role.MEMBER))
    url = f"{URL.format('tenant-a')}{service.pk}/"
    running = client.get(url).json()
    assert (running["desired_replicas"], running["ready_replicas"]) == (4, 2)
    cancel = client.post(f"/api/v1/tenants/tenant-a/jobs/{service.job.pk}/cancel/")
    assert cancel.status_code == 200, cancel.json()
    after = client.get(url).json()
    assert after["state"] == "cancelled"
    counts = ("desired_replicas", "ready_replicas", "loading_replicas", "panic")
    assert {key: after[key] for key in counts} == dict.fromkeys(counts, 0)


def test_path_and_uri_errors_say_what_is_expected(world: World, client_for: Client) -> None:
    pool = make_pool()
    make_node(pool=pool)
    client = client_for(world.user("a", Role.MEMBER))
    bad = payload(pool.pk, model_uri="ftp:/x", readiness_path="health")
    errors = client.post(URL.format("tenant-a"), bad, format="json").json()["errors"]
    assert errors == {
        "model_uri": [
            "A URI with scheme s3, gs, pvc, hf, oss, http or https, or an absolute path."
        ],
        "readiness_path": ["An HTTP path starting with '/' (letters, digits and . _ ~ / -)."],
    }


def test_a_service_says_who_owns_it_and_whether_its_traffic_is_simulated(
    world: World, client_for: Client
) -> None:
    service = _service(world)
    client = client_for(world.user("a", Role.MEMBER))
    url = f"{URL.format('tenant-a')}{service.pk}/"
    body = client.get(url).json()
    # The owner, with tenant admins, may stop it; the simulated cluster makes its load up.
    assert (body["owner"], body["simulated"]) == (world.user("a", Role.MEMBER).username, True)
    service.job.pool.cluster.kind = ClusterKind.KUBERNETES
    service.job.pool.cluster.save(update_fields=["kind"])
    listed = client.get(URL.format("tenant-a")).json()["results"]
    assert [(s["id"], s["simulated"]) for s in listed] == [(service.pk, False)]
