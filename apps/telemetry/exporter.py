"""Serve the simulated cluster under the DCGM exporter's and node-exporter's names.

Prometheus scrapes this exactly as it would scrape dcgm-exporter and node-exporter on a real
cluster, which is what lets the Prometheus source be tested end to end against the simulated
cluster. A ``prometheus_client`` collector over any source's collection; served by
``prometheus_client``'s own HTTP server (``serve``) or rendered by a Django view.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from apps.telemetry import metrics as m
from apps.telemetry.metrics import Collection

HELP = {
    m.GPU_UTIL: "GPU utilization (in %).",
    m.FB_USED: "Framebuffer memory used (in MiB).",
    m.FB_FREE: "Framebuffer memory free (in MiB).",
    m.GPU_TEMP: "GPU temperature (in C).",
    m.POWER: "Power draw (in W).",
    m.SM_ACTIVE: "The ratio of cycles an SM has at least 1 warp assigned.",
    m.TENSOR_ACTIVE: "Ratio of cycles the tensor (HMMA) pipe is active.",
    m.ECC_SBE: "Total number of single-bit volatile ECC errors.",
    m.ECC_DBE: "Total number of double-bit volatile ECC errors.",
    m.XID: "Value of the last XID error encountered.",
    m.NVLINK_TX: "The rate of data transmitted over NVLink, in bytes per second.",
    m.NVLINK_RX: "The rate of data received over NVLink, in bytes per second.",
    m.PCIE_TX: "The rate of data transmitted over the PCIe bus, in bytes per second.",
    m.PCIE_RX: "The rate of data received over the PCIe bus, in bytes per second.",
}
_NODE_DEVICE_LABEL = {m.CPU_SECONDS: "mode"}


class SimulatedDcgmCollector(Collector):
    """A prometheus_client collector: each scrape calls ``collect_fn`` once."""

    def __init__(self, collect_fn: Callable[[], Collection]) -> None:
        self.collect_fn = collect_fn

    def collect(self) -> Iterator[Metric]:
        data = self.collect_fn()
        labels = list(m.GPU_LABELS)
        for name in m.GPU_METRICS:
            family = GaugeMetricFamily(name, HELP[name], labels=labels)
            for s in data.gpus:
                family.add_metric(
                    [str(s.gpu), s.uuid, s.hostname, s.model_name, s.pod, s.namespace],
                    s.values.get(name, 0.0),
                )
            yield family
        for name in (m.MEM_TOTAL, m.MEM_AVAILABLE):
            gauge = GaugeMetricFamily(name, name, labels=[m.NODE_LABEL])
            for node in data.nodes:
                gauge.add_metric([node.hostname], node.values.get(name, 0.0))
            yield gauge
        counters: dict[str, CounterMetricFamily] = {}
        for node in data.nodes:
            for (name, device), value in sorted(node.devices.items()):
                counter = counters.get(name)
                if counter is None:
                    sub = _NODE_DEVICE_LABEL.get(name, "device")
                    extra = ["cpu", sub] if name == m.CPU_SECONDS else [sub]
                    # prometheus_client appends _total itself.
                    counter = CounterMetricFamily(
                        name.removesuffix("_total"), name, labels=[m.NODE_LABEL, *extra]
                    )
                    counters[name] = counter
                values = [node.hostname, "all", device] if name == m.CPU_SECONDS else [
                    node.hostname, device
                ]  # fmt: skip
                counter.add_metric(values, value)
        yield from counters.values()


def registry_for(collect_fn: Callable[[], Collection]) -> CollectorRegistry:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(SimulatedDcgmCollector(collect_fn))
    return registry


def render(collect_fn: Callable[[], Collection]) -> bytes:
    return bytes(generate_latest(registry_for(collect_fn)))


def serve(collect_fn: Callable[[], Collection], port: int, addr: str = "127.0.0.1") -> Any:
    """Start an exporter HTTP server on a daemon thread; returns (server, thread)."""
    from prometheus_client import start_http_server

    lock = threading.Lock()

    def locked() -> Collection:
        with lock:  # the source keeps counters: one scrape at a time
            return collect_fn()

    return start_http_server(port, addr=addr, registry=registry_for(locked))
