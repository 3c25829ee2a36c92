"""Node health REST for the dashboard (platform admins only) and the agents' report endpoint."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django import forms
from django.db import transaction
from django.db.models import Count, Prefetch, Q, QuerySet
from django.utils.translation import gettext as _
from django_filters import rest_framework as filters
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.audit import services as audit
from apps.audit.models import AuditAction
from apps.clusters.models import Node, NodeHealth
from apps.core.errors import Conflict
from apps.core.pagination import IdCursorPagination, NameCursorPagination
from apps.core.viewsets import AuditedModelViewSet, request_user
from apps.health import probes, services
from apps.health.api.auth import IsNodeAgent, IsPlatformAdmin, NodeTokenAuthentication
from apps.health.api.serializers import (
    AlertReceiverSerializer,
    AlertSerializer,
    CheckChangeSerializer,
    FaultRuleSerializer,
    IncidentSerializer,
    NodeHealthSerializer,
    NodeHealthSummarySerializer,
    NodeTokenSerializer,
    ProbeRunSerializer,
    ReportAnswerSerializer,
    ReportSerializer,
    SpareSerializer,
)
from apps.health.models import (
    Alert,
    AlertReceiver,
    AlertState,
    CheckChange,
    FaultRule,
    Incident,
    NodeCheck,
    NodeToken,
    ProbeRun,
)


class StrictBooleanField(forms.Field):
    """true/false (or 1/0), anything else a field error: django-filter's own boolean filter
    reads ``maybe`` as "no filter" and answers every row."""

    widget = forms.TextInput

    def to_python(self, value: Any) -> bool | None:
        text = str(value).strip().lower() if value is not None else ""
        if text == "":
            return None
        if text in ("true", "1"):
            return True
        if text in ("false", "0"):
            return False
        raise forms.ValidationError(_("Must be true or false."), code="invalid")


class StrictBooleanFilter(filters.BooleanFilter):  # type: ignore[misc]  # django-filter is untyped
    field_class = StrictBooleanField

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # The rest_framework flavour's BooleanWidget reads anything unknown as "no filter".
        kwargs.setdefault("widget", forms.TextInput)
        super().__init__(*args, **kwargs)


class NodeHealthFilter(filters.FilterSet):  # type: ignore[misc]  # django-filter is untyped
    health = filters.MultipleChoiceFilter(
        choices=NodeHealth.choices, help_text="One or more health states (repeat the parameter)."
    )
    pool = filters.CharFilter(field_name="pool__name", help_text="Resource pool name.")
    name = filters.CharFilter(
        lookup_expr="icontains", help_text="Nodes whose name contains this (any case)."
    )
    cordoned = StrictBooleanFilter(help_text="true: only cordoned nodes; false: only the others.")
    is_spare = StrictBooleanFilter(help_text="true: only hot spares; false: only the others.")

    class Meta:
        model = Node
        fields = ["health", "pool", "name", "cordoned", "is_spare"]


class NodeHealthViewSet(viewsets.ReadOnlyModelViewSet[Node]):
    """The node health grid: every node with its latest checks and open incidents."""

    permission_classes = [IsPlatformAdmin]
    serializer_class = NodeHealthSerializer
    filterset_class = NodeHealthFilter
    # Name order, a page at a time: a 10,000-GPU cluster has over a thousand nodes.
    pagination_class = NameCursorPagination

    def get_queryset(self) -> QuerySet[Node]:
        return (
            Node.objects.select_related("pool")
            .prefetch_related(Prefetch("checks", queryset=NodeCheck.objects.order_by("check_name")))
            .annotate(open_incidents=Count("incidents", filter=Q(incidents__state="open")))
        )

    @extend_schema(responses=NodeHealthSummarySerializer, filters=True)
    @action(detail=False, methods=["get"], pagination_class=None)
    def summary(self, request: Request) -> Response:
        """How many nodes are in each state, over the nodes the filters select: the grid's
        counts, which one page of it cannot give."""
        nodes = self.filter_queryset(Node.objects.all())
        counts = nodes.aggregate(
            total=Count("id"),
            **{h: Count("id", filter=Q(health=h)) for h in NodeHealth.values},
            cordoned=Count("id", filter=Q(cordoned=True)),
            spare=Count("id", filter=Q(is_spare=True)),
        )
        return Response(NodeHealthSummarySerializer(counts).data)

    @extend_schema(responses=CheckChangeSerializer(many=True))
    @action(detail=True, methods=["get"], pagination_class=IdCursorPagination, filter_backends=[])
    def history(self, request: Request, pk: str) -> Response:
        """Per-node check history: one row per change of a check's status or faults."""
        node = self.get_object()
        rows = CheckChange.objects.filter(node=node)
        page = self.paginate_queryset(rows)  # type: ignore[arg-type]  # another model's rows
        data = CheckChangeSerializer(page, many=True).data
        return self.get_paginated_response(data)

    def _change(self, request: Request, change: Callable[[Node], object]) -> Response:
        """Apply ``change`` to the locked node, audited with before/after."""
        node = self.get_object()
        with transaction.atomic():
            locked = Node.objects.select_for_update().get(pk=node.pk)
            before = audit.snapshot(locked)
            change(locked)
            locked.refresh_from_db()
            audit.record(
                actor=request_user(request),
                action=AuditAction.UPDATE,
                instance=locked,
                tenant=None,
                before=before,
                after=audit.snapshot(locked),
            )
        return Response(self.get_serializer(self.get_queryset().get(pk=node.pk)).data)

    @extend_schema(request=None, responses=NodeHealthSerializer)
    @action(detail=True, methods=["post"])
    def cordon(self, request: Request, pk: str) -> Response:
        """Maintenance cordon: no new work lands on the node; its health is left alone."""
        reason = f"cordoned by {request_user(request)}"
        return self._change(request, lambda node: services.cordon_node(node=node, reason=reason))

    @extend_schema(request=None, responses=NodeHealthSerializer)
    @action(detail=True, methods=["post"])
    def uncordon(self, request: Request, pk: str) -> Response:
        """Back into service. 409 while an open incident that cordoned the node holds it:
        resolve the incident instead (which uncordons)."""
        try:
            return self._change(request, lambda node: services.uncordon_node(node=node))
        except services.NodeHeldError as exc:
            raise Conflict(str(exc)) from exc

    @extend_schema(request=None, responses=NodeHealthSerializer)
    @action(detail=True, methods=["post"])
    def drain(self, request: Request, pk: str) -> Response:
        """Maintenance drain: cordon the node and restart its jobs elsewhere from their newest
        complete checkpoint (recorded as a closed ``drain`` incident). A repeat does nothing."""
        actor = request_user(request)
        return self._change(
            request, lambda node: services.drain_for_maintenance(node=node, actor=actor)
        )

    @extend_schema(request=SpareSerializer, responses=NodeHealthSerializer)
    @action(detail=True, methods=["post"])
    def spare(self, request: Request, pk: str) -> Response:
        """Move the node into the pool's hot spares (``{"spare": true}``) or back. A node that
        runs jobs, or whose devices the pool's quota guarantees need, cannot become a spare
        (409)."""
        body = SpareSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        spare = body.validated_data["spare"]
        try:
            return self._change(request, lambda node: services.set_spare(node=node, spare=spare))
        except (services.NodeBusyError, services.GuaranteeError) as exc:
            raise Conflict(str(exc)) from exc


