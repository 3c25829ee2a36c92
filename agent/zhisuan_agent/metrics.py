"""Prometheus metrics of the agent, on its own registry (scraped by the DaemonSet's port)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge

from .model import Result, Status

STATUS_VALUE = {Status.OK: 0, Status.WARN: 1, Status.FAIL: 2, Status.ABSENT: -1}


class Metrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
        self.status = Gauge(
            "zs_agent_check_status", "0 ok, 1 warn, 2 fail, -1 absent", ["check"], registry=r
        )
        self.faults = Gauge(
            "zs_agent_fault_active",
            "1 while the check reports this fault",
            ["check", "fault"],
            registry=r,
        )
        self.rounds = Counter("zs_agent_rounds", "Check rounds run", registry=r)
        self.reports = Counter(
            "zs_agent_reports", "Reports sent to the platform", ["outcome"], registry=r
        )
        self.duration = Gauge("zs_agent_round_seconds", "Duration of the last round", registry=r)

    def observe(self, results: list[Result], seconds: float) -> None:
        self.rounds.inc()
        self.duration.set(seconds)
        self.faults.clear()
        for res in results:
            self.status.labels(res.check).set(STATUS_VALUE[res.status])
            for fault in res.faults:
                self.faults.labels(res.check, fault).set(1)
