from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpResponse
from django.utils import timezone
from django.utils.translation import gettext as _
from django_filters import rest_framework as filters
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import BaseSerializer

from apps.audit import services as audit
from apps.audit.models import AuditAction
from apps.core.viewsets import ADMIN_ROLES, TenantScopedViewSet, request_user
from apps.sweeps import selectors, services
from apps.sweeps.api.serializers import SweepDetailSerializer, SweepSerializer
from apps.sweeps.models import Sweep
from apps.sweeps.services import JOB_ENDED


class SweepFilter(filters.FilterSet):  # type: ignore[misc]  # django-filter is untyped
    class Meta:
        model = Sweep
        fields = ["state", "project"]


class SweepViewSet(TenantScopedViewSet[Sweep]):
    """Hyperparameter sweeps of a tenant: one training job template run as many trials.

    POST draws the trials and queues the first `parallel` of them as jobs; the scheduler loop
    starts each next one when a trial's job ends. Sweeps are not edited: cancel, or submit
    anew."""

    serializer_class = SweepSerializer
    queryset = Sweep.objects.all()
    filterset_class = SweepFilter
    http_method_names = ["get", "post", "head", "options"]

    def scoped_queryset(self, queryset: QuerySet[Sweep]) -> QuerySet[Sweep]:
        return queryset.select_related("owner", "tenant")

    def get_serializer_class(self) -> type[BaseSerializer[Sweep]]:
        if self.action in ("retrieve", "cancel"):
            return SweepDetailSerializer
        return SweepSerializer

    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        # Each sweep's trial counts and best trial are read for the whole page at once (a
        # fixed number of queries, not a few per sweep). No docstring: the API's description
        # of the list stays the viewset's.
        queryset = self.filter_queryset(self.get_queryset())
        page = self.paginate_queryset(queryset)
        sweeps = list(page if page is not None else queryset)
        context = {
            **self.get_serializer_context(),
            "counts": selectors.trial_counts(sweeps, JOB_ENDED),
            "outcomes": selectors.outcomes_many([s for s in sweeps if s.metric]),
        }
        data = SweepSerializer(sweeps, many=True, context=context).data
        return self.get_paginated_response(data) if page is not None else Response(data)

    def save_kwargs(self) -> dict[str, Any]:
        return {**super().save_kwargs(), "owner": request_user(self.request)}

    def perform_create(self, serializer: BaseSerializer[Sweep]) -> None:
        with transaction.atomic():  # the sweep, its trials and its first jobs, or nothing
            super().perform_create(serializer)
            assert serializer.instance is not None
            sweep = serializer.instance
            services.fill_slots(sweep, timezone.now(), actor=request_user(self.request))

    @extend_schema(
        responses={
            (200, "text/csv"): OpenApiResponse(
                OpenApiTypes.STR,
                description="One row per trial: its values, job, state, rank, the metric's "
                "ranking value and step, its newest value and step, and its run.",
            )
        }
    )
    @action(detail=True, methods=["get"], url_path="csv")
    def csv(self, request: Request, *args: Any, **kwargs: Any) -> HttpResponse:
        """The sweep's results as CSV (anyone who may read the sweep)."""
        sweep = self.get_object()
        response = HttpResponse(
            selectors.results_csv(sweep), content_type="text/csv; charset=utf-8"
        )
        response["Content-Disposition"] = f'attachment; filename="sweep-{sweep.pk}.csv"'
        return response

    @extend_schema(request=None, responses=SweepDetailSerializer)
    @action(detail=True, methods=["post"])
    def cancel(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """The sweep's owner, tenant admins and platform admins cancel it (403 for others): no
        more trials start, and its queued and running trials are cancelled."""
        sweep = self.get_object()
        user = request_user(request)
        if sweep.owner_id != user.pk and self.role not in ADMIN_ROLES:
            raise PermissionDenied(_("Only the sweep's owner or a tenant admin can cancel it."))
        with transaction.atomic():
            before = audit.snapshot(sweep)
            sweep = services.cancel(sweep, user)
            after = audit.snapshot(sweep)
            if after != before:
                audit.record(
                    actor=user,
                    action=AuditAction.UPDATE,
                    instance=sweep,
                    tenant=self.tenant,
                    before=before,
                    after=after,
                )
        return Response(SweepDetailSerializer(sweep, context=self.get_serializer_context()).data)
