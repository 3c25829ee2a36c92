"""REST for dashboards and scripts: view snapshots (the resync point of the websocket),
history ranges and per-job usage. Authorization is the websocket's (``selectors``)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.conf import settings
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import exceptions, serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.accounts.models import User
from apps.clusters.models import Node
from apps.core.fields import WindowTimeField
from apps.core.viewsets import request_user
from apps.jobs.models import Allocation, Job
from apps.telemetry import gpu_history, live
from apps.telemetry.frames import snapshot
from apps.telemetry.models import JobTelemetry, SeriesKind, SeriesPoint
from apps.telemetry.rollup import RESOLUTIONS
from apps.telemetry.selectors import authorize_view
from apps.telemetry.sources.prometheus import PrometheusError, PrometheusSource
from apps.tenancy.models import Tenant
from apps.tenancy.selectors import role_in, visible_tenants

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


class GpuPointSerializer(serializers.Serializer[Any]):
    ts = serializers.DateTimeField()
    util = serializers.FloatField(help_text="GPU utilization, %.")
    fb_used_pct = serializers.FloatField(help_text="Memory in use, % of the GPU's.")
    power_w = serializers.FloatField()
    temp_c = serializers.FloatField()
    sm_active_pct = serializers.FloatField(help_text="SM activity (DCGM_FI_PROF_SM_ACTIVE), %.")


class GpuHistorySerializer(serializers.Serializer[Any]):
    node = serializers.CharField()
    gpu = serializers.IntegerField()
    # The metaclass pops declared fields, so this does not shadow Field.source.
    source = serializers.ChoiceField(  # type: ignore[assignment]
        choices=["prometheus", "recent"],
        help_text="prometheus: the DCGM exporter's series as Prometheus keeps them; recent: "
        "the last hour the embedded collector keeps in memory.",
    )
    resolution_s = serializers.IntegerField()
    kept_s = serializers.IntegerField(
        allow_null=True, help_text="How far back this source goes; null: as far as Prometheus."
    )
    points = GpuPointSerializer(many=True)


class GpuHistoryQuerySerializer(serializers.Serializer[Any]):
    node = serializers.RegexField(r"^[\w.-]{1,253}$")
    gpu = serializers.IntegerField(min_value=0, max_value=255)
    start = WindowTimeField(required=False)
    end = WindowTimeField(required=False)


def _readable_since(user: User, node: str, gpu: int) -> dt.datetime | None:
    """From when ``user`` may read the GPU's history: always for a platform admin, since the
    earliest hold of one of the user's tenants' jobs on it for a member; None: not at all
    (or no such GPU: the two answer alike)."""
    if not Node.objects.filter(name=node, accelerator_count__gt=gpu).exists():
        return None
    if user.is_platform_admin:
        return dt.datetime.min.replace(tzinfo=dt.UTC)
    holds = Allocation.objects.filter(
        node__name=node, job__tenant__in=visible_tenants(user)
    ).values_list("devices", "shares", "created_at")
    # JSON lists, read here: containment lookups are not portable to SQLite.
    times = [
        at for devices, shares, at in holds if gpu in devices or gpu in (d for d, _m in shares)
    ]
    return min(times) if times else None


class GpuHistoryUnavailable(exceptions.APIException):
    status_code = 503
    default_code = "unavailable"
    default_detail = gettext_lazy(
        "Per-GPU history needs Prometheus (ZS_TELEMETRY_SOURCE=prometheus) or the embedded "
        "default, whose collector keeps the last hour in the web process."
    )


class GpuHistoryView(APIView):
    """One GPU's utilization, memory, power, temperature and SM activity over a window (an
    hour by default): from Prometheus on a real cluster, from the embedded collector's last
    hour otherwise. Platform admins read any GPU; a tenant's members read a GPU while one of
    their tenant's jobs holds it, from when it got it (as the heatmap shows them their own
    GPUs' cells: nodes are shared between tenants)."""

    @extend_schema(parameters=[GpuHistoryQuerySerializer], responses=GpuHistorySerializer)
    def get(self, request: Request) -> Response:
        query = GpuHistoryQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        node, gpu = query.validated_data["node"], query.validated_data["gpu"]
        end: dt.datetime = query.validated_data.get("end") or timezone.now()
        start: dt.datetime = query.validated_data.get("start") or end - dt.timedelta(hours=1)
        if start >= end:
            raise exceptions.ValidationError({"start": [_("must be before end")]})
        since = _readable_since(request_user(request), node, gpu)
        if since is None:
            raise exceptions.NotFound(_("No such GPU."))
        start = max(start, since)
        span = (end - start).total_seconds()
        body: dict[str, Any] = {"node": node, "gpu": gpu}
        points: list[gpu_history.GpuPoint] = []
        if settings.TELEMETRY_SOURCE == "prometheus":
            step = max(gpu_history.STEP_S, -(-int(span) // MAX_POINTS))
            try:
                # Nothing when the caller's hold began after the window.
                points = [] if span <= 0 else gpu_history.prometheus_points(
                    PrometheusSource(settings.PROMETHEUS_URL),
                    node, gpu, start.timestamp(), end.timestamp(), step,
                )  # fmt: skip
            except (PrometheusError, OSError, ValueError) as exc:
                raise GpuHistoryUnavailable(
                    _("Prometheus did not answer: {error}").format(error=exc)
                ) from exc
            body.update(source="prometheus", resolution_s=step, kept_s=None)
        elif settings.REDIS_URL:
            raise GpuHistoryUnavailable()
        else:
            points = gpu_history.RECENT.points(node, gpu, start.timestamp(), end.timestamp())
            body.update(source="recent", resolution_s=gpu_history.STEP_S, kept_s=gpu_history.KEEP_S)
        fields = gpu_history.FIELDS
        rows = [
            {"ts": dt.datetime.fromtimestamp(p.t, tz=dt.UTC), **{f: getattr(p, f) for f in fields}}
            for p in points
        ]
        return Response(GpuHistorySerializer({**body, "points": rows}).data)
