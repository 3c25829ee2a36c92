"""The events socket while the channel layer (Redis) is unreachable: the handshake is refused
with 1013 before it completes (so clients back off), instead of an accepted socket that then
crashes with a traceback per client and reconnect storms (found by test_redis_loss)."""

from __future__ import annotations

from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.layers import channel_layers
from django.test import override_settings

from apps.core.consumers import CLOSE_TRY_AGAIN
from apps.tenancy.models import Role
from tests.conftest import World
from tests.net import free_port
from tests.realtime.test_events_socket import communicator, token_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


async def test_handshake_is_refused_with_1013_while_the_layer_is_down(
    transactional_db: Any,
) -> None:
    world = await database_sync_to_async(World)()
    token = await token_for(world, "a", Role.MEMBER)
    dead = {"default": {"BACKEND": "channels_redis.core.RedisChannelLayer",
                        "CONFIG": {"hosts": [f"redis://127.0.0.1:{free_port()}/0"]}}}  # fmt: skip
    with override_settings(CHANNEL_LAYERS=dead):
        channel_layers.backends.clear()  # built again from the overridden settings
        try:
            connected, code = await communicator(token).connect(timeout=10)
        finally:
            channel_layers.backends.clear()
    assert not connected
    assert code == CLOSE_TRY_AGAIN
