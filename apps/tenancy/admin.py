from django.contrib import admin

from apps.tenancy.models import Membership, Project, Tenant


class MembershipInline(admin.TabularInline[Membership, Tenant]):
    model = Membership
    extra = 0


@admin.register(Tenant)
class TenantAdmin(admin.ModelAdmin[Tenant]):
    list_display = ("slug", "name", "created_at")
    search_fields = ("slug", "name")
    inlines = [MembershipInline]


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin[Project]):
    list_display = ("name", "tenant", "created_at")
    list_filter = ("tenant",)
