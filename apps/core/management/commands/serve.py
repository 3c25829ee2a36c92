"""``manage.py serve``: the whole product in one process (ASGI server + worker + channels)."""

from __future__ import annotations

import asyncio
from typing import Any

import uvicorn
from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from apps.core import embedded, ticker
from config import env


class Command(BaseCommand):
    help = "Serve API, dashboard and websockets; runs an in-process worker in the embedded mode."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default=env.get_str("ZS_HOST", "127.0.0.1"))
        parser.add_argument("--port", type=int, default=env.get_int("ZS_PORT", 8000))

    def handle(self, *args: Any, **options: Any) -> None:
        with_worker = env.get_bool("ZS_EMBEDDED_WORKER", settings.REDIS_URL is None)
        if with_worker:
            embedded.start_worker()
            ticker.start()
        config = uvicorn.Config(
            "config.asgi:application",
            host=options["host"],
            port=options["port"],
            log_level=settings.LOG_LEVEL.lower(),
            lifespan="off",
            ws="websockets-sansio",
            # Compression is per socket: 100 dashboards viewing the 10,000-GPU heatmap would
            # compress 100 copies of each frame (docs/benchmarks.md, Telemetry).
            ws_per_message_deflate=env.get_bool("ZS_WS_COMPRESSION", False),
        )
        server = uvicorn.Server(config)

        async def main() -> None:
            embedded.set_server_loop(asyncio.get_running_loop())
            await server.serve()

        db = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]
        self.stdout.write(
            f"Zhisuan on http://{options['host']}:{options['port']}/  "
            f"(database: {db}, broker: {settings.CELERY_BROKER_URL.split('://')[0]}, "
            f"worker: {'in-process' if with_worker else 'external'})"
        )
        asyncio.run(main())
