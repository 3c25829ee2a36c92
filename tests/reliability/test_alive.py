"""Liveness files (apps/core/alive.py): the probe command's answers, and a real Celery worker
and beat keeping their files fresh from their own loops."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from apps.core import alive

ROOT = Path(__file__).resolve().parents[2]


def probe(directory: Path | None, *argv: str) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if k != alive.ENV}
    if directory is not None:
        env[alive.ENV] = str(directory)
    done = subprocess.run(
        [sys.executable, "-m", "apps.core.alive", *argv],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    return done.returncode, done.stdout.strip()


def test_the_probe_passes_on_a_fresh_file_and_fails_on_a_stale_or_missing_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert probe(tmp_path, "worker", "60") == (1, "worker: no liveness file yet")
    monkeypatch.setenv(alive.ENV, str(tmp_path / "alive"))
    alive.touch("worker")  # makes the folder too
    assert probe(tmp_path / "alive", "worker", "60") == (0, "")
    old = time.time() - 90
    os.utime(tmp_path / "alive" / "worker.alive", (old, old))
    code, out = probe(tmp_path / "alive", "worker", "60")
    assert code == 1 and out.startswith("worker: last alive 9") and out.endswith("(limit 60 s)")
    assert probe(tmp_path, "worker", "soon") == (2, "MAX_AGE_S must be a number of seconds, "
                                                    "got 'soon'")  # fmt: skip
    assert probe(None, "worker", "60") == (2, "ZS_ALIVE_DIR is not set; worker writes no "
                                              "liveness file")  # fmt: skip


def test_touch_without_a_folder_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(alive.ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    alive.touch("beat")
    assert list(tmp_path.iterdir()) == []
    assert alive.age("beat") is None


def test_every_long_running_deployment_probes_its_own_file() -> None:
    probed = {}
    for path in (ROOT / "platform/k8s/app").glob("*.yaml"):
        for doc in yaml.safe_load_all(path.read_text()):
            if not doc or doc.get("kind") != "Deployment":
                continue
            for container in doc["spec"]["template"]["spec"]["containers"]:
                probe_spec = container.get("livenessProbe", {})
                probed[container["name"]] = probe_spec.get("exec", probe_spec.get("httpGet"))
    assert probed == {
        "web": {"path": "/healthz", "port": "http"},
        "worker": {"command": ["python", "-m", "apps.core.alive", "worker", "60"]},
        "beat": {"command": ["python", "-m", "apps.core.alive", "beat", "60"]},
        "telemetry": {"command": ["python", "-m", "apps.core.alive", "telemetry", "60"]},
        "autoscaler": {"command": ["python", "-m", "apps.core.alive", "autoscaler", "60"]},
    }


def _wait_fresh(path: Path, after: float, timeout: float) -> float:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.stat().st_mtime > after:
            return path.stat().st_mtime
        time.sleep(0.2)
    raise AssertionError(f"{path.name} not touched after {after} within {timeout} s")


@pytest.mark.parametrize("role", ["worker", "beat"])
def test_a_real_celery_process_keeps_its_file_fresh(role: str, tmp_path: Path) -> None:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.dev",
        "ZS_DATA_DIR": str(tmp_path),
        alive.ENV: str(tmp_path / "alive"),
    }
    env.pop("REDIS_URL", None)  # the in-memory broker: no messages leave the process
    argv = [sys.executable, "-m", "celery", "-A", "config", role, "--loglevel", "WARNING"]
    if role == "worker":
        argv += ["-P", "solo", "--without-heartbeat", "--without-mingle", "--without-gossip"]
    else:
        argv += ["--schedule", str(tmp_path / "schedule")]
    process = subprocess.Popen(
        argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        path = tmp_path / "alive" / f"{role}.alive"
        first = _wait_fresh(path, 0.0, 60)
        # Touched again from the running loop: every 10 s (worker timer), every tick (beat).
        _wait_fresh(path, first, 20)
        assert probe(tmp_path / "alive", role, "60") == (0, "")
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
