"""History of one GPU: the embedded collector's last hour, Prometheus' series on a real
cluster (a real Prometheus scraping the DCGM exporter), and who may read it."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from django.test import override_settings
from rest_framework.test import APIClient

from apps.accounts.models import User
from apps.jobs.models import Allocation
from apps.telemetry import gpu_history
from apps.telemetry import metrics as m
from apps.telemetry.collector import Collector
from apps.telemetry.exporter import serve
from apps.telemetry.gpu_history import RecentGpuHistory, point_of
from apps.telemetry.inventory import load_inventory
from apps.telemetry.sources.prometheus import PrometheusSource
from apps.telemetry.sources.simulated import SimulatedSource, gpu_values
from apps.tenancy.models import Role
from tests.conftest import World
from tests.net import free_port
from tests.prometheus import requires_prometheus, running_prometheus
from tests.telemetry.helpers import make_cluster

Client = Callable[[User | None], APIClient]
URL = "/api/v1/telemetry/gpu-history/"
NOW = 1_800_000_000.0


def _sample(at: float, util: float) -> m.Collection:
    values = {m.GPU_UTIL: util, m.FB_USED: 20_000.0, m.FB_FREE: 60_000.0, m.POWER: 300.0,
              m.GPU_TEMP: 64.0, m.SM_ACTIVE: 0.5}  # fmt: skip
    return m.Collection(at=at, gpus=[m.GpuSample("gpu-00", 3, "u", "A800", values)], nodes=[])


def test_one_point_per_step_for_the_last_hour() -> None:
    history = RecentGpuHistory(step_s=10, keep_s=60)
    kept = [history.record(_sample(NOW + s, util=float(s))) for s in range(0, 100)]
    assert sum(kept) == 10  # one sample in every 10 s, the first of its step
    points = history.points("gpu-00", 3, 0, NOW + 1000)
    assert [p.util for p in points] == [40.0, 50.0, 60.0, 70.0, 80.0, 90.0]  # the last minute
    assert history.points("gpu-00", 3, NOW + 55, NOW + 75) == points[2:4]
    assert history.points("gpu-00", 2, 0, NOW + 1000) == []
    first = points[0]
    assert (first.fb_used_pct, first.power_w, first.temp_c, first.sm_active_pct) == (
        25.0, 300.0, 64.0, 50.0
    )  # fmt: skip


def test_a_point_of_a_gpu_without_memory_figures_reads_zero() -> None:
    assert point_of(NOW, {m.GPU_UTIL: 12.0}).fb_used_pct == 0.0


@pytest.fixture
def recent(world: World) -> Iterator[RecentGpuHistory]:
    """The embedded default: no Redis, no Prometheus; the collector fills the module's ring
    from the simulated source over two minutes of its clock."""
    make_cluster(world)
    clock = [NOW]
    inventory = load_inventory()
    source = SimulatedSource(inventory=lambda: inventory, seed=3, clock=lambda: clock[0])
    saved = gpu_history.RECENT
    gpu_history.RECENT = RecentGpuHistory()
    with override_settings(REDIS_URL="", TELEMETRY_SOURCE="simulated"):
        collector = Collector(source=source, rollups=False, gpu_history=gpu_history.RECENT)
        for second in range(0, 120, 5):
            clock[0] = NOW + second
            collector.tick()
        yield gpu_history.RECENT
    gpu_history.RECENT = saved


def test_an_admin_reads_a_gpus_last_hour_from_the_embedded_collector(
    recent: RecentGpuHistory, world: World, client_for: Client
) -> None:
    inventory = load_inventory()
    slot = next(g for g in inventory.gpus if (g.hostname, g.gpu) == ("gpu-00", 1))
    with override_settings(REDIS_URL="", TELEMETRY_SOURCE="simulated"):
        answer = client_for(world.platform_admin).get(
            URL, {"node": "gpu-00", "gpu": "1", "start": "2027-01-15T07:00:00Z",
                  "end": "2027-01-15T09:00:00Z"},
        )  # fmt: skip
    assert answer.status_code == 200, answer.data
    body = answer.data
    assert (body["source"], body["resolution_s"], body["kept_s"]) == ("recent", 10, 3600)
    assert len(body["points"]) == 12  # two minutes, one point every 10 s
    first = body["points"][0]
    assert first["ts"] == "2027-01-15T08:00:00Z"
    assert first["util"] == round(gpu_values(slot, 3, int(NOW))[m.GPU_UTIL], 1)
    assert 70 <= first["util"] <= 98  # job a's GPU is busy


def test_unknown_gpus_and_bad_windows_are_refused(
    recent: RecentGpuHistory, world: World, client_for: Client
) -> None:
    with override_settings(REDIS_URL="", TELEMETRY_SOURCE="simulated"):
        admin = client_for(world.platform_admin)
        for query in [{"node": "gpu-00", "gpu": "8"}, {"node": "gpu-77", "gpu": "0"}]:
            assert admin.get(URL, query).status_code == 404
        bad = admin.get(URL, {"node": "gpu-00", "gpu": "-1"})
        assert bad.status_code == 400 and "gpu" in bad.data["errors"]
        reversed_window = admin.get(URL, {"node": "gpu-00", "gpu": "0",
                                          "start": "2027-01-15T09:00:00Z",
                                          "end": "2027-01-15T08:00:00Z"})  # fmt: skip
        assert reversed_window.status_code == 400


def test_members_read_their_tenants_gpus_from_when_it_got_them(
    recent: RecentGpuHistory, world: World, client_for: Client
) -> None:
    """Tenant a's job holds GPUs 0-3 of gpu-00 (since 08:01 here); b's holds 0-1 of gpu-01."""
    Allocation.objects.filter(job__tenant=world.tenant_a).update(
        created_at=datetime.fromtimestamp(NOW + 60, tz=UTC)
    )
    window = {"start": "2027-01-15T07:00:00Z", "end": "2027-01-15T09:00:00Z"}
    with override_settings(REDIS_URL="", TELEMETRY_SOURCE="simulated"):
        member = client_for(world.user("a", Role.VIEWER))
        answer = member.get(URL, {"node": "gpu-00", "gpu": "2", **window})
        assert answer.status_code == 200
        stamps = [p["ts"] for p in answer.data["points"]]
        assert stamps[0] == "2027-01-15T08:01:00Z" and len(stamps) == 6  # not before its hold
        admin = client_for(world.platform_admin).get(URL, {"node": "gpu-00", "gpu": "2", **window})
        assert len(admin.data["points"]) == 12
        # Another tenant's GPU, and one of this node no job of the tenant holds, are not found.
        assert member.get(URL, {"node": "gpu-01", "gpu": "0", **window}).status_code == 404
        assert member.get(URL, {"node": "gpu-00", "gpu": "5", **window}).status_code == 404
        outsider = client_for(world.user("b", Role.TENANT_ADMIN))
        assert outsider.get(URL, {"node": "gpu-00", "gpu": "2", **window}).status_code == 404


def test_without_prometheus_a_separate_collector_process_has_no_gpu_history(
    world: World, client_for: Client
) -> None:
    make_cluster(world)
    with override_settings(REDIS_URL="redis://127.0.0.1:6379/0", TELEMETRY_SOURCE="simulated"):
        answer = client_for(world.platform_admin).get(URL, {"node": "gpu-00", "gpu": "0"})
    assert answer.status_code == 503
    assert "Prometheus" in str(answer.data["detail"])


def test_an_unreachable_prometheus_is_a_503_not_a_500(world: World, client_for: Client) -> None:
    make_cluster(world)
    url = f"http://127.0.0.1:{free_port()}"
    with override_settings(TELEMETRY_SOURCE="prometheus", PROMETHEUS_URL=url):
        answer = client_for(world.platform_admin).get(URL, {"node": "gpu-00", "gpu": "0"})
    assert answer.status_code == 503
    assert "Prometheus did not answer" in str(answer.data["detail"])


@requires_prometheus
@pytest.mark.django_db(transaction=True)
def test_on_a_real_cluster_the_history_is_prometheus_series(
    tmp_path: Path, client_for: Client
) -> None:
    world = World()
    make_cluster(world)
    inventory = load_inventory()
    frozen = time.time()  # every scrape returns the values of this second
    sim = SimulatedSource(inventory=lambda: inventory, seed=3, clock=lambda: frozen)
    port = free_port()
    server = serve(sim.collect, port)
    slot = next(g for g in inventory.gpus if (g.hostname, g.gpu) == ("gpu-00", 2))
    expected = gpu_values(slot, 3, int(frozen))
    try:
        with running_prometheus(tmp_path, "dcgm", port) as url:
            source = PrometheusSource(url)
            body: dict[str, Any] = {}
            with override_settings(TELEMETRY_SOURCE="prometheus", PROMETHEUS_URL=url):
                client = client_for(world.platform_admin)
                deadline = time.monotonic() + 40
                while time.monotonic() < deadline:
                    try:
                        ready = source.query(f'{m.GPU_UTIL}{{Hostname="gpu-00",gpu="2"}}')
                    except OSError:
                        ready = []
                    if ready:
                        answer = client.get(URL, {"node": "gpu-00", "gpu": "2"})
                        assert answer.status_code == 200, answer.data
                        body = answer.data
                        if len(body["points"]) >= 2:
                            break
                    time.sleep(1)
    finally:
        server[0].shutdown()
    assert (body["source"], body["resolution_s"], body["kept_s"]) == ("prometheus", 10, None)
    assert len(body["points"]) >= 2
    point = body["points"][-1]
    used, free = expected[m.FB_USED], expected[m.FB_FREE]
    assert point["util"] == round(expected[m.GPU_UTIL], 1)
    assert point["power_w"] == round(expected[m.POWER], 1)
    assert point["temp_c"] == round(expected[m.GPU_TEMP], 1)
    assert point["fb_used_pct"] == round(100 * used / (used + free), 1)
    assert point["sm_active_pct"] == round(100 * expected[m.SM_ACTIVE], 1)
