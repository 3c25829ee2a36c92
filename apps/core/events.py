"""Websocket events after commit: ``{"type", "topic", "seq", "data"}`` to a tenant's group,
and which pools changed to the ``pools`` group.

Sequence numbers are per topic: Redis INCR when Redis is configured (shared by every process),
else a counter in this process (the embedded default is one process).
"""

from __future__ import annotations

import functools
import itertools
import logging
import threading
from collections import defaultdict
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import transaction

from apps.core import embedded
from apps.core.consumers import POOLS_GROUP, POOLS_TOPIC, tenant_group

log = logging.getLogger("zhisuan.events")
_local_seq: defaultdict[str, itertools.count[int]] = defaultdict(lambda: itertools.count(1))
_lock = threading.Lock()
# Held from taking a sequence number until the layer has the message, so this process's
# events leave in sequence order. Without it a worker's threads interleave (one takes 5,
# another takes 6 and sends first) and every client sees a false gap and refetches: in the
# Redis-loss test up to 23 of a client's 100 events looked like gaps under CPU load.
_publish_lock = threading.Lock()
# Pools changed in this thread's open transaction(s), sent as one event at the next commit.
_changed = threading.local()


@functools.cache
def _redis(url: str) -> Any:
    """One client (and connection pool) per URL for the process: the sequence number is
    taken under ``_publish_lock``, so a new connection per event would serialise a connect
    per event across the worker's threads. redis-py clients are thread-safe."""
    import redis

    return redis.Redis.from_url(url)


def next_seq(topic: str) -> int:
    if settings.REDIS_URL:
        return int(_redis(settings.REDIS_URL).incr(f"zs:seq:{topic}"))
    with _lock:
        return next(_local_seq[topic])


def _send(group: str, payload: dict[str, Any]) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    message = {"type": "event.message", "payload": payload}
    # The in-memory layer is not thread-safe: hand the send to the server's loop when embedded.
    if not settings.REDIS_URL and embedded.run_on_server_loop(layer.group_send(group, message)):
        return
    async_to_sync(layer.group_send)(group, message)


def publish_tenant_event(tenant_id: int, tenant_slug: str, kind: str, data: dict[str, Any]) -> None:
    """Send after the surrounding transaction commits; a failed send is logged, never raised
    (clients resync from REST on a sequence gap)."""

    def send() -> None:
        topic = f"tenant:{tenant_slug}"
        try:
            with _publish_lock:
                payload = {"type": kind, "topic": topic, "seq": next_seq(topic), "data": data}
                _send(tenant_group(tenant_id), payload)
        except Exception:
            log.warning("could not publish %s to %s", kind, topic, exc_info=True)

    transaction.on_commit(send)


def _changed_pools() -> set[int]:
    pools: set[int] | None = getattr(_changed, "pools", None)
    if pools is None:
        pools = _changed.pools = set()
    return pools


def publish_pools_changed(*pool_ids: int | None) -> None:
    """Tell every dashboard that these pools' state changed (allocations, queue, holds, nodes),
    once per commit however many changes the transaction made: a scheduling cycle that
    admits a hundred jobs sends one event, not a hundred.

    Every call registers the send, and the first to run after commit sends every pool noted
    so far and empties the set, so the rest send nothing. A pool noted in a transaction that
    rolled back goes out with the next commit: one refetch too many, never one missed."""
    pools = _changed_pools()
    pools.update(p for p in pool_ids if p is not None)
    transaction.on_commit(_send_pools_changed)


def _send_pools_changed() -> None:
    pools = _changed_pools()
    if not pools:
        return
    ids = sorted(pools)
    pools.clear()
    try:
        with _publish_lock:
            payload = {
                "type": "pools.changed",
                "topic": POOLS_TOPIC,
                "seq": next_seq(POOLS_TOPIC),
                "data": {"ids": ids},
            }
            _send(POOLS_GROUP, payload)
    except Exception:
        log.warning("could not publish pools.changed for %s", ids, exc_info=True)
