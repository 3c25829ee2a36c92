"""``manage.py inference_autoscaler``: the inference autoscaling loop as its own process.

The scaler keeps its stable and panic windows in memory, so one process must own the loop: in
the embedded default the control-loop thread runs it (apps/core/ticker.py); on a production
install this command runs as a one-replica Deployment (platform/k8s/app/autoscaler.yaml). It
never calls the cluster: replica counts go through the outbox to the workers.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.db import close_old_connections

from apps.core import alive
from apps.inference.services import autoscale_tick

log = logging.getLogger("zhisuan.inference")


class Command(BaseCommand):
    help = "Run the inference autoscaler loop (one tick per interval) until stopped."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--interval", type=float, default=1.0, help="seconds per tick")
        parser.add_argument("--ticks", type=int, default=0, help="stop after N ticks (0: never)")

    def handle(self, *args: Any, **options: Any) -> None:
        interval, ticks = float(options["interval"]), int(options["ticks"])
        done = 0
        while ticks <= 0 or done < ticks:
            started = time.monotonic()
            try:
                autoscale_tick(dt=interval)
            except Exception:
                log.exception("inference autoscaler tick failed")
            finally:
                close_old_connections()
            alive.touch("autoscaler")
            done += 1
            time.sleep(max(0.0, interval - (time.monotonic() - started)))
