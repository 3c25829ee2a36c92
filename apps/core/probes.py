"""Probe and scrape endpoints answered whatever the Host header says.

The kubelet's liveness and readiness probes and Prometheus's pod scrapes address a pod by its
IP, so their Host header is that IP, which is never in ``ALLOWED_HOSTS``: Django's host check
(``CommonMiddleware``) answered 400 and the web pods would never have become ready. These
three paths name no host and build no URL, so they are answered here, ahead of that check and
of the production HTTPS redirect (the kubelet and Prometheus speak plain HTTP inside the
cluster); every other path keeps both. ``ENDPOINTS`` is the one list: the URL routes come
from it too, for ``reverse`` and the request metrics' route label.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.urls import URLPattern, path

from apps.core import health, metrics

ENDPOINTS: dict[str, Callable[[HttpRequest], HttpResponse]] = {
    "/healthz": health.healthz,
    "/readyz": health.readyz,
    "/metrics": metrics.metrics_view,
}


def routes() -> list[URLPattern]:
    """The same endpoints as URL routes, named after their paths."""
    return [path(p.lstrip("/"), view, name=p.lstrip("/")) for p, view in ENDPOINTS.items()]


class ProbeEndpointsMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        view = ENDPOINTS.get(request.path_info)
        if view is not None:
            return view(request)
        return self.get_response(request)
