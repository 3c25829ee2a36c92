"""Liveness (/healthz) and readiness (/readyz: database, broker, channel layer)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET

log = logging.getLogger("zhisuan.health")


def check_database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()


def check_broker() -> None:
    from config.celery import app

    with app.connection_for_write() as conn:
        conn.ensure_connection(max_retries=1, timeout=2)


def check_channel_layer() -> None:
    layer = get_channel_layer()
    if layer is None:
        raise RuntimeError("no channel layer configured")

    async def roundtrip() -> None:
        channel = await layer.new_channel("readyz.")
        await layer.send(channel, {"type": "readyz.ping"})
        message = await asyncio.wait_for(layer.receive(channel), timeout=2)
        if message.get("type") != "readyz.ping":
            raise RuntimeError("channel layer returned a different message")

    async_to_sync(roundtrip)()


CHECKS: dict[str, Callable[[], None]] = {
    "database": check_database,
    "broker": check_broker,
    "channel_layer": check_channel_layer,
}


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})


@require_GET
def readyz(request: HttpRequest) -> JsonResponse:
    results: dict[str, dict[str, object]] = {}
    ok = True
    for name, check in CHECKS.items():
        started = time.perf_counter()
        try:
            check()
            results[name] = {"ok": True}
        except Exception as exc:  # noqa: BLE001 - readiness reports any failure, never raises
            ok = False
            log.warning("readiness check %s failed: %s", name, exc)
            results[name] = {"ok": False, "error": str(exc)[:200]}
        results[name]["ms"] = round((time.perf_counter() - started) * 1000, 1)
    return JsonResponse(
        {"status": "ok" if ok else "fail", "checks": results}, status=200 if ok else 503
    )
