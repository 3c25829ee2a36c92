"""One JSON error shape for the whole API: ``{"detail": str, "errors": {field: [msg]}}``."""

from __future__ import annotations

import logging
from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.utils.translation import gettext as _
from django.views.defaults import page_not_found
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler

log = logging.getLogger("zhisuan.api")


class Conflict(exceptions.APIException):
    """409: the request is valid but the object's current state does not allow it now."""

    status_code = status.HTTP_409_CONFLICT
    default_code = "conflict"


def _flatten(detail: Any) -> Any:
    if isinstance(detail, dict):
        return {str(k): _flatten(v) for k, v in detail.items()}
    if isinstance(detail, list):
        return [_flatten(v) for v in detail]
    return str(detail)


def json_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(
            exc.message_dict if hasattr(exc, "error_dict") else {"non_field_errors": exc.messages}
        )
    elif isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied()
    response = exception_handler(exc, context)
    if response is None:
        return None
    request = context.get("request")
    if response.status_code in (401, 403) and request is not None:
        user = getattr(request, "user", None)
        log.warning(
            "denied: status=%s user=%s method=%s path=%s",
            response.status_code,
            getattr(user, "username", None) or "anonymous",
            request.method,
            request.path,
        )
    if isinstance(exc, exceptions.ValidationError):
        errors = _flatten(exc.detail)
        if not isinstance(errors, dict):
            errors = {"non_field_errors": errors}
        response.data = {"detail": _("Invalid input."), "errors": errors}
    else:
        detail = response.data.get("detail") if isinstance(response.data, dict) else None
        response.data = {"detail": str(detail or exc)}
    return response


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """Django's handler404: a path under /api/ that no route matches answers in the API's
    JSON shape, as every other API error does; other paths (admin, static) keep Django's."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": _("Not found.")}, status=status.HTTP_404_NOT_FOUND)
    return page_not_found(request, exception or Http404())


def server_error(request: HttpRequest, *args: Any, **kwargs: Any) -> JsonResponse:
    """Django's handler500 for /api paths: still JSON, never an HTML page."""
    return JsonResponse(
        {"detail": _("Internal server error.")}, status=status.HTTP_500_INTERNAL_SERVER_ERROR
    )
