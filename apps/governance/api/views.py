"""Governance API: policy, idle flags (keep running, exempt), notices inbox, efficiency.

Tenant-owned objects are served by ``TenantScopedViewSet`` subclasses (scoping, roles: another
tenant's flag is a 404, viewers get 403 on writes). Every write is audited with before/after.
"""

from __future__ import annotations

from dataclasses import asdict
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _
from django_filters import rest_framework as filters
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import exceptions, serializers
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.audit import services as audit
from apps.audit.models import AuditAction
from apps.core.errors import Conflict
from apps.core.viewsets import ADMIN_ROLES, TenantScopedViewSet, request_user
from apps.governance import selectors, services
from apps.governance.api.serializers import (
    DefaultPolicySerializer,
    EfficiencyQuerySerializer,
    EfficiencySerializer,
    ExemptJobSerializer,
    ExemptSerializer,
    IdleFlagSerializer,
    NotificationSerializer,
    PolicyViewSerializer,
    TenantPolicyChangeSerializer,
    TenantPolicySerializer,
    UnreadCountSerializer,
)
from apps.governance.models import FlagState, IdleFlag, IdlePolicy, Notification
from apps.governance.policy import RULES, default_policy, effective_policy, overrides
from apps.jobs.models import TERMINAL, Job
from apps.tenancy.models import Role


def _audit(request: Request, instance: Any, tenant: Any, before: dict[str, Any] | None) -> None:
    audit.record(
        actor=request_user(request),
        action=AuditAction.CREATE if before is None else AuditAction.UPDATE,
        instance=instance,
        tenant=tenant,
        before=before,
        after=audit.snapshot(instance),
    )


def redacted(url: str) -> str:
    """A webhook URL as non-admins see it: scheme and host, not the path or query, which
    often carry the receiver's secret. Still a valid URL (ASCII dots, not an ellipsis), as
    the schema says the field is."""
    if not url:
        return ""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}/..."


