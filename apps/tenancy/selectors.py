"""Tenant-scoped reads. Views never build these filters themselves."""

from __future__ import annotations

from django.db.models import QuerySet

from apps.accounts.models import User
from apps.tenancy.models import Membership, Role, Tenant


def visible_tenants(user: User) -> QuerySet[Tenant]:
    """Every tenant for a platform admin, else the tenants the user belongs to."""
    if user.is_platform_admin:
        return Tenant.objects.all()
    return Tenant.objects.filter(memberships__user=user)


def role_in(user: User, tenant: Tenant) -> Role | None:
    """The user's role in the tenant; platform admins act as tenant admins everywhere."""
    if user.is_platform_admin:
        return Role.TENANT_ADMIN
    role = Membership.objects.filter(tenant=tenant, user=user).values_list("role", flat=True)
    found = role.first()
    return Role(found) if found else None
