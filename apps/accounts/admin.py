from django.contrib import admin
from django.contrib.auth.admin import UserAdmin

from apps.accounts.models import ApiToken, User


@admin.register(User)
class ZhisuanUserAdmin(UserAdmin):  # type: ignore[type-arg]  # django-stubs generic
    list_display = ("username", "display_name", "email", "is_platform_admin", "is_active")
    fieldsets = (
        *(UserAdmin.fieldsets or ()),
        ("Zhisuan", {"fields": ("display_name", "language", "is_platform_admin")}),
    )


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin[ApiToken]):
    list_display = ("name", "user", "prefix", "created_at", "expires_at", "revoked_at")
    readonly_fields = ("prefix", "digest", "created_at", "last_used_at")
    search_fields = ("name", "prefix", "user__username")
