"""REST for dashboards and scripts: view snapshots (the resync point of the websocket),
history ranges and per-job usage. Authorization is the websocket's (``selectors``)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.utils import timezone
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import exceptions, serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.fields import WindowTimeField
from apps.core.viewsets import request_user
from apps.jobs.models import Job
from apps.telemetry import live
from apps.telemetry.frames import snapshot
from apps.telemetry.models import JobTelemetry, SeriesKind, SeriesPoint
from apps.telemetry.rollup import RESOLUTIONS
from apps.telemetry.selectors import authorize_view
from apps.tenancy.models import Tenant
from apps.tenancy.selectors import role_in

MAX_POINTS = 2000


class FrameDataSerializer(serializers.Serializer[Any]):
    # The metaclass pops declared fields, so these names do not shadow Serializer's own.
    fields = serializers.ListField(child=serializers.CharField())  # type: ignore[assignment]
    cells = serializers.DictField(child=serializers.ListField(child=serializers.IntegerField()))
    removed = serializers.ListField(child=serializers.CharField())
    summary = serializers.DictField()


class FrameSerializer(serializers.Serializer[Any]):
    type = serializers.CharField()
    topic = serializers.CharField()
    epoch = serializers.CharField()
    seq = serializers.IntegerField()
    base = serializers.IntegerField()
    at = serializers.FloatField()
    data = FrameDataSerializer()  # type: ignore[assignment]


class SnapshotView(APIView):
    """The whole view at the newest sequence number (a keyframe, ``base`` 0)."""

    @extend_schema(
        parameters=[OpenApiParameter("topic", str, required=True, description="e.g. heatmap")],
        responses=FrameSerializer,
    )
    def get(self, request: Request) -> Response:
        topic = request.query_params.get("topic", "")
        view = authorize_view(request_user(request), topic)
        if view is None:
            raise exceptions.NotFound(_("No such telemetry view."))
        latest = live.get_latest()
        if latest is None:
            raise exceptions.NotFound(_("No telemetry collected yet."))
        epoch, seq, state = latest
        return Response(snapshot(view, state, seq, epoch))


class PointSerializer(serializers.Serializer[Any]):
    ts = serializers.DateTimeField()
    gpus = serializers.IntegerField()
    util = serializers.FloatField()
    fb_used_mib = serializers.FloatField()
    power_w = serializers.FloatField()
    temp_max_c = serializers.FloatField()
    extra = serializers.DictField()


class HistorySerializer(serializers.Serializer[Any]):
    series = serializers.CharField()
    resolution_s = serializers.IntegerField()
    points = PointSerializer(many=True)


class HistoryQuerySerializer(serializers.Serializer[Any]):
    series = serializers.RegexField(r"^(cluster|pool:\d+|tenant:[a-z0-9-]+|node:[\w.-]+|job:\d+)$")
    start = WindowTimeField(required=False)
    end = WindowTimeField(required=False)
    resolution = serializers.ChoiceField(choices=sorted(RESOLUTIONS), required=False)


def _series_key(request: Request, series: str) -> tuple[str, str]:
    """(kind, key) the caller may read; NotFound otherwise (foreign looks like missing)."""
    user = request_user(request)
    kind, _sep, key = series.partition(":")
    if kind in (SeriesKind.CLUSTER, SeriesKind.POOL):
        return kind, key
    if kind == SeriesKind.NODE and user.is_platform_admin:
        return kind, key
    if kind == SeriesKind.TENANT:
        tenant = Tenant.objects.filter(slug=key).first()
        if tenant is not None and role_in(user, tenant) is not None:
            return kind, str(tenant.id)
    if kind == SeriesKind.JOB and authorize_view(user, f"job:{key}") is not None:
        return kind, key
    raise exceptions.NotFound(_("No such series."))


class HistoryView(APIView):
    """A range of one series; the resolution defaults to the finest that covers the range."""

    @extend_schema(parameters=[HistoryQuerySerializer], responses=HistorySerializer)
    def get(self, request: Request) -> Response:
        query = HistoryQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        end: dt.datetime = query.validated_data.get("end") or timezone.now()
        start: dt.datetime = query.validated_data.get("start") or end - dt.timedelta(hours=1)
        if start >= end:
            raise exceptions.ValidationError({"start": [_("must be before end")]})
        resolution = query.validated_data.get("resolution") or next(
            (r for r, keep in RESOLUTIONS.items() if timezone.now() - start <= keep), 600
        )
        if (end - start).total_seconds() / resolution > MAX_POINTS:
            raise exceptions.ValidationError({"resolution": [_("too many points; coarsen")]})
        kind, key = _series_key(request, query.validated_data["series"])
        points = SeriesPoint.objects.filter(
            kind=kind, key=key, resolution_s=resolution, ts__gte=start, ts__lt=end
        ).values("ts", "gpus", "util", "fb_used_mib", "power_w", "temp_max_c", "extra")
        body = {"series": query.validated_data["series"], "resolution_s": resolution}
        return Response(HistorySerializer({**body, "points": list(points)}).data)


class JobUsageSerializer(serializers.Serializer[Any]):
    job = serializers.IntegerField()
    gpu_hours = serializers.FloatField()
    mean_util = serializers.FloatField()
    mean_power_w = serializers.FloatField()
    energy_kwh = serializers.FloatField()
    fb_used_peak_mib = serializers.FloatField()


class JobUsageView(APIView):
    """A job's accumulated GPU-hours, mean utilization and power, peak memory."""

    @extend_schema(responses=JobUsageSerializer)
    def get(self, request: Request, job_id: int) -> Response:
        if authorize_view(request_user(request), f"job:{job_id}") is None:
            raise exceptions.NotFound("No such job.")
        row = JobTelemetry.objects.filter(job_id=job_id).first() or JobTelemetry(job=Job(id=job_id))
        data = {
            "job": job_id,
            "gpu_hours": round(row.gpu_hours, 6),
            "mean_util": round(row.mean_util, 2),
            "mean_power_w": round(row.mean_power_w, 1),
            "energy_kwh": round(row.energy_joules / 3.6e6, 6),
            "fb_used_peak_mib": row.fb_used_peak_mib,
        }
        return Response(JobUsageSerializer(data).data)
