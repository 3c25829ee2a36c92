"""What can be checked of the production stack without a Docker engine: the compose file
parses and is complete, and the one settings module boots every process's entry point."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
PROD_ENV = {
    "DJANGO_SETTINGS_MODULE": "config.settings.prod",
    "ZS_SECRET_KEY": secrets.token_urlsafe(50),
    "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/postgres",
    "REDIS_URL": "redis://127.0.0.1:6379/0",
    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
}


def test_compose_defines_the_production_stack_with_health_checks() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    processes = ("web", "worker", "beat", "telemetry", "autoscaler")
    assert {"postgres", "redis", *processes} <= set(services)
    for name in ("postgres", "redis", "web", "worker"):
        assert "healthcheck" in services[name], name
    for name in processes:
        env = services[name]["environment"]
        assert env["DJANGO_SETTINGS_MODULE"] == "config.settings.prod"
        assert env["REDIS_URL"].startswith("redis://redis:")
        assert "postgres:5432" in env["DATABASE_URL"]
        # Real GPU metrics unless the operator asks for the simulated ones.
        assert env["ZS_TELEMETRY_SOURCE"] == "${ZS_TELEMETRY_SOURCE:-prometheus}"
    dockerfile = services["web"]["build"]["dockerfile"]
    assert (ROOT / dockerfile).is_file()


def test_every_management_command_the_stack_runs_exists() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    manifests = [
        d
        for path in sorted((ROOT / "platform" / "k8s" / "app").glob("*.yaml"))
        for d in yaml.safe_load_all(path.read_text())
        if d and d["kind"] in ("Deployment", "Job")
    ]
    commands = [s["command"] for s in compose["services"].values() if "command" in s]
    commands += [
        c["command"]
        for d in manifests
        for c in d["spec"]["template"]["spec"]["containers"]
        if "command" in c
    ]
    managed = {c[2] for c in commands if c[:2] == ["python", "manage.py"]}
    assert {"serve", "migrate", "telemetry_collector", "inference_autoscaler"} <= managed
    for name in sorted(managed):
        result = _run("manage.py", "help", name, env=PROD_ENV)
        assert result.returncode == 0, (name, result.stderr)


def _run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def test_prod_settings_boot_web_worker_and_beat_entry_points() -> None:
    assert (
        _run("manage.py", "check", "--deploy", "--fail-level", "WARNING", env=PROD_ENV).returncode
        == 0
    )
    code = (
        "from config.celery import app; app.loader.import_default_modules(); "
        "print(app.conf.broker_url)"
    )
    celery = _run("-c", code, env=PROD_ENV)
    assert celery.returncode == 0, celery.stderr
    assert celery.stdout.strip() == "redis://127.0.0.1:6379/0"
    asgi = _run("-c", "import config.asgi as a; print(type(a.application).__name__)", env=PROD_ENV)
    assert asgi.stdout.strip() == "ProtocolTypeRouter", asgi.stderr


def test_prod_settings_refuse_to_start_without_secrets() -> None:
    env = {k: v for k, v in PROD_ENV.items() if k != "ZS_SECRET_KEY"}
    result = _run("manage.py", "check", env=env)
    assert result.returncode != 0
    assert "ZS_SECRET_KEY must be set" in result.stderr


def test_postgresql_connections_are_pooled_per_process(monkeypatch) -> None:
    from config.settings.base import database_from_url

    monkeypatch.delenv("ZS_DB_POOL_SIZE", raising=False)
    pooled = database_from_url("postgres://postgres@db:5432/zhisuan")
    assert pooled["OPTIONS"]["pool"]["max_size"] == 16
    assert pooled["CONN_MAX_AGE"] == 0  # Django refuses persistent connections with a pool
    monkeypatch.setenv("ZS_DB_POOL_SIZE", "0")
    plain = database_from_url("postgres://postgres@db:5432/zhisuan")
    assert "pool" not in plain.get("OPTIONS", {}) and plain["CONN_MAX_AGE"] == 60
    assert "pool" not in database_from_url(None).get("OPTIONS", {})  # SQLite: no pool
