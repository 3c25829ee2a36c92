"""Prometheus metrics of the platform itself, served at /metrics."""

from __future__ import annotations

import time
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.urls import Resolver404, resolve
from prometheus_client import CONTENT_TYPE_LATEST, Counter, Histogram, generate_latest

REQUESTS = Counter(
    "zhisuan_http_requests_total", "HTTP requests handled", ["method", "route", "status"]
)
LATENCY = Histogram(
    "zhisuan_http_request_duration_seconds",
    "HTTP request latency",
    ["method", "route"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0),
)


def _route(request: HttpRequest) -> str:
    # The URL pattern, not the raw path: ids in paths would explode label cardinality.
    try:
        match = resolve(request.path_info)
    except Resolver404:
        return "unmatched"
    return match.route or match.view_name or "unknown"


class PrometheusMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        response = self.get_response(request)
        route = _route(request)
        LATENCY.labels(request.method, route).observe(time.perf_counter() - started)
        REQUESTS.labels(request.method, route, str(response.status_code)).inc()
        return response


def metrics_view(request: HttpRequest) -> HttpResponse:
    return HttpResponse(generate_latest(), content_type=CONTENT_TYPE_LATEST)
