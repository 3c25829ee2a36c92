"""End to end: simulated cluster -> DCGM exporter -> a real Prometheus -> our Prometheus source
-> a websocket frame with the simulated values."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from apps.accounts.services import create_token
from apps.telemetry import live
from apps.telemetry import metrics as m
from apps.telemetry.aggregate import cell_of
from apps.telemetry.collector import Collector
from apps.telemetry.exporter import serve
from apps.telemetry.inventory import load_inventory
from apps.telemetry.sources.prometheus import PrometheusSource
from apps.telemetry.sources.simulated import SimulatedSource, gpu_values
from config.asgi import application
from tests.conftest import World
from tests.net import free_port
from tests.prometheus import requires_prometheus, running_prometheus
from tests.telemetry.helpers import make_cluster

pytestmark = [pytest.mark.django_db(transaction=True), requires_prometheus]
FROZEN = 1_700_000_000.0  # a fixed clock: every scrape returns the same values


@pytest.fixture
def prometheus(tmp_path: Path) -> Iterator[tuple[str, int]]:
    exporter_port = free_port()
    with running_prometheus(tmp_path, "dcgm", exporter_port) as url:
        yield url, exporter_port


def _wait_for_series(source: PrometheusSource, count: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if len(source.query(f'{m.GPU_UTIL}{{Hostname=~"gpu-.*"}}')) >= count:
                return
        except OSError:
            pass
        time.sleep(0.3)
    raise AssertionError("Prometheus never scraped the exporter")


@pytest.mark.asyncio
async def test_frame_carries_what_prometheus_scraped(prometheus: tuple[str, int], db: Any) -> None:
    url, exporter_port = prometheus
    live.reset()

    def build() -> tuple[World, int, Any, str]:
        world = World()
        cluster = make_cluster(world)
        inventory = load_inventory()
        sim = SimulatedSource(inventory=lambda: inventory, seed=3, clock=lambda: FROZEN)
        server = serve(sim.collect, exporter_port)
        token = create_token(user=world.platform_admin, name="e2e")[1]
        return world, cluster.job_a.id, (server, inventory), token

    _world, job_id, (server, inventory), token = await database_sync_to_async(build)()
    try:
        source = PrometheusSource(url)
        await database_sync_to_async(_wait_for_series)(source, 16)
        collector = Collector(source=source, rollups=False)
        comm = WebsocketCommunicator(
            application, "/ws/v1/telemetry/", subprotocols=[f"bearer.{token}"],
            headers=[(b"origin", b"http://127.0.0.1:8000"), (b"host", b"127.0.0.1:8000")],
        )  # fmt: skip
        assert (await comm.connect(timeout=10))[0]
        for topic in ("heatmap", f"job:{job_id}", "node:gpu-00"):
            await comm.send_json_to({"action": "subscribe", "topic": topic})
            assert (await comm.receive_json_from(timeout=3))["type"] == "subscribed"
        await database_sync_to_async(collector.tick)()
        frames = {}
        for _ in range(3):
            frame = await comm.receive_json_from(timeout=5)
            frames[frame["topic"]] = frame
        cells = frames["heatmap"]["data"]["cells"]
        assert len(cells) == 16
        for slot in inventory.gpus:
            expected = cell_of(gpu_values(slot, 3, int(FROZEN)))
            assert cells[f"{slot.hostname}:{slot.gpu}"] == list(expected)
        job = frames[f"job:{job_id}"]["data"]["summary"]["job"]
        assert (job["gpus"], job["busy"]) == (4, 4) and 70 <= job["util"] <= 98
        assert frames["node:gpu-00"]["data"]["summary"]["node"]["mem_used_pct"] > 0
        await comm.disconnect()
    finally:
        server[0].shutdown()
