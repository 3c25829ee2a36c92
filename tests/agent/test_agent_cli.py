"""The agent end to end: ``--once --print``, metrics, remediation allow-list, reporting."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pytest
from prometheus_client import generate_latest
from zhisuan_agent import checks, remediate
from zhisuan_agent.client import Platform
from zhisuan_agent.metrics import Metrics

from tests.agent.conftest import AGENT, FIXTURES
from tests.agent.test_checks import host_for


def test_once_print_runs_one_round_and_prints_json() -> None:
    root = FIXTURES / "hgx_faulty"
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "zhisuan_agent",
            "--once",
            "--print",
            "--root",
            str(root),
            "--nvml-fixture",
            str(root / "nvml.json"),
            "--expected-gpus",
            "8",
            "--node",
            "gpu-007",
        ],
        cwd=AGENT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    report = json.loads(out)
    assert report["node"] == "gpu-007"
    by_check = {r["check"]: r for r in report["results"]}
    assert by_check["gpu_count"]["faults"] == ["gpu:missing"]
    assert by_check["fabricmanager"]["status"] == "fail"


def test_metrics_expose_status_and_faults() -> None:
    metrics = Metrics()
    metrics.observe(checks.Checker(host_for("hgx_faulty", expected_gpus=8)).run(), 0.25)
    text = generate_latest(metrics.registry).decode()
    assert 'zs_agent_check_status{check="ib"} 2.0' in text
    assert 'zs_agent_fault_active{check="xid",fault="xid:79"} 1.0' in text
    assert "zs_agent_rounds_total 1.0" in text


def test_only_allow_listed_remediations_run() -> None:
    ran: list[Sequence[str]] = []

    def runner(argv: Sequence[str]) -> int:
        ran.append(argv)
        return 0

    outcome = remediate.perform(["restart_fabricmanager", "rm -rf /"], runner)
    assert outcome == {"restart_fabricmanager": "ok", "rm -rf /": "refused: unknown action"}
    assert [list(a[-3:]) for a in ran] == [["systemctl", "restart", "nvidia-fabricmanager"]]


class _Recorder(BaseHTTPRequestHandler):
    received: list[tuple[str, str, dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.received.append((self.path, self.headers["Authorization"], body))
        payload = json.dumps({"actions": ["restart_fabricmanager"]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def platform_server() -> Iterator[HTTPServer]:
    _Recorder.received = []
    server = HTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()


def test_report_sends_results_with_the_node_token(platform_server: HTTPServer) -> None:
    port = platform_server.server_address[1]
    platform = Platform(f"http://127.0.0.1:{port}", "zsn_abc_secret", "gpu-007")
    results = checks.Checker(host_for("hgx_healthy", expected_gpus=8)).run()
    actions = platform.report(results, {})
    assert actions == ["restart_fabricmanager"]
    path, auth, body = _Recorder.received[0]
    assert path == "/api/v1/health/report/" and auth == "Bearer zsn_abc_secret"
    assert body["node"] == "gpu-007" and len(body["results"]) == 10
