from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from apps.audit.models import AuditEntry


@admin.register(AuditEntry)
class AuditEntryAdmin(admin.ModelAdmin[AuditEntry]):
    """Read-only: the audit log is append-only, even for superusers."""

    list_display = ("created_at", "actor_name", "action", "object_type", "object_id", "tenant")
    list_filter = ("action", "object_type")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
