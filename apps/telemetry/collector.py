"""The collector: source -> state -> rollups + newest state + one frame per watched view.

``Collector.tick()`` runs about once a second (``run``): in the embedded default on its own
thread (``start``, from ``apps.core.ticker``), in production as ``manage.py
telemetry_collector``, one process (frame sequence numbers are per publisher).
Sends go through the channel layer once per view per tick, never per sample.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import close_old_connections

from apps.core import alive, embedded
from apps.telemetry import live
from apps.telemetry.aggregate import Owner, RateTracker, State, build_state
from apps.telemetry.frames import FrameCutter, View, encode
from apps.telemetry.gpu_history import RECENT, RecentGpuHistory
from apps.telemetry.inventory import load_inventory
from apps.telemetry.rollup import Rollups
from apps.telemetry.sources.base import TelemetrySource
from apps.telemetry.sources.simulated import Inventory, SimulatedSource

log = logging.getLogger("zhisuan.telemetry")
INVENTORY_REFRESH_S = 5.0


def owners_of(inventory: Inventory) -> dict[str, Owner]:
    return {
        f"{g.hostname}:{g.gpu}": Owner(job_id=g.job_id, tenant_id=g.tenant_id, pool_id=g.pool_id)
        for g in inventory.gpus
    }


def default_source(inventory: Callable[[], Inventory]) -> TelemetrySource:
    """``ZS_TELEMETRY_SOURCE``: simulated (default) | prometheus (at ``ZS_PROMETHEUS_URL``)."""
    if settings.TELEMETRY_SOURCE == "prometheus":
        from apps.telemetry.sources.prometheus import PrometheusSource

        return PrometheusSource(settings.PROMETHEUS_URL)
    return SimulatedSource(inventory=inventory, seed=settings.TELEMETRY_SEED)


def send_frames(frames: list[tuple[View, dict[str, object]]]) -> None:
    """One group_send per view; the text is encoded once, not once per client."""
    layer = get_channel_layer(live.layer_alias())
    if layer is None:
        return
    for view, frame in frames:
        message = {"type": "telemetry.frame", "topic": view.topic, "text": encode(frame)}
        try:
            if not settings.REDIS_URL and embedded.run_on_server_loop(
                layer.group_send(view.group, message)
            ):
                continue
            async_to_sync(layer.group_send)(view.group, message)
        except Exception:  # a Redis restart: the next tick tries again, clients resync
            log.warning("telemetry frame for %s not sent", view.topic, exc_info=True)


class Collector:
    def __init__(
        self,
        source: TelemetrySource | None = None,
        inventory: Callable[[], Inventory] = load_inventory,
        rollups: bool = True,
        gpu_history: RecentGpuHistory | None = None,
    ) -> None:
        self._inventory_fn = inventory
        self._inventory: Inventory | None = None
        self._inventory_at = 0.0
        self._owners: tuple[Inventory, dict[str, Owner]] | None = None
        self.source = source or default_source(self.inventory)
        self.rates = RateTracker()
        self.cutter = FrameCutter()
        self.rollups = Rollups() if rollups else None
        # Per-GPU history kept here only where the web process is this one (the embedded
        # default) and no Prometheus keeps it (apps/telemetry/gpu_history.py).
        if (
            gpu_history is None
            and not settings.REDIS_URL
            and settings.TELEMETRY_SOURCE != "prometheus"
        ):
            gpu_history = RECENT
        self.gpu_history = gpu_history

    def inventory(self) -> Inventory:
        now = time.monotonic()
        if self._inventory is None or now - self._inventory_at > INVENTORY_REFRESH_S:
            self._inventory = self._inventory_fn()
            self._inventory_at = now
        return self._inventory

    def refresh_inventory(self) -> None:
        self._inventory = None

    def owners(self) -> dict[str, Owner]:
        """Owners by GPU key, rebuilt only when the inventory object changes (10,000 GPUs)."""
        inventory = self.inventory()
        if self._owners is None or self._owners[0] is not inventory:
            self._owners = (inventory, owners_of(inventory))
        return self._owners[1]

    def tick(self) -> State:
        collection = self.source.collect()
        state = build_state(collection, self.owners(), self.rates.rates(collection))
        # Frames first: they are the latency-critical path. A client that resyncs in the
        # moment before the snapshot below is stored gets the previous tick's snapshot; at
        # worst it sees one more gap and fetches again.
        send_frames(self.cutter.cut(state, live.active_views()))
        try:
            live.put_latest(self.cutter.epoch, self.cutter.seq, state)
        except Exception:
            log.warning("latest telemetry not stored", exc_info=True)
        if self.rollups is not None:
            self.rollups.feed(state)
        if self.gpu_history is not None:
            self.gpu_history.record(collection)
        return state


def run(
    interval_s: float = 1.0,
    ticks: int = 0,
    collector: Collector | None = None,
    stop: threading.Event | None = None,
) -> Collector:
    """Collect, publish and roll up once per ``interval_s`` until ``stop`` is set (or, with
    ``ticks`` > 0, that many times); prune old history once a minute. A failed tick is logged
    and the loop goes on: a Prometheus or database outage must not end the only publisher.
    On the way out the open history buckets are written, so a restart loses no job usage."""
    collector = collector or Collector()
    stop = stop or threading.Event()
    last_prune = float("-inf")
    done = 0
    while not stop.is_set() and (ticks <= 0 or done < ticks):
        began = time.monotonic()
        try:
            collector.tick()
            if began - last_prune > 60:
                from apps.telemetry.rollup import prune

                prune()
                last_prune = began
        except Exception:
            log.exception("telemetry tick failed")
        finally:
            close_old_connections()
        alive.touch("telemetry")  # the loop goes on, even after a failed tick
        done += 1
        if ticks <= 0 or done < ticks:
            stop.wait(max(0.05, interval_s - (time.monotonic() - began)))
    if collector.rollups is not None:
        try:
            collector.rollups.flush()
        except Exception:
            log.exception("telemetry history not flushed")
        finally:
            close_old_connections()
    return collector


_started: threading.Thread | None = None


def start(interval_s: float = 1.0) -> threading.Thread:
    """The embedded default's collector thread (started once, from apps.core.ticker). A
    production install runs the same loop as ``manage.py telemetry_collector``."""
    global _started  # one collector per process
    if _started is not None:
        return _started
    _started = threading.Thread(
        target=run, args=(interval_s,), name="embedded-telemetry", daemon=True
    )
    _started.start()
    return _started
