"""A virtual wall clock (``timezone.now``), the simulated cluster of tests/jobs, and helpers to
run jobs and feed their GPU utilization through the telemetry rollups."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from apps.jobs.models import Job
from apps.jobs.relay import reconcile, relay
from apps.scheduling.loop import run_cycle
from apps.telemetry.models import SeriesKind, SeriesPoint
from tests.jobs.conftest import Cluster, cluster, training_body  # noqa: F401 - fixture reuse

T0 = datetime(2026, 11, 2, 8, 0, tzinfo=UTC)
HOUR = 3600


@dataclass
class Wall:
    """The virtual wall clock behind ``django.utils.timezone.now``; also nudges the simulated
    cluster's own clock so pods start."""

    cluster: Cluster
    now: datetime = T0

    def at(self, seconds: float) -> datetime:
        return T0 + timedelta(seconds=seconds)

    def go(self, seconds: float) -> None:
        """Move to T0 + seconds and run one scheduler/relay/reconcile round."""
        self.now = self.at(seconds)
        self.cluster.clock.advance(10)
        run_cycle()
        relay()
        reconcile(grace_s=10**6)
        relay()
        run_cycle()
        relay()


@pytest.fixture
def wall(cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> Wall:  # noqa: F811
    clock = Wall(cluster=cluster)
    monkeypatch.setattr(timezone, "now", lambda: clock.now)
    return clock


def feed(job_id: int, start: datetime, end: datetime, util: float) -> None:
    """One 1-minute job bucket per minute in [start, end), as the telemetry rollup writes."""
    rows, ts = [], start
    while ts < end:
        rows.append(
            SeriesPoint(kind=SeriesKind.JOB, key=str(job_id), resolution_s=60, ts=ts, util=util)
        )
        ts += timedelta(minutes=1)
    SeriesPoint.objects.bulk_create(rows)


def submit(client: APIClient, tenant: str, body: dict[str, Any]) -> int:
    response = client.post(f"/api/v1/tenants/{tenant}/jobs/", body, format="json")
    assert response.status_code == 201, response.json()
    return int(response.json()["id"])


def long_training(cl: Cluster, name: str, gpus: int, **extra: Any) -> dict[str, Any]:
    groups = [{"name": "w", "replicas": max(1, gpus // 8), "accelerators": min(gpus, 8)}]
    return training_body(cl.pool, name=name, replica_groups=groups,
                         env={"ZS_SIM_DURATION_S": "999999"}, **extra)  # fmt: skip


def notebook(cl: Cluster, name: str = "nb") -> dict[str, Any]:
    body = training_body(cl.pool, name=name, kind="notebook", command=["jupyter", "lab"],
                         replica_groups=[{"name": "nb", "replicas": 1, "accelerators": 1}],
                         env={"ZS_SIM_DURATION_S": "999999"})  # fmt: skip
    body.pop("topology")
    return body


def state(job_id: int) -> str:
    return Job.objects.get(pk=job_id).state
