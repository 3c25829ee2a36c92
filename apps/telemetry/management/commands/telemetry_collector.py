"""``manage.py telemetry_collector``: the telemetry collector as its own process.

The embedded default collects on a thread of the web process (apps/core/ticker.py). A
production install runs this command as one process (platform/k8s/app/telemetry.yaml, the
``telemetry`` service of docker-compose.yml): it reads the GPU and node metrics
(``ZS_TELEMETRY_SOURCE``: Prometheus with the DCGM exporter on a real cluster), stores the
newest state in Redis for the REST snapshot, sends the live frames over the channel layer
and writes the history rollups. One publisher only: frame sequence numbers are its own.
"""

from __future__ import annotations

import signal
import threading
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.telemetry.collector import run


class Command(BaseCommand):
    help = "Run the telemetry collector (one collection per interval) until stopped."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--interval", type=float, default=1.0, help="seconds per tick")
        parser.add_argument("--ticks", type=int, default=0, help="stop after N ticks (0: never)")

    def handle(self, *args: Any, **options: Any) -> None:
        interval, ticks = float(options["interval"]), int(options["ticks"])
        if not interval > 0:
            raise CommandError("--interval must be a positive number of seconds")
        if ticks < 0:
            raise CommandError("--ticks must be 0 (run until stopped) or more")
        stop = threading.Event()
        # A rolling restart sends SIGTERM: finish the tick and write the open history buckets.
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: stop.set())
        run(interval, ticks, stop=stop)
