"""Traffic of an inference service on a Kubernetes cluster, read from vLLM's Prometheus metrics.

vLLM exports per pod ``vllm:num_requests_running`` and ``vllm:num_requests_waiting`` (gauges),
``vllm:request_success_total`` (a counter) and ``vllm:e2e_request_latency_seconds`` (a
histogram). We sum the gauges and rates over the service's pods, selected by the ``namespace``
and ``pod`` labels that Prometheus' Kubernetes pod discovery attaches, and take latency
quantiles from the summed bucket rates, so a quantile covers all pods together rather than
averaging per-pod quantiles (which is not a quantile of anything).

The autoscaling tick (``apps.inference.services``) reads it once per tick for every service on
a Kubernetes cluster; its readings feed the scaler and the service's traffic samples.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from apps.clusters.backends.spec import namespace_for, workload_name

QUANTILES = (0.5, 0.95, 0.99)


class PromQuery(Protocol):
    """What the reader needs of a Prometheus client (``PrometheusSource`` has it)."""

    def query(self, expr: str) -> list[dict[str, Any]]: ...


@dataclass(frozen=True)
class RuntimeTraffic:
    """One reading of a service; latencies are None when no request finished in the window."""

    pods: int
    running: float
    waiting: float
    qps: float
    p50_s: float | None
    p95_s: float | None
    p99_s: float | None
    errors_per_s: float = 0.0  # 5xx responses per second
    # Use of each pod's GPUs, 0..1 (mean over a pod's GPUs); empty: no DCGM series.
    gpu_by_pod: Mapping[str, float] = field(default_factory=dict)

    @property
    def gpu_util(self) -> float | None:
        """Mean GPU use per replica, 0..1; None when no pod reports GPU use."""
        if not self.gpu_by_pod:
            return None
        return sum(self.gpu_by_pod.values()) / len(self.gpu_by_pod)

    @property
    def concurrency(self) -> float:
        """In flight and queued: what a concurrency target compares against."""
        return self.running + self.waiting


def pod_selector(job_id: int, tenant: str) -> str:
    # Deployment pods are named <deployment>-<replicaset hash>-<pod hash>.
    name = workload_name(job_id, "inference")
    return f'namespace="{namespace_for(tenant)}",pod=~"{name}-[a-z0-9]+-[a-z0-9]+"'


def queries(job_id: int, tenant: str, window_s: int = 60) -> dict[str, str]:
    """The PromQL of each field, by field name."""
    sel = pod_selector(job_id, tenant)
    window = f"{int(window_s)}s"
    exprs = {
        "pods": f"count(vllm:num_requests_running{{{sel}}})",
        "running": f"sum(vllm:num_requests_running{{{sel}}})",
        "waiting": f"sum(vllm:num_requests_waiting{{{sel}}})",
        "qps": f"sum(rate(vllm:request_success_total{{{sel}}}[{window}]))",
        "errors_per_s": f'sum(rate(http_requests_total{{{sel},status=~"5.."}}[{window}]))',
        "gpu_by_pod": f"avg by (pod) (DCGM_FI_DEV_GPU_UTIL{{{sel}}}) / 100",
    }
    buckets = f"sum by (le) (rate(vllm:e2e_request_latency_seconds_bucket{{{sel}}}[{window}]))"
    for q in QUANTILES:
        exprs[f"p{round(q * 100)}_s"] = f"histogram_quantile({q}, {buckets})"
    return exprs


def _scalar(result: list[dict[str, Any]]) -> float | None:
    """The value of a one-series result; None for no series or NaN/Inf (no data)."""
    if not result:
        return None
    value = float(result[0]["value"][1])
    return value if math.isfinite(value) else None


def _by_pod(result: list[dict[str, Any]]) -> dict[str, float]:
    """A ``by (pod)`` result as pod -> value, clipped to 0..1; series without data dropped."""
    values: dict[str, float] = {}
    for series in result:
        pod = str((series.get("metric") or {}).get("pod") or "")
        value = float(series["value"][1])
        if pod and math.isfinite(value):
            values[pod] = min(1.0, max(0.0, value))
    return values


def read_traffic(
    prometheus: PromQuery, job_id: int, tenant: str, window_s: int = 60
) -> RuntimeTraffic:
    """Query Prometheus once per field. Raises what the client raises (PrometheusError,
    URLError, TimeoutError); a missing series reads as zero (no pod reports yet)."""
    exprs = queries(job_id, tenant, window_s)
    by_pod = _by_pod(prometheus.query(exprs.pop("gpu_by_pod")))
    values = {name: _scalar(prometheus.query(expr)) for name, expr in exprs.items()}
    return RuntimeTraffic(
        pods=int(values["pods"] or 0),
        running=values["running"] or 0.0,
        waiting=values["waiting"] or 0.0,
        qps=values["qps"] or 0.0,
        p50_s=values["p50_s"],
        p95_s=values["p95_s"],
        p99_s=values["p99_s"],
        errors_per_s=values["errors_per_s"] or 0.0,
        gpu_by_pod=by_pod,
    )
