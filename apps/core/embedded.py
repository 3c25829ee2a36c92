"""The embedded default runs web, worker and channel layer in one process.

``start_worker`` runs a Celery worker in a daemon thread against the ``memory://`` broker, and
``server_loop`` remembers the ASGI server's event loop so code on other threads can hand
channel-layer sends to it (the in-memory layer is not thread-safe; see STACK_NOTES).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Coroutine
from typing import Any

log = logging.getLogger("zhisuan.embedded")

_server_loop: asyncio.AbstractEventLoop | None = None


def set_server_loop(loop: asyncio.AbstractEventLoop) -> None:
    global _server_loop  # one loop per process, set once at start-up
    _server_loop = loop


def server_loop() -> asyncio.AbstractEventLoop | None:
    return _server_loop


def run_on_server_loop(coro: Coroutine[Any, Any, Any]) -> bool:
    """Schedule a coroutine on the server loop; False when there is none (not embedded)."""
    loop = _server_loop
    if loop is None or loop.is_closed():
        coro.close()
        return False
    asyncio.run_coroutine_threadsafe(coro, loop)
    return True


def start_worker(concurrency: int = 2) -> threading.Thread:
    """A Celery worker thread inside this process (memory broker, thread pool)."""
    from config.celery import app

    def run() -> None:
        worker = app.Worker(
            pool="threads",
            concurrency=concurrency,
            loglevel="WARNING",
            without_heartbeat=True,
            without_mingle=True,
            without_gossip=True,
            quiet=True,
        )
        worker.start()

    thread = threading.Thread(target=run, name="embedded-celery-worker", daemon=True)
    thread.start()
    log.info("embedded Celery worker started (broker %s)", app.conf.broker_url)
    return thread
