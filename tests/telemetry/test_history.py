"""History: the rollups' buckets (hand-computed means), what a stopping collector writes, the
history and job-usage endpoints, and the production collector command."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from apps.accounts.models import User
from apps.telemetry import live
from apps.telemetry.aggregate import NOBODY, Owner, State
from apps.telemetry.models import JobTelemetry, SeriesKind, SeriesPoint
from apps.telemetry.rollup import Rollups
from apps.tenancy.models import Role
from tests.conftest import World
from tests.telemetry.helpers import make_cluster

HISTORY = "/api/v1/telemetry/history/"
T0 = 1_800_000_000  # a multiple of 600: every resolution's bucket starts here


@pytest.fixture(autouse=True)
def _fresh_live_state() -> Iterator[None]:
    live.reset()
    yield
    live.reset()


def state(at: float, util: tuple[int, int], job: int, cpu_pct: float) -> State:
    """Two GPUs of node n1: GPU 0 busy with ``job`` (300 W, tenant 7, pool 3), GPU 1 idle."""
    busy = Owner(job_id=job, tenant_id=7, pool_id=3)
    return State(
        at=at,
        cells={
            "n1:0": (util[0], 1000, 60 + util[0] // 10, 300, 0),
            "n1:1": (util[1], 0, 40, 60, 0),
        },
        owners={"n1:0": busy, "n1:1": NOBODY},
        nodes={"n1": {"cpu_pct": cpu_pct, "net_rx_bps": 1000.0}},
        jobs={job: {"gpus": 1, "busy": 1, "util": util[0], "fb_used_mib": 1000, "power_w": 300}},
        pools={3: {"gpus": 1, "busy": 1, "util": util[0], "fb_used_mib": 1000, "power_w": 300}},
        tenants={7: {"gpus": 1, "busy": 1, "util": util[0], "fb_used_mib": 1000, "power_w": 300}},
        cluster={
            "gpus": 2,
            "busy": 1,
            "util": (util[0] + util[1]) / 2,
            "fb_used_mib": 1000,
            "power_w": 360,
            "temp_max_c": 60 + util[0] // 10,
        },
    )


def point(kind: str, key: str, res: int) -> SeriesPoint:
    return SeriesPoint.objects.get(kind=kind, key=key, resolution_s=res)


def test_a_closed_bucket_holds_the_means_of_its_ticks_and_the_hottest_gpu(world: World) -> None:
    job = make_cluster(world).job_a.id
    rollups = Rollups()
    assert rollups.feed(state(T0, (90, 0), job=job, cpu_pct=20)) == []
    assert rollups.feed(state(T0 + 4, (60, 30), job=job, cpu_pct=40)) == []
    written = rollups.feed(state(T0 + 10, (80, 0), job=job, cpu_pct=0))  # closes the 10 s bucket
    assert {(p.kind, p.resolution_s) for p in written} == {(k, 10) for k in SeriesKind.values}
    cluster = point(SeriesKind.CLUSTER, "", 10)
    assert cluster.ts == dt.datetime.fromtimestamp(T0, tz=dt.UTC)
    assert (cluster.gpus, cluster.util, cluster.power_w) == (2, 45.0, 360.0)  # (45 + 45) / 2
    assert cluster.temp_max_c == 69  # the hottest tick (util 90), not a mean
    assert cluster.extra == {"busy": 1.0}  # allocated GPUs, for the allocation chart
    node = point(SeriesKind.NODE, "n1", 10)
    assert (node.gpus, node.util, node.power_w) == (2, 45.0, 360.0)
    assert node.extra == {"cpu_pct": 30.0, "net_rx_bps": 1000.0}
    assert point(SeriesKind.JOB, str(job), 10).util == 75.0
    assert point(SeriesKind.POOL, "3", 10).extra == {"busy": 1.0}
    # A job's usage is added when a 10 s bucket closes: 1 GPU for the 4 s between the first
    # two ticks (the first has no interval before it); the closing tick's 6 s wait for the
    # next bucket.
    usage = JobTelemetry.objects.get(job_id=job)
    assert (usage.gpu_seconds, usage.util_gpu_seconds, usage.energy_joules) == (4, 60 * 4, 300 * 4)


def test_flush_writes_the_open_buckets_and_a_restart_does_not_double_them(world: World) -> None:
    job = make_cluster(world).job_a.id
    first = Rollups()
    first.feed(state(T0, (90, 0), job=job, cpu_pct=20))
    first.feed(state(T0 + 5, (70, 0), job=job, cpu_pct=20))
    written = first.flush()
    assert {p.resolution_s for p in written} == {10, 60, 600}
    assert point(SeriesKind.CLUSTER, "", 600).util == 40.0  # mean of 45 and 35 so far
    assert JobTelemetry.objects.get(job_id=job).gpu_seconds == 5.0
    # A restarted collector starts the same buckets again; the stored row stays as it was.
    second = Rollups()
    second.feed(state(T0 + 7, (10, 10), job=job, cpu_pct=20))
    second.flush()
    assert SeriesPoint.objects.filter(kind=SeriesKind.CLUSTER).count() == 3
    assert point(SeriesKind.CLUSTER, "", 600).util == 40.0
    assert first.flush() == []  # nothing left open


def _store(kind: str, key: str, minutes_ago: list[int], res: int = 60) -> None:
    now = dt.datetime.now(dt.UTC).replace(second=0, microsecond=0)
    SeriesPoint.objects.bulk_create(
        SeriesPoint(
            kind=kind,
            key=key,
            resolution_s=res,
            ts=now - dt.timedelta(minutes=m),
            gpus=8,
            util=50.0 + m,
            extra={"busy": 4.0},
        )
        for m in minutes_ago
    )


def test_history_picks_the_resolution_that_keeps_the_range_and_returns_it_in_order(
    world: World, client_for: Callable[[User | None], APIClient]
) -> None:
    _store(SeriesKind.CLUSTER, "", [300, 30, 90, 5])
    _store(SeriesKind.CLUSTER, "", [30], res=600)
    member = client_for(world.user("a", Role.MEMBER))
    start = (dt.datetime.now(dt.UTC) - dt.timedelta(hours=2)).isoformat()
    body = member.get(HISTORY, {"series": "cluster", "start": start}).json()
    # Two hours back is past the 10 s buckets' hour, so 1 min; oldest first, in range only.
    assert body["resolution_s"] == 60
    assert [p["util"] for p in body["points"]] == [140.0, 80.0, 55.0]
    assert body["points"][0]["extra"] == {"busy": 4.0}
    coarse = member.get(HISTORY, {"series": "cluster", "start": start, "resolution": "600"})
    assert [p["util"] for p in coarse.json()["points"]] == [80.0]


def test_history_answers_bad_ranges_and_foreign_series_without_a_500(
    world: World, client_for: Callable[[User | None], APIClient]
) -> None:
    cluster = make_cluster(world)
    _store(SeriesKind.NODE, "gpu-00", [1])
    member_a = client_for(world.user("a", Role.MEMBER))
    now = dt.datetime.now(dt.UTC)
    backwards = {
        "series": "cluster",
        "start": now.isoformat(),
        "end": (now - dt.timedelta(hours=1)).isoformat(),
    }
    assert member_a.get(HISTORY, backwards).status_code == 400
    month = {
        "series": "cluster",
        "start": (now - dt.timedelta(days=29)).isoformat(),
        "resolution": "10",
    }
    too_fine = member_a.get(HISTORY, month)
    assert too_fine.status_code == 400 and "resolution" in too_fine.json()["errors"]
    assert member_a.get(HISTORY, {"series": "cluster; drop"}).status_code == 400
    # Nodes are shared between tenants: platform admins only. Another tenant's job and
    # tenant series look missing.
    assert member_a.get(HISTORY, {"series": "node:gpu-00"}).status_code == 404
    root = client_for(world.platform_admin)
    assert len(root.get(HISTORY, {"series": "node:gpu-00"}).json()["points"]) == 1
    assert member_a.get(HISTORY, {"series": f"job:{cluster.job_b.id}"}).status_code == 404
    assert member_a.get(HISTORY, {"series": "tenant:tenant-b"}).status_code == 404
    assert member_a.get(HISTORY, {"series": f"job:{cluster.job_a.id}"}).status_code == 200
    assert member_a.get(HISTORY, {"series": "tenant:tenant-a"}).status_code == 200


def test_job_usage_reports_gpu_hours_mean_use_power_and_energy(
    world: World, client_for: Callable[[User | None], APIClient]
) -> None:
    cluster = make_cluster(world)
    job = cluster.job_a
    url = f"/api/v1/telemetry/jobs/{job.id}/usage/"
    member = client_for(world.user("a", Role.VIEWER))
    assert member.get(url).json() == {
        "job": job.id,
        "gpu_hours": 0.0,
        "mean_util": 0.0,
        "mean_power_w": 0.0,
        "energy_kwh": 0.0,
        "fb_used_peak_mib": 0.0,
    }
    # 4 GPUs for half an hour at 80% and 250 W each.
    JobTelemetry.objects.create(
        job=job,
        gpu_seconds=4 * 1800,
        util_gpu_seconds=80 * 4 * 1800,
        energy_joules=4 * 250 * 1800,
        fb_used_peak_mib=70_000,
    )
    assert member.get(url).json() == {
        "job": job.id,
        "gpu_hours": 2.0,
        "mean_util": 80.0,
        "mean_power_w": 250.0,
        "energy_kwh": 0.5,
        "fb_used_peak_mib": 70_000.0,
    }
    assert client_for(world.user("b", Role.TENANT_ADMIN)).get(url).status_code == 404


# The loop closes old connections between ticks, as a long-running process must; inside the
# test's transaction that would close the test's own connection.
@pytest.mark.django_db(transaction=True)
def test_the_collector_command_publishes_and_writes_history_when_it_stops(world: World) -> None:
    cluster = make_cluster(world)
    call_command("telemetry_collector", "--ticks", "3", "--interval", "0.05")
    latest = live.get_latest()
    assert latest is not None
    _, seq, newest = latest
    assert seq >= 1
    assert newest.cluster["gpus"] == 16 and newest.cluster["busy"] == 6
    # Three ticks never close a bucket; stopping writes them, and the jobs' usage.
    assert SeriesPoint.objects.filter(kind=SeriesKind.CLUSTER, resolution_s=10).exists()
    job_a = SeriesPoint.objects.filter(kind=SeriesKind.JOB, key=str(cluster.job_a.id))
    assert {p.gpus for p in job_a} == {4}
    assert JobTelemetry.objects.get(job=cluster.job_a).gpu_seconds > 0


@pytest.mark.parametrize("args", [["--interval", "0"], ["--ticks", "-1"]])
def test_the_collector_command_rejects_bad_arguments(db: Any, args: list[str]) -> None:
    with pytest.raises(CommandError):
        call_command("telemetry_collector", *args)
