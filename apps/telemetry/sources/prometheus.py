"""Telemetry from Prometheus' HTTP API, reading what dcgm-exporter and node-exporter export.

``/api/v1/query`` gives the newest value of every series; counters stay counters (the
pipeline turns them into rates, the same as for the simulated cluster). ``query_range`` serves
per-GPU history, which on a real cluster lives in Prometheus rather than in PostgreSQL.
Plain ``urllib``: one GET per query, no client library to pin.
"""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from apps.telemetry import metrics as m
from apps.telemetry.metrics import Collection, GpuSample, NodeSample

GPU_QUERY = '{__name__=~"DCGM_FI_.*"}'
CPU_QUERY = f"sum by (node, instance, mode) ({m.CPU_SECONDS})"
MEM_QUERY = '{__name__=~"node_memory_(MemTotal|MemAvailable)_bytes"}'
IO_QUERY = (
    '{__name__=~"node_(network_(receive|transmit)|disk_(read|written))_bytes_total'
    '|node_infiniband_port_data_(received|transmitted)_bytes_total"}'
)


class PrometheusError(RuntimeError):
    pass


def _host(labels: dict[str, str]) -> str:
    """node-exporter has no Hostname: use the relabelled ``node``, else the instance host."""
    return labels.get(m.NODE_LABEL) or labels.get("instance", "").rsplit(":", 1)[0]


@dataclass
class PrometheusSource:
    base_url: str
    timeout_s: float = 5.0
    name: str = "prometheus"

    def _get(self, path: str, params: dict[str, str]) -> Any:
        url = f"{self.base_url.rstrip('/')}{path}?{urllib.parse.urlencode(params)}"
        if not url.startswith(("http://", "https://")):
            raise PrometheusError(f"not an HTTP URL: {self.base_url}")
        with urllib.request.urlopen(url, timeout=self.timeout_s) as response:  # noqa: S310 - checked
            body = json.loads(response.read())
        if body.get("status") != "success":
            raise PrometheusError(body.get("error", "query failed"))
        return body["data"]

    def query(self, expr: str) -> list[dict[str, Any]]:
        data = self._get("/api/v1/query", {"query": expr})
        return list(data["result"])

    def query_range(
        self, expr: str, start: float, end: float, step_s: float
    ) -> list[dict[str, Any]]:
        params = {"query": expr, "start": str(start), "end": str(end), "step": str(step_s)}
        return list(self._get("/api/v1/query_range", params)["result"])

    def collect(self) -> Collection:
        at = 0.0
        gpus: dict[tuple[str, int], dict[str, Any]] = {}
        for series in self.query(GPU_QUERY):
            labels = series["metric"]
            at = max(at, float(series["value"][0]))
            key = (labels.get("Hostname", ""), int(labels.get("gpu", "0")))
            entry = gpus.setdefault(key, {"labels": labels, "values": {}})
            entry["values"][labels["__name__"]] = float(series["value"][1])
            if labels.get("pod"):
                entry["labels"] = labels  # the series with pod/namespace labels wins
        node_values: dict[str, dict[str, float]] = defaultdict(dict)
        node_devices: dict[str, dict[tuple[str, str], float]] = defaultdict(dict)
        for series in self.query(CPU_QUERY):
            labels = series["metric"]
            node_devices[_host(labels)][(m.CPU_SECONDS, labels.get("mode", ""))] = float(
                series["value"][1]
            )
        for series in self.query(MEM_QUERY):
            labels = series["metric"]
            node_values[_host(labels)][labels["__name__"]] = float(series["value"][1])
        for series in self.query(IO_QUERY):
            labels = series["metric"]
            device = labels.get("device", "")
            if labels.get("port"):
                device = f"{device}/{labels['port']}"
            node_devices[_host(labels)][(labels["__name__"], device)] = float(series["value"][1])
        samples = [
            GpuSample(
                hostname=host,
                gpu=gpu,
                uuid=entry["labels"].get("UUID", ""),
                model_name=entry["labels"].get("modelName", ""),
                values=entry["values"],
                pod=entry["labels"].get("pod", ""),
                namespace=entry["labels"].get("namespace", ""),
            )
            for (host, gpu), entry in sorted(gpus.items())
        ]
        hosts = sorted(set(node_values) | set(node_devices))
        nodes = [
            NodeSample(hostname=h, values=node_values.get(h, {}), devices=node_devices.get(h, {}))
            for h in hosts
        ]
        return Collection(at=at, gpus=samples, nodes=nodes)
