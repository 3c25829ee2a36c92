"""A fake metrics endpoint on 127.0.0.1 that can fail on purpose, for the SDK's sender."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar

import pytest

METRICS = re.compile(r"^/api/v1/tenants/([a-z0-9-]+)/runs/(\d+)/metrics/$")
CHECKPOINTS = re.compile(r"^/api/v1/tenants/([a-z0-9-]+)/runs/(\d+)/checkpoints/$")


@dataclass
class FakePlatform:
    """Stores points like the real API (first value per key and step wins)."""

    url: str = ""
    fail_next: int = 0  # answer this many requests with ``fail_status`` first
    fail_status: int = 503
    reject_all: bool = False  # answer 400 with field errors
    calls: int = 0
    batches: list[list[dict[str, Any]]] = field(default_factory=list)
    points: dict[tuple[str, int], float] = field(default_factory=dict)
    patches: list[dict[str, Any]] = field(default_factory=list)
    checkpoints: list[dict[str, Any]] = field(default_factory=list)
    auth: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def values(self, key: str) -> dict[int, float]:
        with self.lock:
            return {s: v for (k, s), v in self.points.items() if k == key}


@pytest.fixture
def platform() -> Iterator[FakePlatform]:
    fake = FakePlatform()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # keep test output clean
            pass

        def _answer(self, status: int, body: Any) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _body(self) -> Any:
            return json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))

        def do_POST(self) -> None:
            body = self._body()
            with fake.lock:
                fake.calls += 1
                fake.auth.append(self.headers.get("Authorization", ""))
                if fake.fail_next > 0:
                    fake.fail_next -= 1
                    return self._answer(fake.fail_status, {"detail": "Service unavailable."})
                if fake.reject_all:
                    return self._answer(400, {"detail": "Invalid input.",
                                              "errors": {"points.0.step": ["bad"]}})  # fmt: skip
                if METRICS.match(self.path):
                    fake.batches.append(body["points"])
                    stored = 0
                    for row in body["points"]:
                        for k, v in row["values"].items():
                            if (k, row["step"]) not in fake.points:
                                fake.points[(k, row["step"])] = v
                                stored += 1
                    return self._answer(200, {"stored": stored})
                if CHECKPOINTS.match(self.path):
                    fake.checkpoints.append(body)
                    return self._answer(201, {"id": len(fake.checkpoints)})
                if self.path.endswith("/runs/"):
                    return self._answer(201, {"id": 77, **body})
            return self._answer(404, {"detail": "Not found."})

        def do_PATCH(self) -> None:
            body = self._body()
            with fake.lock:
                fake.calls += 1
                fake.patches.append(body)
            self._answer(200, {"id": 1})

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    yield fake
    server.shutdown()
    server.server_close()


T = TypeVar("T")


def present(value: T | None) -> T:
    """The value, asserting it is there (keeps tests short and mypy exact)."""
    assert value is not None
    return value


@pytest.fixture
def sdk_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """No ambient SDK settings leak into a test (no ZS_* variables, an empty config dir)."""
    for name in ("ZS_API_URL", "ZS_TOKEN", "ZS_TENANT", "ZS_JOB_ID", "ZS_RUN_ID",
                 "ZS_RESUME_FROM", "ZS_CHECKPOINT_DIR", "RANK", "WORLD_SIZE"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
