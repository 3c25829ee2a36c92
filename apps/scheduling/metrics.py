"""Scheduling state as Prometheus metrics on /metrics, read from the database at each scrape.

Operators alert on what the Cluster page's topology card shows: per pool the accelerators
used, free and out of service, the free ones stranded on part-used nodes, wholly free nodes,
the largest whole-node gang that could start now per tier, the queue by pending reason, and
when the scheduler last ran a cycle. Read from the database, not kept in process, so every
web replica answers the same and a scrape never depends on which process ran the cycle.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

from django.db import DatabaseError
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import REGISTRY, Collector

from apps.clusters.topology import pool_states
from apps.scheduling.models import SchedulerLock

log = logging.getLogger("zhisuan.metrics")

DEVICE_STATES = ("used", "free", "unavailable")
TIERS = ("leaf", "scalable_unit", "pool")


class SchedulingCollector(Collector):
    def describe(self) -> list[Metric]:
        # Without it, registering would run ``collect`` (database reads at start-up).
        return []

    def collect(self) -> Iterator[Metric]:
        try:
            yield from self._collect()
        except DatabaseError:
            # /metrics must answer while the database is away: its HTTP counters still tell.
            log.warning("scheduling metrics skipped: database unavailable", exc_info=True)

    def _collect(self) -> Iterator[Metric]:
        labels = ["cluster", "pool"]
        devices = GaugeMetricFamily(
            "zhisuan_pool_devices",
            "Accelerators of a pool's schedulable nodes, by state (used, free, unavailable)",
            labels=[*labels, "state"],
        )
        stranded = GaugeMetricFamily(
            "zhisuan_pool_stranded_devices",
            "Free accelerators on nodes with fewer free than a whole-node replica needs",
            labels=labels,
        )
        whole = GaugeMetricFamily(
            "zhisuan_pool_whole_free_nodes", "Nodes with every accelerator free", labels=labels
        )
        largest = GaugeMetricFamily(
            "zhisuan_pool_largest_gang_devices",
            "Most accelerators a gang of whole-node replicas could take now, inside one domain "
            "of the tier",
            labels=[*labels, "model", "tier"],
        )
        queued = GaugeMetricFamily(
            "zhisuan_pool_queued_jobs",
            "Jobs waiting in the pool's queue, by pending reason",
            labels=[*labels, "reason"],
        )
        queued_devices = GaugeMetricFamily(
            "zhisuan_pool_queued_devices",
            "Accelerators the pool's queued jobs request (jobs waiting for others to succeed "
            "left out: they ask for none yet)",
            labels=labels,
        )
        for state in pool_states():
            key = [state.pool.cluster.name, state.pool.name]
            counts = state.summary
            for name in DEVICE_STATES:
                devices.add_metric([*key, name], getattr(counts, name))
            stranded.add_metric(key, counts.stranded)
            whole.add_metric(key, counts.whole_free_nodes)
            for gang in state.largest_gang:
                for tier in TIERS:
                    largest.add_metric([*key, gang["model"], tier], gang[tier])
            for row in state.queue["by_code"]:
                queued.add_metric([*key, row["code"] or "none"], row["jobs"])
            queued_devices.add_metric(key, state.queue["devices"])
        yield from (devices, stranded, whole, largest, queued, queued_devices)
        lock = SchedulerLock.objects.filter(name="admission").first()
        if lock is not None and lock.last_cycle_at is not None:
            at = GaugeMetricFamily(
                "zhisuan_scheduler_last_cycle_timestamp_seconds",
                "When the scheduler last ran a cycle (alert when it falls behind)",
            )
            at.add_metric([], lock.last_cycle_at.timestamp())
            yield at
            if lock.last_cycle_ms is not None:
                took = GaugeMetricFamily(
                    "zhisuan_scheduler_last_cycle_duration_seconds",
                    "How long the last scheduling cycle took, snapshot to applied decisions",
                )
                took.add_metric([], lock.last_cycle_ms / 1000)
                yield took


_registered = False


def register() -> None:
    """Add the collector to the default registry once (``SchedulingConfig.ready``)."""
    global _registered
    if not _registered:
        REGISTRY.register(SchedulingCollector())
        _registered = True
