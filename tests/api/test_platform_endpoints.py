"""Health, readiness, metrics, overview, schema drift, and the SPA fallback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection
from django.test import Client, override_settings
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from apps.tenancy.models import Role
from tests.conftest import World
from tests.factories import make_node, make_pool, make_project

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.django_db


def test_healthz_and_readyz_report_every_dependency() -> None:
    client = APIClient()
    assert client.get("/healthz").json() == {"status": "ok"}
    body = client.get("/readyz").json()
    assert body["status"] == "ok"
    assert set(body["checks"]) == {"database", "broker", "channel_layer"}
    assert all(check["ok"] for check in body["checks"].values())


def test_readyz_fails_when_a_dependency_is_down(monkeypatch) -> None:
    from apps.core import health

    def broken() -> None:
        raise ConnectionError("redis down")

    monkeypatch.setitem(health.CHECKS, "broker", broken)
    response = APIClient().get("/readyz")
    assert response.status_code == 503
    assert response.json()["checks"]["broker"] == {
        "ok": False,
        "error": "redis down",
        "ms": response.json()["checks"]["broker"]["ms"],
    }


def test_metrics_exposes_request_counters(world: World, client_for) -> None:
    client_for(world.platform_admin).get("/api/v1/overview/")
    text = APIClient().get("/metrics").content.decode()
    assert 'zhisuan_http_requests_total{method="GET",route="api/v1/overview/",status="200"}' in text


@override_settings(ALLOWED_HOSTS=["zhisuan.example.com"])
def test_probes_and_metrics_answer_a_pod_ip_host() -> None:
    """The kubelet and Prometheus address a pod by its IP: the probes and /metrics answer it,
    every other path still refuses a host it does not serve."""
    pod = Client(HTTP_HOST="10.42.0.17:8000")
    assert pod.get("/healthz").status_code == 200
    assert pod.get("/metrics").status_code == 200
    assert "zhisuan_http_requests_total" in pod.get("/metrics").content.decode()
    assert pod.get("/readyz").status_code in (200, 503)  # what its checks say, not the host
    assert pod.get("/api/v1/overview/").status_code == 400
    assert Client(HTTP_HOST="zhisuan.example.com").get("/healthz").status_code == 200


@override_settings(ALLOWED_HOSTS=["zhisuan.example.com"], SECURE_SSL_REDIRECT=True)
def test_probes_and_metrics_are_not_redirected_to_https() -> None:
    """Production redirects plain HTTP to HTTPS; the kubelet and Prometheus speak plain HTTP
    inside the cluster, so their paths are answered before the redirect."""
    pod = Client(HTTP_HOST="10.42.0.17:8000")
    assert pod.get("/healthz").status_code == 200
    assert pod.get("/metrics").status_code == 200
    site = Client(HTTP_HOST="zhisuan.example.com")
    assert site.get("/api/v1/overview/").status_code == 301


def test_a_cluster_of_two_pools_counts_each_gpu_once(world: World, client_for) -> None:
    train = make_pool()
    infer = make_pool(cluster=train.cluster)
    make_node(pool=train, accelerator_count=8)
    make_node(pool=train, accelerator_count=8, is_spare=True)
    make_node(pool=infer, accelerator_count=4)
    rows = client_for(world.platform_admin).get("/api/v1/clusters/").json()
    rows = rows.get("results", rows) if isinstance(rows, dict) else rows
    (row,) = [r for r in rows if r["id"] == train.cluster_id]
    assert (row["pools"], row["nodes"], row["gpus"]) == (2, 3, 12)  # was 24: once per pool


def test_overview_counts_real_capacity(world: World, client_for) -> None:
    pool = make_pool()
    for _ in range(3):
        make_node(pool=pool, accelerator_count=8, accelerator_model="A800")
    make_node(pool=pool, accelerator_count=8, accelerator_model="A800", is_spare=True)
    make_node(pool=pool, accelerator_count=4, accelerator_model="Ascend910B",
                accelerator_vendor="huawei")  # fmt: skip
    body = client_for(world.user("a", Role.VIEWER)).get("/api/v1/overview/").json()
    assert body["gpus"] == 28  # spares are held back, not schedulable capacity
    assert body["spare_gpus"] == 8  # ...and counted apart, so the cluster page's total adds up
    assert body["nodes"] == 5 and body["clusters"] == 1 and body["pools"] == 1
    assert body["tenants"] == 1
    assert body["gpus_by_model"] == [
        {"model": "A800", "vendor": "nvidia", "count": 24},
        {"model": "Ascend910B", "vendor": "huawei", "count": 4},
    ]


def test_cluster_list_has_counts_in_constant_queries(world: World, client_for) -> None:
    client = client_for(world.platform_admin)
    make_pool()
    with CaptureQueriesContext(connection) as one:
        client.get("/api/v1/clusters/")
    for _ in range(5):
        make_node()
    with CaptureQueriesContext(connection) as six:
        body = client.get("/api/v1/clusters/").json()
    assert len(body["results"]) == 6
    assert len(six.captured_queries) == len(one.captured_queries)


def test_project_list_query_count_is_constant(world: World, client_for) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    make_project(tenant=world.tenant_a, created_by=world.platform_admin)
    with CaptureQueriesContext(connection) as one:
        client.get("/api/v1/tenants/tenant-a/projects/")
    for _ in range(10):
        make_project(tenant=world.tenant_a, created_by=world.user("a", Role.MEMBER))
    with CaptureQueriesContext(connection) as many:
        client.get("/api/v1/tenants/tenant-a/projects/")
    assert len(many.captured_queries) == len(one.captured_queries)


def test_cursor_pagination(world: World, client_for) -> None:
    for i in range(7):
        make_project(tenant=world.tenant_a, name=f"p{i}")
    client = client_for(world.user("a", Role.MEMBER))
    first = client.get("/api/v1/tenants/tenant-a/projects/?page_size=5").json()
    assert len(first["results"]) == 5 and first["next"] and first["previous"] is None
    second = client.get(first["next"]).json()
    assert len(second["results"]) == 2 and second["next"] is None
    names = {p["name"] for p in first["results"] + second["results"]}
    assert names == {f"p{i}" for i in range(7)}


def test_committed_openapi_schema_matches_the_code(tmp_path: Path) -> None:
    out = tmp_path / "schema.yaml"
    subprocess.run(
        [sys.executable, "manage.py", "spectacular", "--file", str(out), "--validate",
         "--fail-on-warn"],
        cwd=ROOT,
        check=True,
        env={"DJANGO_SETTINGS_MODULE": "config.settings.dev", "PATH": "/usr/bin:/bin",
             "ZS_DATA_DIR": str(tmp_path)},
    )  # fmt: skip
    committed = (ROOT / "openapi" / "schema.yaml").read_text()
    assert out.read_text() == committed, "OpenAPI schema drifted: run `make schema` and commit it"


def test_api_docs_are_served(world: World, client_for) -> None:
    assert APIClient().get("/api/docs/").status_code == 200
    assert APIClient().get("/api/schema/").status_code == 200


def test_spa_fallback_serves_the_dashboard_or_says_how_to_build_it() -> None:
    response = APIClient().get("/jobs/123")
    if (ROOT / "frontend" / "dist" / "index.html").exists():
        assert response.status_code == 200 and b'<div id="root"' in response.content
    else:
        assert response.status_code == 503 and b"make run" in response.content
    assert APIClient().get("/api/v1/nope/").status_code == 404


def test_pool_capacity_says_what_one_replica_can_ask_for(world: World, client_for) -> None:
    pool = make_pool()
    make_node(pool=pool, accelerator_count=8, accelerator_model="A800")
    make_node(pool=pool, accelerator_count=4, accelerator_model="A800")
    make_node(pool=pool, accelerator_count=16, accelerator_model="A800", is_spare=True)
    body = client_for(world.user("a", Role.VIEWER)).get("/api/v1/pools/").json()
    (row,) = [p for p in body if p["id"] == pool.pk]
    assert row["capacity"] == [{"model": "A800", "vendor": "nvidia", "devices": 12, "per_node": 8}]


def test_a_bad_job_name_is_told_the_rule(world: World, client_for) -> None:
    pool = make_pool()
    make_node(pool=pool)
    body = {"name": "My Job #1", "kind": "training", "pool": pool.pk, "image": "pytorch:2.5",
            "replica_groups": [{"name": "Worker", "replicas": 1, "accelerators": 8}],
            "volumes": [{"name": "data", "claim": "Team_X", "mount_path": "data:ro"}]}  # fmt: skip
    response = client_for(world.user("a", Role.MEMBER)).post(
        "/api/v1/tenants/tenant-a/jobs/", body, format="json"
    )
    assert response.status_code == 400
    errors = response.json()["errors"]
    rule = "Use lower-case letters, digits and '-', starting and ending with a letter or digit."
    assert errors["name"] == [rule]
    assert errors["replica_groups"] == {"0": {"name": [rule]}}
    assert errors["volumes"] == {"0": {
        "claim": [f"A claim name: {rule}"],
        "mount_path": ["An absolute path inside the container, without ':'."],
    }}  # fmt: skip
