"""Serves the built dashboard's index.html for every non-API path (client-side routing)."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import ensure_csrf_cookie


@ensure_csrf_cookie
def index(request: HttpRequest, path: str = "") -> HttpResponse:
    page = settings.FRONTEND_DIST / "index.html"
    if not page.is_file():
        return HttpResponse(
            "The dashboard is not built yet: run `make run` (or `make frontend`). "
            "The API is at /api/v1/ and its docs at /api/docs/.",
            status=503,
            content_type="text/plain; charset=utf-8",
        )
    response = HttpResponse(page.read_bytes(), content_type="text/html; charset=utf-8")
    response["Cache-Control"] = "no-cache"
    return response
