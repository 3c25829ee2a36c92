from django.contrib import admin
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.routers import DefaultRouter

from apps.accounting.api import PlatformUsageViewSet, TenantUsageViewSet
from apps.accounts.api import sso
from apps.accounts.api.users import UserViewSet
from apps.accounts.api.views import (
    ApiTokenViewSet,
    LoginView,
    LogoutView,
    PasswordView,
    ProfileView,
    SessionView,
)
from apps.audit.api.views import PlatformAuditViewSet, TenantAuditViewSet
from apps.clusters.api.pools import PoolViewSet
from apps.clusters.api.views import ClusterViewSet
from apps.core import probes, spa
from apps.core.overview import OverviewView
from apps.governance.api.views import (
    DefaultPolicyView,
    EfficiencyViewSet,
    IdleFlagViewSet,
    NotificationViewSet,
    TenantPolicyViewSet,
)
from apps.health.api.views import (
    AgentReportView,
    AlertReceiverViewSet,
    AlertViewSet,
    FaultRuleViewSet,
    IncidentViewSet,
    NodeHealthViewSet,
    NodeTokenViewSet,
    ProbeRunViewSet,
)
from apps.inference.api.views import InferenceServiceViewSet
from apps.jobs.api.views import JobViewSet
from apps.jobs.notebook_proxy import notebook_proxy
from apps.quotas.api.views import QuotaAdminViewSet, TenantQuotaViewSet
from apps.runs.api.views import RunViewSet
from apps.scheduling.api import WhatIfRunViewSet
from apps.sweeps.api.views import SweepViewSet
from apps.tenancy.api.views import MembershipViewSet, ProjectViewSet, TenantViewSet

TENANT = r"tenants/(?P<tenant>[a-z0-9-]+)"

router = DefaultRouter(trailing_slash=True)
router.include_root_view = False
router.register("tenants", TenantViewSet, basename="tenant")
router.register("clusters", ClusterViewSet, basename="cluster")
router.register("tokens", ApiTokenViewSet, basename="token")
router.register("users", UserViewSet, basename="user")
router.register("audit", PlatformAuditViewSet, basename="audit")
router.register("pools", PoolViewSet, basename="pool")
router.register("usage", PlatformUsageViewSet, basename="usage")
router.register(f"{TENANT}/usage", TenantUsageViewSet, basename="tenant-usage")
router.register("quotas", QuotaAdminViewSet, basename="quota")
router.register("health/nodes", NodeHealthViewSet, basename="health-node")
router.register("health/incidents", IncidentViewSet, basename="health-incident")
router.register("health/alerts", AlertViewSet, basename="health-alert")
router.register("health/rules", FaultRuleViewSet, basename="health-rule")
router.register("health/receivers", AlertReceiverViewSet, basename="health-receiver")
router.register("health/node-tokens", NodeTokenViewSet, basename="health-node-token")
router.register("health/probe-runs", ProbeRunViewSet, basename="health-probe-run")
router.register("scheduling/what-if", WhatIfRunViewSet, basename="what-if")
router.register(f"{TENANT}/jobs", JobViewSet, basename="tenant-job")
router.register(
    f"{TENANT}/inference/services", InferenceServiceViewSet, basename="tenant-inference-service"
)
router.register(f"{TENANT}/runs", RunViewSet, basename="tenant-run")
router.register(f"{TENANT}/sweeps", SweepViewSet, basename="tenant-sweep")
router.register(f"{TENANT}/quotas", TenantQuotaViewSet, basename="tenant-quota")
router.register(f"{TENANT}/members", MembershipViewSet, basename="tenant-member")
router.register(f"{TENANT}/projects", ProjectViewSet, basename="tenant-project")
router.register(f"{TENANT}/audit", TenantAuditViewSet, basename="tenant-audit")
router.register(f"{TENANT}/governance/flags", IdleFlagViewSet, basename="tenant-idle-flag")
router.register(
    f"{TENANT}/governance/notifications", NotificationViewSet, basename="tenant-notification"
)
router.register(f"{TENANT}/governance/efficiency", EfficiencyViewSet, basename="tenant-efficiency")

api_v1 = [
    path("auth/session/", SessionView.as_view(), name="auth-session"),
    path("auth/login/", LoginView.as_view(), name="auth-login"),
    path("auth/logout/", LogoutView.as_view(), name="auth-logout"),
    path("auth/profile/", ProfileView.as_view(), name="auth-profile"),
    path("auth/password/", PasswordView.as_view(), name="auth-password"),
    path("auth/providers/", sso.ProvidersView.as_view(), name="auth-providers"),
    # Single sign-on's browser redirects (not part of the JSON API; 404 while not configured).
    path("auth/oidc/login/", sso.login, name="oidc_authentication_init"),
    path("auth/oidc/callback/", sso.callback, name="oidc_authentication_callback"),
    path("overview/", OverviewView.as_view(), name="overview"),
    path("health/report/", AgentReportView.as_view(), name="health-report"),
    path("telemetry/", include("apps.telemetry.urls")),
    path("governance/default-policy/", DefaultPolicyView.as_view(), name="governance-default"),
    re_path(
        rf"^{TENANT}/governance/policy/$",
        TenantPolicyViewSet.as_view({"get": "current", "put": "change", "patch": "change"}),
        name="tenant-idle-policy",
    ),
    *router.urls,
]

urlpatterns = [
    path("api/v1/", include(api_v1)),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="swagger-ui"),
    path("admin/", admin.site.urls),
    *probes.routes(),  # answered by ProbeEndpointsMiddleware, whatever the Host header
    # A running notebook, through the platform's authenticated proxy (apps/jobs/notebook_proxy).
    re_path(r"^notebooks/(?P<job_id>[0-9]+)(?P<path>/.*)?$", notebook_proxy, name="notebook-proxy"),
    # Everything else is the dashboard's client-side routing.
    re_path(r"^(?!api/|admin/|static/|ws/)(?P<path>.*)$", spa.index, name="spa"),
]

handler404 = "apps.core.errors.not_found"
handler500 = "apps.core.errors.server_error"
