"""The vLLM metrics reader's PromQL against a real Prometheus scraping vLLM-shaped metrics of
two pods of our service and two pods that must not be counted (another service, another
namespace)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from apps.inference.runtime_metrics import RuntimeTraffic, read_traffic
from apps.telemetry.sources.prometheus import PrometheusSource
from tests.prometheus import requires_prometheus, running_prometheus

pytestmark = requires_prometheus
# (namespace, pod, running, waiting, successes per second, 5xx per second, GPU util %)
PODS = (
    ("zs-acme", "zs-inf-303-7d9f8c6b5-abcde", 4, 1, 6.0, 0.5, 80),
    ("zs-acme", "zs-inf-303-7d9f8c6b5-fghij", 3, 0, 4.0, 0.0, 40),
    ("zs-acme", "zs-inf-3030-5c4b3a2d1-klmno", 50, 50, 100.0, 9.0, 0),  # another service
    ("zs-other", "zs-inf-303-7d9f8c6b5-pqrst", 50, 50, 100.0, 9.0, 0),  # another tenant
)
WINDOW_S = 4
BUCKETS = ("0.25", "0.5", "1.0", "+Inf")


def exposition(elapsed: float) -> str:
    """vLLM's metric names (and its HTTP server's response counter), and the DCGM exporter's
    GPU use with pod mapping; every request takes between 0.25 s and 0.5 s."""
    lines = []
    for namespace, pod, running, waiting, rate, errors, util in PODS:
        labels = f'namespace="{namespace}",pod="{pod}"'
        done = rate * elapsed
        lines += [
            f"vllm:num_requests_running{{{labels}}} {running}",
            f"vllm:num_requests_waiting{{{labels}}} {waiting}",
            f'vllm:request_success_total{{{labels},finished_reason="stop"}} {done}',
            f'http_requests_total{{{labels},handler="/v1/completions",status="2xx"}} {done}',
            f'http_requests_total{{{labels},handler="/v1/completions",status="5xx"}} '
            f"{errors * elapsed}",
            f'DCGM_FI_DEV_GPU_UTIL{{{labels},gpu="0",modelName="NVIDIA H100"}} {util}',
        ]
        for le in BUCKETS:
            count = 0.0 if le == "0.25" else done
            lines.append(f'vllm:e2e_request_latency_seconds_bucket{{{labels},le="{le}"}} {count}')
    return "\n".join(lines) + "\n"


@pytest.fixture
def prometheus(tmp_path: Path) -> Iterator[str]:
    started = time.monotonic()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = exposition(time.monotonic() - started).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    exporter = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=exporter.serve_forever, daemon=True).start()
    try:
        with running_prometheus(tmp_path, "vllm", exporter.server_address[1]) as url:
            yield url
    finally:
        exporter.shutdown()
        exporter.server_close()


def _read_when_ready(source: PrometheusSource) -> RuntimeTraffic:
    deadline = time.monotonic() + 40
    while time.monotonic() < deadline:
        try:
            if read_traffic(source, 303, "acme", window_s=WINDOW_S).pods == 2:
                # rate() divides by the whole window: let a full window of scrapes pass
                time.sleep(WINDOW_S + 2)
                return read_traffic(source, 303, "acme", window_s=WINDOW_S)
        except OSError:
            pass  # not listening yet
        time.sleep(0.5)
    raise AssertionError("Prometheus never had two scrapes of the exporter")


def test_the_queries_work_on_a_real_prometheus(prometheus: str) -> None:
    traffic = _read_when_ready(PrometheusSource(prometheus))
    assert (traffic.running, traffic.waiting) == (7.0, 1.0)  # our two pods only
    assert traffic.qps == pytest.approx(10.0, rel=0.25)  # 6/s + 4/s
    # all requests in the (0.25, 0.5] bucket: linear interpolation inside it
    assert traffic.p50_s == pytest.approx(0.375, abs=1e-6)
    assert traffic.p95_s == pytest.approx(0.4875, abs=1e-6)
    assert traffic.p99_s == pytest.approx(0.4975, abs=1e-6)
    assert traffic.errors_per_s == pytest.approx(0.5, rel=0.25)  # 5xx of our pods only
    assert traffic.gpu_by_pod == {  # our two pods only, each its own use
        "zs-inf-303-7d9f8c6b5-abcde": pytest.approx(0.8),
        "zs-inf-303-7d9f8c6b5-fghij": pytest.approx(0.4),
    }
    assert traffic.gpu_util == pytest.approx(0.6)  # mean of 80 % and 40 %
