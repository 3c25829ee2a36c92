"""Production checks, token hygiene, security logging, throttling and the telemetry socket."""

from __future__ import annotations

import logging
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
import pytest_asyncio
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.core.cache import cache
from rest_framework.test import APIClient
from rest_framework.throttling import ScopedRateThrottle

from apps.accounts.models import ApiToken
from apps.accounts.services import create_token
from apps.tenancy.models import Role
from config.asgi import application
from tests.conftest import World
from tests.factories import PASSWORD

from .conftest import Foreign, build_foreign

ROOT = Path(__file__).resolve().parents[2]


def _prod_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ZS_", "DJANGO_"))}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings.prod",
        DATABASE_URL="postgres://postgres@127.0.0.1:5432/zhisuan",
        REDIS_URL="redis://127.0.0.1:6379/0",
        ZS_ALLOWED_HOSTS="zhisuan.example.com",
        **extra,
    )
    return env


def test_check_deploy_with_production_settings_has_no_findings() -> None:
    env = _prod_env(ZS_SECRET_KEY=secrets.token_urlsafe(50))
    done = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no issues (0 silenced)" in done.stdout


def test_production_has_no_default_secret() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=ROOT, env=_prod_env(), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode != 0
    assert "ZS_SECRET_KEY" in done.stderr


# -- tokens ---------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_tokens_are_random_hashed_and_never_logged(world: World, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    user = world.user("a", Role.MEMBER)
    plaintexts = [create_token(user=user, name=f"t{i}")[1] for i in range(20)]
    assert len(set(plaintexts)) == 20
    secrets_only = [p.split("_", 2)[2] for p in plaintexts]
    assert min(len(s) for s in secrets_only) >= 32
    digests = set(ApiToken.objects.values_list("digest", flat=True))
    assert not any(s in d for s in secrets_only for d in digests)  # only digests at rest
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintexts[0]}")
    assert client.get("/api/v1/overview/").status_code == 200
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintexts[1]}x")  # a wrong secret
    assert client.get("/api/v1/overview/").status_code == 401
    created = APIClient()
    created.force_authenticate(user)
    shown = created.post("/api/v1/tokens/", {"name": "api"}, format="json").json()["token"]
    logged = caplog.text
    for secret in [*secrets_only, shown.split("_", 2)[2]]:
        assert secret not in logged
    assert "token authentication failed" in logged  # the failure itself is logged, by prefix


# -- logging of failures --------------------------------------------------------------------------


@pytest.mark.django_db
def test_login_failure_is_logged_with_who_from_where_and_when(world: World, caplog) -> None:
    caplog.set_level(logging.WARNING, logger="zhisuan.auth")
    client = APIClient(enforce_csrf_checks=False)
    response = client.post(
        "/api/v1/auth/login/",
        {"username": "a-member", "password": "wrong"},
        format="json",
        REMOTE_ADDR="203.0.113.9",
    )
    assert response.status_code == 400
    records = [r for r in caplog.records if "login failed" in r.getMessage()]
    assert len(records) == 1
    message = records[0].getMessage()
    assert "username=a-member" in message and "ip=203.0.113.9" in message
    assert records[0].created > 0  # the formatter prints it as the time
    assert "wrong" not in message and PASSWORD not in caplog.text


@pytest.mark.django_db
def test_permission_denials_are_logged_with_who_and_what(world: World, caplog) -> None:
    caplog.set_level(logging.WARNING, logger="zhisuan.api")
    client = APIClient()
    client.force_authenticate(world.user("a", Role.VIEWER))
    url = "/api/v1/tenants/tenant-a/projects/"
    assert client.post(url, {"name": "x"}, format="json").status_code == 403
    assert APIClient().get(url).status_code == 401
    denied = [r.getMessage() for r in caplog.records if r.getMessage().startswith("denied:")]
    assert f"denied: status=403 user=a-viewer method=POST path={url}" in denied
    assert f"denied: status=401 user=anonymous method=GET path={url}" in denied


# -- throttling -----------------------------------------------------------------------------------


@pytest.fixture
def tight_throttles(monkeypatch: pytest.MonkeyPatch) -> None:
    # DRF binds the rates when the class is imported; production reads them from
    # ZS_THROTTLE_LOGIN / ZS_THROTTLE_TOKENS (config/env.py).
    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {"login": "3/min", "tokens": "3/min"})
    cache.clear()


@pytest.mark.django_db
@pytest.mark.usefixtures("tight_throttles")
def test_login_is_throttled(world: World) -> None:
    client = APIClient()
    body = {"username": "a-member", "password": "wrong"}
    codes = [client.post("/api/v1/auth/login/", body, format="json").status_code for _ in range(5)]
    assert codes[:3] == [400, 400, 400]
    assert codes[3:] == [429, 429]


@pytest.mark.django_db
@pytest.mark.usefixtures("tight_throttles")
def test_token_creation_is_throttled(world: World) -> None:
    client = APIClient()
    client.force_authenticate(world.user("a", Role.MEMBER))
    codes = [
        client.post("/api/v1/tokens/", {"name": f"t{i}"}, format="json").status_code
        for i in range(5)
    ]
    assert codes == [201, 201, 201, 429, 429]
    assert ApiToken.objects.count() == 3


def test_throttle_rates_come_from_the_environment() -> None:
    code = (
        "import django; django.setup(); from django.conf import settings; "
        "print(settings.REST_FRAMEWORK['DEFAULT_THROTTLE_RATES'])"
    )
    env = _prod_env(
        ZS_SECRET_KEY=secrets.token_urlsafe(50), ZS_THROTTLE_LOGIN="5/min",
        ZS_THROTTLE_TOKENS="7/hour",
    )  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "'login': '5/min'" in done.stdout and "'tokens': '7/hour'" in done.stdout


# -- telemetry websocket --------------------------------------------------------------------------

ORIGIN = (b"origin", b"http://127.0.0.1:8000")


def telemetry_socket(token: str | None, origin: tuple[bytes, bytes] = ORIGIN):
    return WebsocketCommunicator(
        application, "/ws/v1/telemetry/", headers=[origin, (b"host", b"127.0.0.1:8000")],
        subprotocols=[f"bearer.{token}"] if token else [],
    )  # fmt: skip


@pytest_asyncio.fixture
async def async_world(db) -> tuple[World, Foreign]:
    world = await database_sync_to_async(World)()
    return world, await database_sync_to_async(build_foreign)(world)


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_telemetry_socket_refuses_strangers_and_foreign_topics(async_world) -> None:
    world, foreign = async_world
    connected, code = await telemetry_socket(None).connect()
    assert not connected and code == 4401
    for role in Role:
        user = world.user("a", role)
        _row, token = await database_sync_to_async(create_token)(user=user, name="ws")
        evil = telemetry_socket(token, origin=(b"origin", b"https://evil.example.com"))
        connected, _code = await evil.connect()
        assert not connected
        comm = telemetry_socket(token)
        connected, _ = await comm.connect()
        assert connected
        topics = [
            f"job:{foreign.ids['job']}",
            "heatmap:tenant-b",
            "heatmap",
            "node:gpu-shared-01",
        ]
        for topic in topics:
            await comm.send_json_to({"action": "subscribe", "topic": topic})
            answer = await comm.receive_json_from(timeout=3)
            assert answer == {"type": "error", "topic": topic, "detail": "forbidden"}, answer
        await comm.disconnect()
