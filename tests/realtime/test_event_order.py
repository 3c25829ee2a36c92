"""Tenant events leave a process in sequence order, even from a worker's many threads.

A client treats any sequence number other than ``last + 1`` as missed events and refetches
over REST; events taken out of order by concurrent threads would make every client refetch
for nothing (and a slow client fall minutes behind). Real Redis: sequence numbers from INCR,
messages through the Redis channel layer."""

from __future__ import annotations

import itertools
import threading

import pytest
import redis
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import connection
from django.test import override_settings

from apps.core.consumers import tenant_group
from apps.core.events import publish_tenant_event
from tests.conftest import World

pytestmark = pytest.mark.django_db(transaction=True)

THREADS = 8
EACH = 12  # 96 in all: under the test layer's default channel capacity (100)


@override_settings(REDIS_URL=settings.TEST_REDIS_URL)  # sequence numbers from Redis INCR
def test_events_from_concurrent_threads_arrive_in_sequence_order(world: World) -> None:
    tenant = world.tenant_a
    redis.Redis.from_url(settings.TEST_REDIS_URL).delete(f"zs:seq:tenant:{tenant.slug}")
    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(tenant_group(tenant.pk), channel)
    start = threading.Barrier(THREADS)

    def publish(thread: int) -> None:
        start.wait()
        try:
            for i in range(EACH):
                # Outside a transaction, on_commit sends at once, as after a worker's commit.
                publish_tenant_event(tenant.pk, tenant.slug, "job.updated", {"id": thread, "i": i})
        finally:
            connection.close()  # this thread's own database connection

    threads = [threading.Thread(target=publish, args=(t,)) for t in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    async def receive_all() -> list[int]:
        return [(await layer.receive(channel))["payload"]["seq"] for _ in range(THREADS * EACH)]

    seqs = async_to_sync(receive_all)()
    async_to_sync(layer.group_discard)(tenant_group(tenant.pk), channel)
    assert sorted(seqs) == list(range(1, THREADS * EACH + 1))  # none lost, none repeated
    late = [s for a, s in itertools.pairwise(seqs) if s < a]
    assert not late, f"arrived after a higher number: {late}"
