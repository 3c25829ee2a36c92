"""Permissions shared by the API's apps."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy
from rest_framework import permissions
from rest_framework.request import Request

from apps.core.viewsets import request_user


class IsPlatformAdmin(permissions.BasePermission):
    """Platform admins only, for reads too. Subclasses say why in ``message``."""

    message = gettext_lazy("Only platform admins can do this.")

    def has_permission(self, request: Request, view: Any) -> bool:
        return bool(request.user and request.user.is_authenticated) and bool(
            request_user(request).is_platform_admin
        )