class TenantPolicyViewSet(TenantScopedViewSet[IdlePolicy]):
    """The tenant's idle policy: every member reads it; tenant admins tighten rules, or
    return them to the platform default (PATCH ``reset``)."""

    queryset = IdlePolicy.objects.all()
    serializer_class = TenantPolicySerializer
    write_roles = ADMIN_ROLES
    pagination_class = None

    def _view(self) -> dict[str, Any]:
        default = default_policy()
        effective = effective_policy(self.tenant, default).as_dict()
        if self.role != Role.TENANT_ADMIN:  # platform admins act as tenant admins
            effective["webhook_url"] = redacted(effective["webhook_url"])
        own = overrides(IdlePolicy.objects.filter(tenant=self.tenant).first())
        return {
            "effective": effective,
            "default": default.as_dict(),
            "customized": bool(own),
            "overrides": [name for name in RULES if name in own],
        }

    @extend_schema(responses=PolicyViewSerializer)
    def current(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return Response(self._view())

    @extend_schema(request=TenantPolicyChangeSerializer, responses=PolicyViewSerializer)
    def change(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        data = TenantPolicyChangeSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = dict(data.validated_data)
        reset = values.pop("reset", [])
        with transaction.atomic():
            old = IdlePolicy.objects.filter(tenant=self.tenant).first()
            before = audit.snapshot(old) if old is not None else None
            row = services.reset_tenant_policy(tenant=self.tenant, rules=reset) if reset else old
            if values:
                try:
                    row = services.set_tenant_policy(tenant=self.tenant, values=values)
                except services.PolicyError as exc:
                    raise serializers.ValidationError(exc.errors) from exc
            if row is not None and audit.snapshot(row) != before:  # a no-op records nothing
                _audit(request, row, self.tenant, before)
        return Response(self._view())


class DefaultPolicyView(APIView):
    """The platform default idle policy: anyone signed in reads; platform admins set it."""

    @extend_schema(responses=DefaultPolicySerializer)
    def get(self, request: Request) -> Response:
        return Response(DefaultPolicySerializer(asdict(default_policy())).data)

    @extend_schema(request=DefaultPolicySerializer, responses=DefaultPolicySerializer)
    def put(self, request: Request) -> Response:
        if not request_user(request).is_platform_admin:
            raise exceptions.PermissionDenied(_("Only platform admins set the default policy."))
        data = DefaultPolicySerializer(data=request.data)
        data.is_valid(raise_exception=True)
        with transaction.atomic():
            old = IdlePolicy.objects.filter(is_default=True).first()
            before = audit.snapshot(old) if old is not None else None
            row = services.set_default_policy(values=data.validated_data)
            _audit(request, row, None, before)
        return Response(DefaultPolicySerializer(asdict(default_policy())).data)


class IdleFlagFilter(filters.FilterSet):  # type: ignore[misc]  # django-filter is untyped
    state = filters.MultipleChoiceFilter(choices=FlagState.choices)

    class Meta:
        model = IdleFlag
        fields = ["job", "state"]


class IdleFlagViewSet(TenantScopedViewSet[IdleFlag]):
    """Idle flags of the tenant's jobs, with the owner's answers to a warning."""

    queryset = IdleFlag.objects.all()
    serializer_class = IdleFlagSerializer
    filterset_class = IdleFlagFilter
    http_method_names = ["get", "post", "head", "options"]

    def scoped_queryset(self, queryset: QuerySet[IdleFlag]) -> QuerySet[IdleFlag]:
        return queryset.select_related("job", "exempted_by")

    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        raise exceptions.MethodNotAllowed("POST")

    def _answer(self, request: Request, flag: IdleFlag) -> Response:
        flag = IdleFlag.objects.select_related("job", "exempted_by").get(pk=flag.pk)
        return Response(IdleFlagSerializer(flag).data)

    @extend_schema(request=None, responses={200: IdleFlagSerializer})
    @action(detail=True, methods=["post"], url_path="keep-running")
    def keep_running(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        with transaction.atomic():
            flag = self.get_object()
            before = audit.snapshot(flag)
            try:
                flag = services.keep_running(flag=flag)
            except services.FlagActionError as exc:
                raise Conflict(str(exc)) from exc
            _audit(request, flag, self.tenant, before)
        return self._answer(request, flag)

    @extend_schema(request=ExemptSerializer, responses={200: IdleFlagSerializer})
    @action(detail=True, methods=["post"])
    def exempt(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        body = ExemptSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        with transaction.atomic():
            flag = self.get_object()
            before = audit.snapshot(flag)
            try:
                flag = services.exempt(
                    flag=flag, actor=request_user(request), reason=body.validated_data["reason"]
                )
            except services.FlagActionError as exc:
                raise Conflict(str(exc)) from exc
            _audit(request, flag, self.tenant, before)
        return self._answer(request, flag)

    @extend_schema(request=ExemptJobSerializer, responses={200: IdleFlagSerializer})
    @action(detail=False, methods=["post"], url_path="exempt-job")
    def exempt_job(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Exempt a job from idle stops before any warning: its owner or a tenant admin
        (platform admins act as one)."""
        body = ExemptJobSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        user = request_user(request)
        with transaction.atomic():
            job = (
                Job.objects.select_for_update(of=("self",))
                .filter(tenant=self.tenant, pk=body.validated_data["job"])
                .first()
            )
            if job is None:
                raise serializers.ValidationError({"job": [_("No such job in this tenant.")]})
            if job.owner_id != user.pk and self.role not in ADMIN_ROLES:  # platform admins too
                raise exceptions.PermissionDenied(
                    _("Only the job's owner or a tenant admin exempts it.")
                )
            if job.kind not in services.GOVERNED_KINDS:
                raise serializers.ValidationError(
                    {"job": [_("Only training jobs and notebooks are stopped when idle.")]}
                )
            if job.state in TERMINAL:
                raise serializers.ValidationError({"job": [_("The job has ended.")]})
            held = IdleFlag.objects.filter(job=job).first()
            before = audit.snapshot(held) if held is not None else None
            try:
                flag = services.exempt_job(
                    job=job, actor=user, reason=body.validated_data["reason"]
                )
            except services.FlagActionError as exc:
                raise Conflict(str(exc)) from exc
            _audit(request, flag, self.tenant, before)
        return self._answer(request, flag)


class NotificationFilter(filters.FilterSet):  # type: ignore[misc]  # django-filter is untyped
    unread = filters.BooleanFilter(
        field_name="read_at", lookup_expr="isnull", help_text="Only notices not read yet."
    )

    class Meta:
        model = Notification
        fields = ["unread", "kind", "job"]


class NotificationViewSet(TenantScopedViewSet[Notification]):
    """The caller's own governance notices in this tenant (marking read is open to viewers:
    it changes nothing but their inbox)."""

    queryset = Notification.objects.all()
    serializer_class = NotificationSerializer
    filterset_class = NotificationFilter
    write_roles = frozenset(Role)
    http_method_names = ["get", "post", "head", "options"]

    def scoped_queryset(self, queryset: QuerySet[Notification]) -> QuerySet[Notification]:
        return queryset.filter(recipient=request_user(self.request))

    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        raise exceptions.MethodNotAllowed("POST")

    @extend_schema(request=None, responses={200: NotificationSerializer})
    @action(detail=True, methods=["post"])
    def read(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        notice = self.get_object()
        if notice.read_at is None:
            notice.read_at = timezone.now()
            notice.save(update_fields=["read_at"])
        return Response(NotificationSerializer(notice).data)

    @extend_schema(request=None, responses={200: UnreadCountSerializer})
    @action(detail=False, methods=["post"], url_path="read-all", filter_backends=[])
    def read_all(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Marks every unread notice of the caller in this tenant read."""
        marked = self.get_queryset().filter(read_at__isnull=True).update(read_at=timezone.now())
        return Response(UnreadCountSerializer({"marked": marked, "unread": 0}).data)

    @extend_schema(responses={200: UnreadCountSerializer})
    @action(detail=False, methods=["get"], url_path="unread-count", filter_backends=[])
    def unread_count(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """How many of the caller's notices in this tenant are unread (the header's badge)."""
        unread = self.get_queryset().filter(read_at__isnull=True).count()
        return Response(UnreadCountSerializer({"marked": 0, "unread": unread}).data)


class _ReportSchema(AutoSchema):
    """``list`` here answers one report object, not an array of them (found by schemathesis:
    the schema promised an array)."""

    def _is_list_view(self, serializer: Any = None) -> bool:
        return False


class EfficiencyViewSet(TenantScopedViewSet[IdleFlag]):
    """Reserved vs used GPU-hours of the tenant, idle GPU-hours reclaimed, idle stops."""

    schema = _ReportSchema()

    queryset = IdleFlag.objects.all()
    serializer_class = EfficiencySerializer
    read_roles = ADMIN_ROLES
    write_roles = frozenset()
    http_method_names = ["get", "head", "options"]
    pagination_class = None

    @extend_schema(
        operation_id="tenants_governance_efficiency_list",
        parameters=[OpenApiParameter("start", str), OpenApiParameter("end", str)],
        responses=EfficiencySerializer,
    )
    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        query = EfficiencyQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        now = timezone.now()
        end = query.validated_data.get("end", now)
        start = query.validated_data.get("start", end - timedelta(days=30))
        if start >= end:
            raise serializers.ValidationError({"start": [_("start must be before end.")]})
        report = selectors.efficiency(tenant=self.tenant, start=start, end=end, now=now)
        return Response(EfficiencySerializer(asdict(report)).data)

    def retrieve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        raise exceptions.NotFound()
