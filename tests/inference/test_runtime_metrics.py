"""The vLLM metrics reader against canned Prometheus answers served over HTTP, through the
project's Prometheus client (``PrometheusSource``)."""

from __future__ import annotations

import json
import threading
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from apps.inference.runtime_metrics import queries, read_traffic
from apps.telemetry.sources.prometheus import PrometheusError, PrometheusSource

AT = 1_700_000_000.0


def vector(value: str | None) -> dict[str, Any]:
    result = [] if value is None else [{"metric": {}, "value": [AT, value]}]
    return {"status": "success", "data": {"resultType": "vector", "result": result}}


class FakePrometheus:
    """Answers /api/v1/query from a dict of PromQL -> body; records every query asked."""

    def __init__(self, answers: dict[str, dict[str, Any]]) -> None:
        self.answers = answers
        self.asked: list[str] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                url = urllib.parse.urlparse(self.path)
                expr = urllib.parse.parse_qs(url.query)["query"][0]
                fake.asked.append(expr)
                body = fake.answers.get(expr, vector(None))
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def prometheus() -> Iterator[FakePrometheus]:
    fake = FakePrometheus({})
    yield fake
    fake.close()


def test_queries_select_the_services_pods_and_sum_over_them() -> None:
    q = queries(303, "acme", window_s=30)
    sel = 'namespace="zs-acme",pod=~"zs-inf-303-[a-z0-9]+-[a-z0-9]+"'
    assert q["running"] == f"sum(vllm:num_requests_running{{{sel}}})"
    assert q["waiting"] == f"sum(vllm:num_requests_waiting{{{sel}}})"
    assert q["qps"] == f"sum(rate(vllm:request_success_total{{{sel}}}[30s]))"
    assert q["p95_s"] == (
        "histogram_quantile(0.95, sum by (le) "
        f"(rate(vllm:e2e_request_latency_seconds_bucket{{{sel}}}[30s])))"
    )
    assert q["errors_per_s"] == (f'sum(rate(http_requests_total{{{sel},status=~"5.."}}[30s]))')
    assert q["gpu_by_pod"] == f"avg by (pod) (DCGM_FI_DEV_GPU_UTIL{{{sel}}}) / 100"
    assert set(q) == {
        "pods", "running", "waiting", "qps", "p50_s", "p95_s", "p99_s", "errors_per_s",
        "gpu_by_pod",
    }  # fmt: skip


def test_read_traffic_parses_every_answer(prometheus: FakePrometheus) -> None:
    q = queries(303, "acme")
    prometheus.answers.update({
        q["pods"]: vector("3"),
        q["running"]: vector("41"),
        q["waiting"]: vector("7"),
        q["qps"]: vector("12.5"),
        q["p50_s"]: vector("0.8"),
        q["p95_s"]: vector("2.25"),
        q["p99_s"]: vector("+Inf"),  # the top bucket: no finite estimate
        q["errors_per_s"]: vector("0.5"),
        q["gpu_by_pod"]: {"status": "success", "data": {"resultType": "vector", "result": [
            {"metric": {"pod": "zs-inf-303-7d9f8c6b5-abcde"}, "value": [AT, "0.9"]},
            {"metric": {"pod": "zs-inf-303-7d9f8c6b5-fghij"}, "value": [AT, "0.34"]},
        ]}},
    })  # fmt: skip
    traffic = read_traffic(PrometheusSource(prometheus.url), 303, "acme")
    assert sorted(prometheus.asked) == sorted(q.values())
    assert traffic.pods == 3
    assert (traffic.running, traffic.waiting, traffic.concurrency) == (41.0, 7.0, 48.0)
    assert traffic.qps == 12.5
    assert (traffic.p50_s, traffic.p95_s, traffic.p99_s) == (0.8, 2.25, None)
    assert traffic.errors_per_s == 0.5
    assert traffic.gpu_by_pod == {
        "zs-inf-303-7d9f8c6b5-abcde": 0.9,
        "zs-inf-303-7d9f8c6b5-fghij": 0.34,
    }
    assert traffic.gpu_util == pytest.approx(0.62)


def test_no_series_reads_as_idle_without_latency(prometheus: FakePrometheus) -> None:
    q = queries(303, "acme")
    prometheus.answers[q["p50_s"]] = vector("NaN")  # no request finished in the window
    traffic = read_traffic(PrometheusSource(prometheus.url), 303, "acme")
    assert (traffic.pods, traffic.concurrency, traffic.qps) == (0, 0.0, 0.0)
    assert traffic.p50_s is None and traffic.p95_s is None
    assert traffic.errors_per_s == 0.0 and traffic.gpu_util is None  # no DCGM series: unknown


def test_a_prometheus_error_is_raised(prometheus: FakePrometheus) -> None:
    q = queries(303, "acme")
    prometheus.answers[q["pods"]] = {"status": "error", "error": "parse error"}
    with pytest.raises(PrometheusError, match="parse error"):
        read_traffic(PrometheusSource(prometheus.url), 303, "acme")
