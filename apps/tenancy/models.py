"""Tenants (teams or departments), memberships with roles, and projects inside a tenant."""

from __future__ import annotations

from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models
from django.utils import timezone

slug_validator = RegexValidator(
    r"^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$",
    "Use 1-32 lowercase letters, digits and dashes; start and end with a letter or digit.",
)


class Role(models.TextChoices):
    """Roles inside one tenant, strongest first. Platform admin is a user flag, not a role."""

    TENANT_ADMIN = "tenant_admin", "Tenant admin"
    MEMBER = "member", "Member"
    VIEWER = "viewer", "Viewer"


# What each role may do; the base viewset consults this, never ad-hoc checks in views.
WRITE_ROLES = frozenset({Role.TENANT_ADMIN, Role.MEMBER})
ADMIN_ROLES = frozenset({Role.TENANT_ADMIN})


class Tenant(models.Model):
    """A team or department. Its slug is also its Kubernetes namespace suffix (zs-<slug>)."""

    slug = models.CharField(max_length=32, unique=True, validators=[slug_validator])
    name = models.CharField(max_length=100)
    description = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug


class Membership(models.Model):
    """A user's role in a tenant."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.MEMBER)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["tenant", "user"], name="uniq_membership"),
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.tenant} as {self.role}"


class Project(models.Model):
    """A grouping of a tenant's work for cost reporting (jobs are charged to a project)."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="projects")
    name = models.CharField(max_length=64)
    description = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["tenant", "name"], name="uniq_project_name"),
        ]

    def __str__(self) -> str:
        return f"{self.tenant.slug}/{self.name}"
