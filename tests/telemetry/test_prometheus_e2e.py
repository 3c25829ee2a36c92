"""End to end: simulated cluster -> DCGM exporter -> a real Prometheus -> our Prometheus source
-> a websocket frame with the simulated values."""

from __future__ import annotations

import shutil
import socket
import subprocess
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
from tests.telemetry.helpers import make_cluster

PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        not Path(PROMETHEUS).exists(),
        reason="prometheus is not installed (scripts/ensure-prometheus.sh installs it)",
    ),
]
FROZEN = 1_700_000_000.0  # a fixed clock: every scrape returns the same values


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def prometheus(tmp_path: Path) -> Iterator[tuple[str, int]]:
    exporter_port, port = _free_port(), _free_port()
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
        "scrape_configs:\n"
        "  - job_name: dcgm\n"
        "    honor_labels: true\n"
        f"    static_configs: [{{targets: ['127.0.0.1:{exporter_port}']}}]\n"
    )
    proc = subprocess.Popen(
        [PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
         f"--web.listen-address=127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        yield f"http://127.0.0.1:{port}", exporter_port
    finally:
        proc.terminate()
        proc.wait(10)


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
