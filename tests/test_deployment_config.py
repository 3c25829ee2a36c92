"""What can be checked of the production stack without a Docker engine: the compose file
parses and is complete, and the one settings module boots every process's entry point."""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from config.env import DOCUMENTED

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
    for name in ("worker", "beat", "telemetry", "autoscaler"):  # their loops' liveness files
        assert services[name]["healthcheck"]["test"] == [
            "CMD", "python", "-m", "apps.core.alive", name, "60"
        ]  # fmt: skip
        assert services[name]["environment"]["ZS_ALIVE_DIR"] == "/tmp/alive"  # noqa: S108
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


def _k8s_docs(*parts: str) -> list[dict[str, Any]]:
    path = ROOT.joinpath("platform", *parts)
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def _config_map() -> dict[str, str]:
    [config] = [d for d in _k8s_docs("k8s", "app", "config.yaml") if d["kind"] == "ConfigMap"]
    return dict(config["data"])


def test_readme_configuration_table_lists_only_variables_the_settings_read() -> None:
    # test_project_layout checks that every declared variable is in the README; this is the
    # other way round: a row in the operator's table that nothing reads is a silent no-op.
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Configuration", 1)[1].split("\n## ", 1)[0]
    rows = set(re.findall(r"^\| `([A-Z_]+)` \|", section, flags=re.MULTILINE))
    assert rows == set(DOCUMENTED)


def test_in_cluster_clients_call_the_web_service_on_a_port_it_serves() -> None:
    """The SDK in training jobs (ZS_PUBLIC_URL) and the node agents call the API through the
    web Service: its DNS name, its port, a host name the settings allow."""
    [service] = [d for d in _k8s_docs("k8s", "app", "web.yaml") if d["kind"] == "Service"]
    meta = service["metadata"]
    ports = {p["port"] for p in service["spec"]["ports"]}
    [daemonset] = _k8s_docs("agent", "daemonset.yaml")
    [agent] = daemonset["spec"]["template"]["spec"]["containers"]
    agent_env = {e["name"]: e.get("value") for e in agent["env"]}
    config = _config_map()
    allowed = config["ZS_ALLOWED_HOSTS"].split(",")
    for url in (config["ZS_PUBLIC_URL"], agent_env["ZS_AGENT_PLATFORM_URL"]):
        parsed = urlsplit(url)
        assert parsed.hostname == f"{meta['name']}.{meta['namespace']}.svc", url
        assert (parsed.port or 80) in ports, url
        assert parsed.hostname in allowed, url


_IN_CLUSTER_REQUESTS = """
import json, sys, tempfile
import django
django.setup()
from django.core.management import call_command
from django.test import Client
from django.test.utils import override_settings

internal, public = sys.argv[1], sys.argv[2]
client = Client(raise_request_exception=False)
answers = {
    "report": client.post("/api/v1/health/report/", "{}", content_type="application/json",
                          HTTP_HOST=internal).status_code,
    "runs": client.get("/api/v1/tenants/acme/runs/", HTTP_HOST=internal).status_code,
    "overview": client.get("/api/v1/overview/", HTTP_HOST=public).status_code,
}
with tempfile.TemporaryDirectory() as static, override_settings(STATIC_ROOT=static):
    call_command("collectstatic", "--noinput", "-v0")
    answers["admin"] = client.get("/admin/login/", HTTP_HOST=public, secure=True).status_code
print(json.dumps(answers))
"""


def test_prod_answers_in_cluster_clients_and_serves_the_admin() -> None:
    """With the shipped ConfigMap: the agents' reports and the SDK's runs calls over plain HTTP
    through the Service reach the API (401 without a token, not a 400 for the host or a 301
    to an https port the Service lacks); other paths still redirect; and once the image's
    collectstatic has run, the admin renders (it answered 500 without the manifest)."""
    config = _config_map()
    internal = urlsplit(config["ZS_PUBLIC_URL"]).hostname
    public = config["ZS_ALLOWED_HOSTS"].split(",")[0]
    result = _run("-c", _IN_CLUSTER_REQUESTS, str(internal), public, env={**PROD_ENV, **config})
    assert result.returncode == 0, result.stderr
    answers = json.loads(result.stdout.strip().splitlines()[-1])
    assert answers == {"report": 401, "runs": 401, "overview": 301, "admin": 200}


def test_the_image_collects_static_files_where_no_volume_hides_them() -> None:
    dockerfile = (ROOT / "platform" / "images" / "Dockerfile").read_text()
    lines = dockerfile.splitlines()
    collect = next(i for i, line in enumerate(lines) if "collectstatic" in line)
    copied = [i for i, line in enumerate(lines) if line.startswith(("COPY apps/", "COPY config/"))]
    assert copied and max(copied) < collect
    code = "from django.conf import settings; print(settings.STATIC_ROOT)"
    result = _run("-c", f"import django; django.setup(); {code}", env=PROD_ENV)
    assert result.returncode == 0, result.stderr
    in_image = Path("/app") / Path(result.stdout.strip()).relative_to(ROOT)
    for name in ("web.yaml", "worker.yaml"):
        for doc in _k8s_docs("k8s", "app", name):
            if doc["kind"] != "Deployment":
                continue
            for container in doc["spec"]["template"]["spec"]["containers"]:
                for mount in container.get("volumeMounts", []):
                    assert not in_image.is_relative_to(mount["mountPath"]), (name, mount)


def test_the_image_carries_the_code_and_the_translations() -> None:
    # LOCALE_PATHS: without it the image would answer Chinese readers in English, silently.
    from django.conf import settings

    copied = set(re.findall(r"^COPY (\S+)/ ", (ROOT / "platform" / "images" / "Dockerfile")
                            .read_text(), re.M))  # fmt: skip
    for path in settings.LOCALE_PATHS:
        assert Path(path).relative_to(ROOT).as_posix() in copied
    assert {"apps", "config"} <= copied


def test_every_image_the_install_runs_is_built_by_a_dockerfile_here() -> None:
    """Each Dockerfile in platform/images names the image it builds (`-t <image>`); every
    image a manifest or the compose file runs is one of them (the slow-node probes' nccl-tests
    image is the operator's, HEALTH_PROBE_IMAGE, docs/health.md)."""
    built: dict[str, str] = {}
    for dockerfile in sorted((ROOT / "platform" / "images").glob("*Dockerfile")):
        for image in re.findall(r"-t (\S+) \.$", dockerfile.read_text(), flags=re.MULTILINE):
            built[image] = dockerfile.name
    used: set[str] = set()
    for path in (ROOT / "platform").rglob("*.yaml"):
        if path.name != "probe-pods.example.yaml":
            used.update(re.findall(r"^\s*image: (\S+)$", path.read_text(), flags=re.MULTILINE))
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    used.update(s["image"] for s in compose["services"].values() if "build" in s)
    assert used and used <= set(built), used - set(built)
    agent = ROOT / "platform" / "images" / built["registry.example.com/zhisuan/agent:0.1.0"]
    # The DaemonSet passes arguments only, so the image's entrypoint must be the agent.
    assert 'ENTRYPOINT ["zhisuan-agent"]' in agent.read_text()
    [daemonset] = _k8s_docs("agent", "daemonset.yaml")
    [container] = daemonset["spec"]["template"]["spec"]["containers"]
    assert "command" not in container and container["args"]
