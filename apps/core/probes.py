"""Probe and scrape endpoints answered whatever the Host header says.

The kubelet's liveness and readiness probes and Prometheus's pod scrapes address a pod by its
IP, so their Host header is that IP, which is never in ``ALLOWED_HOSTS``: Django's host check
(``CommonMiddleware``) answered 400 and the web pods would never have become ready (the
production settings already exempt these paths from the HTTPS redirect). These three paths
name no host and build no URL, so they are answered here, ahead of that check; every other
path keeps it.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from apps.core import health, metrics

ENDPOINTS: dict[str, Callable[[HttpRequest], HttpResponse]] = {
    "/healthz": health.healthz,
    "/readyz": health.readyz,
    "/metrics": metrics.metrics_view,
}


class ProbeEndpointsMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        view = ENDPOINTS.get(request.path_info)
        if view is not None:
            return view(request)
        return self.get_response(request)
