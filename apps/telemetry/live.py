"""Shared live state between the collector and the web processes: which views have
subscribers (so the collector cuts only those frames) and the newest state (for REST
snapshots). Redis when ``REDIS_URL`` is set (collector and web are separate processes), else
this process's memory (the embedded default is one process).
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import asdict
from typing import Any

from django.conf import settings

from apps.telemetry.aggregate import State
from apps.telemetry.frames import View

VIEW_TTL_S = 30.0  # consumers refresh every few seconds; a crashed web process ages out
_KEY_VIEWS = "zs:tlm:views"
_KEY_LATEST = "zs:tlm:latest"

_lock = threading.Lock()
_views: dict[str, tuple[float, View]] = {}
_latest: tuple[str, int, State] | None = None


def layer_alias() -> str:
    """The channel layer frames travel on: ``telemetry`` (Redis pub/sub) when configured,
    else the default layer (the embedded default's in-memory layer)."""
    return "telemetry" if "telemetry" in settings.CHANNEL_LAYERS else "default"


def _redis() -> Any:
    import redis

    return redis.Redis.from_url(str(settings.REDIS_URL), socket_timeout=2)


def touch_view(view: View) -> None:
    """Mark a view as watched for the next VIEW_TTL_S seconds."""
    expires = time.time() + VIEW_TTL_S
    if settings.REDIS_URL:
        _redis().hset(_KEY_VIEWS, view.topic, json.dumps([expires, asdict(view)]))
        return
    with _lock:
        _views[view.topic] = (expires, view)


def active_views() -> list[View]:
    now = time.time()
    if settings.REDIS_URL:
        client = _redis()
        out, stale = [], []
        for topic, raw in client.hgetall(_KEY_VIEWS).items():
            expires, fields = json.loads(raw)
            (out.append(View(**fields)) if expires > now else stale.append(topic))
        if stale:
            client.hdel(_KEY_VIEWS, *stale)
        return sorted(out, key=lambda v: v.topic)
    with _lock:
        for topic in [t for t, (exp, _v) in _views.items() if exp <= now]:
            del _views[topic]
        return sorted((v for _e, v in _views.values()), key=lambda v: v.topic)


def put_latest(epoch: str, seq: int, state: State) -> None:
    global _latest  # the newest state of this process (embedded default)
    if settings.REDIS_URL:
        blob = json.dumps({"epoch": epoch, "seq": seq, "state": state.to_json()})
        _redis().set(_KEY_LATEST, blob, ex=60)
        return
    with _lock:
        _latest = (epoch, seq, state)


def get_latest() -> tuple[str, int, State] | None:
    if settings.REDIS_URL:
        raw = _redis().get(_KEY_LATEST)
        if raw is None:
            return None
        blob = json.loads(raw)
        return blob["epoch"], int(blob["seq"]), State.from_json(blob["state"])
    with _lock:
        return _latest


def reset() -> None:
    """Forget everything (tests)."""
    global _latest  # test isolation
    with _lock:
        _views.clear()
        _latest = None