class IncidentViewSet(viewsets.ReadOnlyModelViewSet[Incident]):
    """Incidents timeline (newest first), with the jobs each one hit and the GPU time lost."""

    permission_classes = [IsPlatformAdmin]
    serializer_class = IncidentSerializer
    filterset_fields = ["state", "node", "fault"]
    queryset = Incident.objects.select_related("node", "spare").prefetch_related("jobs")

    @extend_schema(request=None, responses=IncidentSerializer)
    @action(detail=True, methods=["post"])
    def resolve(self, request: Request, pk: str) -> Response:
        """After repair: close the incident and uncordon the node if nothing else holds it."""
        incident = services.resolve_incident(
            incident=self.get_object(), actor=request_user(request)
        )
        return Response(self.get_serializer(self.get_queryset().get(pk=incident.pk)).data)


class AlertViewSet(viewsets.ReadOnlyModelViewSet[Alert]):
    """The alert inbox."""

    permission_classes = [IsPlatformAdmin]
    serializer_class = AlertSerializer
    filterset_fields = ["state", "severity", "node"]
    queryset = Alert.objects.select_related("node")

    @extend_schema(request=None, responses=AlertSerializer)
    @action(detail=True, methods=["post"])
    def acknowledge(self, request: Request, pk: str) -> Response:
        alert = services.acknowledge_alert(alert=self.get_object(), actor=request_user(request))
        return Response(self.get_serializer(self.get_queryset().get(pk=alert.pk)).data)


