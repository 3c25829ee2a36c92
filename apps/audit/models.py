"""The append-only audit log of every change made through the API."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.utils import timezone


class AuditAction(models.TextChoices):
    CREATE = "create", "Create"
    UPDATE = "update", "Update"
    DELETE = "delete", "Delete"


class AuditEntry(models.Model):
    """Who changed what, with the object's state before and after, and when.

    Rows are never updated or deleted: ``save`` refuses an existing row and ``delete`` refuses
    always. The tenant is nullable for platform-level objects (clusters, tenants themselves)."""

    tenant = models.ForeignKey(
        "tenancy.Tenant", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    actor_name = models.CharField(max_length=150)  # kept if the user is deleted later
    action = models.CharField(max_length=8, choices=AuditAction.choices)
    object_type = models.CharField(max_length=64)
    object_id = models.CharField(max_length=64)
    object_repr = models.CharField(max_length=200)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["tenant", "-id"]), models.Index(fields=["object_type"])]

    def __str__(self) -> str:
        return f"{self.actor_name} {self.action} {self.object_type}#{self.object_id}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk is not None:
            raise PermissionError("audit entries are append-only")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise PermissionError("audit entries are append-only")