class FaultRuleViewSet(AuditedModelViewSet[FaultRule]):
    """The fault catalogue: fault code -> severity -> action, edited by operators."""

    permission_classes = [IsPlatformAdmin]
    serializer_class = FaultRuleSerializer
    queryset = FaultRule.objects.all()


class AlertReceiverViewSet(AuditedModelViewSet[AlertReceiver]):
    """Webhooks and email addresses alerts are sent to."""

    permission_classes = [IsPlatformAdmin]
    serializer_class = AlertReceiverSerializer
    queryset = AlertReceiver.objects.all()


class NodeTokenFilter(filters.FilterSet):  # type: ignore[misc]  # django-filter is untyped
    node_name = filters.CharFilter(
        field_name="node__name",
        lookup_expr="icontains",
        help_text="Tokens of nodes whose name contains this (any case).",
    )
    active = StrictBooleanFilter(
        method="filter_active", help_text="true: only tokens not revoked; false: only revoked."
    )

    class Meta:
        model = NodeToken
        fields = ["node"]

    def filter_active(
        self, queryset: QuerySet[NodeToken], name: str, value: bool
    ) -> QuerySet[NodeToken]:
        return queryset.filter(revoked_at__isnull=value)


class NodeTokenViewSet(
    mixins.ListModelMixin,
    mixins.CreateModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet[NodeToken],
):
    """Node agent tokens: minted for one node (the plaintext is shown once), revoked by delete."""

    permission_classes = [IsPlatformAdmin]
    serializer_class = NodeTokenSerializer
    queryset = NodeToken.objects.select_related("node")
    filterset_class = NodeTokenFilter

    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        actor = request_user(request)
        with transaction.atomic():
            token, plaintext = services.mint_node_token(
                node=serializer.validated_data["node"], actor=actor
            )
            audit.record(
                actor=actor,
                action=AuditAction.CREATE,
                instance=token,
                tenant=None,
                before=None,
                after={"node": token.node_id, "prefix": token.prefix},
            )
        out = NodeTokenSerializer(token, context={"plaintext": plaintext})
        return Response(out.data, status=status.HTTP_201_CREATED)

    def perform_destroy(self, instance: NodeToken) -> None:
        with transaction.atomic():
            services.revoke_node_token(token=instance)
            audit.record(
                actor=request_user(self.request),
                action=AuditAction.DELETE,
                instance=instance,
                tenant=None,
                before={"prefix": instance.prefix},
                after=None,
            )


class ProbeRunViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    viewsets.GenericViewSet[ProbeRun],
):
    """Slow-node probe runs over a pool: started here, run by a worker, rounds recorded."""

    permission_classes = [IsPlatformAdmin]
    serializer_class = ProbeRunSerializer
    queryset = ProbeRun.objects.all()
    filterset_fields = ["pool", "state"]

    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            run = probes.request_probe_run(
                pool=serializer.validated_data["pool"], actor=request_user(request)
            )
        except probes.ProbeRunBusyError as exc:
            raise Conflict(str(exc)) from exc
        return Response(ProbeRunSerializer(run).data, status=status.HTTP_201_CREATED)


class AgentReportView(APIView):
    """A node agent's round of check results. Node token only, for the token's own node."""

    authentication_classes = [NodeTokenAuthentication]
    permission_classes = [IsNodeAgent]

    @extend_schema(request=ReportSerializer, responses=ReportAnswerSerializer)
    def post(self, request: Request) -> Response:
        serializer = ReportSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        token = request.auth
        assert isinstance(token, NodeToken)
        if serializer.validated_data["node"] != token.node.name:
            return Response(
                {"detail": "This token reports for its own node only."},
                status=status.HTTP_403_FORBIDDEN,
            )
        actions = services.ingest_report(
            node=token.node, results=serializer.validated_data["results"]
        )
        return Response({"actions": actions})


__all__ = ["AlertState"]
