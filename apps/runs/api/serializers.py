"""Runs, metric batches and checkpoints in and out. Bad input is a 400 with field errors."""

from __future__ import annotations

import math
import re
from typing import Any

from django.utils.translation import gettext as _
from rest_framework import serializers

from apps.runs.models import Checkpoint, MetricKey, Run, RunState
from apps.runs.selectors import MAX_POINTS_LIMIT
from apps.runs.services import Point
from apps.tenancy.models import Project

# \Z, not $ (which also matches before a trailing newline): keys are dict keys, never trimmed.
KEY_PATTERN = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_./@:-]{0,99}\Z")
TAG_PATTERN = re.compile(r"^[\w.:/@+-]{1,64}$")
MAX_VALUES_PER_BATCH = 10_000
MAX_STEP = 2**53 - 1  # exact in a float64, so in every JSON client
MAX_ERRORS = 20  # a batch of 10,000 bad points still gets a short answer


class MetricKeySerializer(serializers.ModelSerializer[MetricKey]):
    class Meta:
        model = MetricKey
        fields = ["name", "count", "first_step", "last_step", "last_value"]
        read_only_fields = fields


class RunSerializer(serializers.ModelSerializer[Run]):
    """A run: its job (if any), hyperparameters, tags, state and the summary of its series."""

    project = serializers.PrimaryKeyRelatedField(
        queryset=Project.objects.all(), required=False, allow_null=True
    )
    owner = serializers.CharField(source="owner.username", read_only=True, allow_null=True)
    job_state = serializers.CharField(source="job.state", read_only=True, allow_null=True)
    name = serializers.CharField(max_length=100)
    config = serializers.DictField(required=False)
    tags = serializers.ListField(
        child=serializers.RegexField(TAG_PATTERN), max_length=64, required=False
    )
    add_tags = serializers.ListField(
        child=serializers.RegexField(TAG_PATTERN),
        max_length=64,
        required=False,
        write_only=True,
        help_text="Tags to add to the run's own (kept in order, no repeats), where ``tags`` "
        "replaces them: the SDK's tag() sends these, so tags set on the dashboard stay.",
    )
    keys = MetricKeySerializer(many=True, read_only=True)

    class Meta:
        model = Run
        fields = [
            "id", "name", "project", "job", "job_state", "owner", "state", "config", "tags",
            "add_tags", "simulated", "keys", "created_at", "updated_at",
        ]  # fmt: skip
        read_only_fields = [
            "job", "job_state", "owner", "simulated", "keys", "created_at", "updated_at",
        ]  # fmt: skip

    def validate_project(self, value: Project | None) -> Project | None:
        if value is not None and value.tenant_id != self.context["view"].tenant.pk:
            raise serializers.ValidationError(_("No such project in this tenant."))
        return value

    def validate_config(self, value: dict[str, Any]) -> dict[str, Any]:
        if len(str(value)) > 64_000:
            raise serializers.ValidationError(_("Hyperparameters are limited to 64 kB."))
        return value

    def create(self, validated_data: dict[str, Any]) -> Run:
        from apps.runs.services import create_run

        return create_run(
            tenant=validated_data["tenant"],
            owner=validated_data["owner"],
            name=validated_data["name"],
            project=validated_data.get("project"),
            config=validated_data.get("config"),
            tags=[*(validated_data.get("tags") or ()), *(validated_data.get("add_tags") or ())],
        )

    def update(self, instance: Run, validated_data: dict[str, Any]) -> Run:
        from apps.runs.services import update_run

        state = validated_data.get("state")
        run = update_run(
            run=instance,
            config=validated_data.get("config"),
            tags=validated_data.get("tags"),
            add_tags=validated_data.get("add_tags"),
            state=RunState(state) if state else None,
        )
        if "name" in validated_data and validated_data["name"] != run.name:
            run.name = validated_data["name"]
            run.save(update_fields=["name"])
        return run


def parse_points(data: Any) -> tuple[list[Point], dict[str, list[str]]]:
    """Validate a metric batch ``{"points": [{"step": int, "values": {key: number}}]}``.

    A hand-written loop rather than nested serializers: a batch holds up to 10,000 values
    and this runs at a few hundred nanoseconds per value. Returns the flat points and the
    field errors (empty when valid); the first ``MAX_ERRORS`` problems are reported."""
    errors: dict[str, list[str]] = {}

    def bad(path: str, msg: str) -> None:
        if len(errors) < MAX_ERRORS:
            errors.setdefault(path, []).append(msg)

    rows = data.get("points") if isinstance(data, dict) else None
    if not isinstance(rows, list) or not rows:
        return [], {"points": ["A non-empty list of points is required."]}
    total = sum(
        len(r["values"]) for r in rows if isinstance(r, dict) and isinstance(r.get("values"), dict)
    )
    if total > MAX_VALUES_PER_BATCH or len(rows) > MAX_VALUES_PER_BATCH:
        return [], {
            "points": [f"At most {MAX_VALUES_PER_BATCH} values per batch; this one has {total}."]
        }
    out: list[Point] = []
    good_keys: set[str] = set()  # keys repeat in every row: check each pattern once
    isfinite = math.isfinite
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            bad(f"points.{i}", "Must be an object with step and values.")
            continue
        step = row.get("step")
        if type(step) is not int or not 0 <= step <= MAX_STEP:
            bad(f"points.{i}.step", f"Must be an integer between 0 and {MAX_STEP}.")
            continue
        values = row.get("values")
        if not isinstance(values, dict) or not values:
            bad(f"points.{i}.values", "Must be a non-empty object of key: number.")
            continue
        for key, value in values.items():
            if key not in good_keys:
                if not KEY_PATTERN.match(key):
                    bad(
                        f"points.{i}.values.{key[:100]}",
                        "Keys are 1-100 characters: letters, digits and _ . / @ : - "
                        "(not starting with a punctuation mark).",
                    )
                    continue
                good_keys.add(key)
            kind = type(value)
            if kind is float and isfinite(value):
                out.append((key, step, value))
            elif kind is int and -(2**1000) < value < 2**1000:
                out.append((key, step, float(value)))
            else:
                bad(f"points.{i}.values.{key}", "Must be a finite number.")
    return out, errors


class MetricBatchSerializer(serializers.Serializer[dict[str, Any]]):
    """Schema only (validation is ``parse_points``): a batch of metric points."""

    class PointSerializer(serializers.Serializer[dict[str, Any]]):
        step = serializers.IntegerField(min_value=0, max_value=MAX_STEP)
        values = serializers.DictField(child=serializers.FloatField())

    points = PointSerializer(many=True)


class PendingRequestSerializer(serializers.Serializer[dict[str, Any]]):
    checkpoint_requested_at = serializers.DateTimeField(
        allow_null=True,
        help_text="Set while a request that the run save a checkpoint is pending (the idle "
        "sweep, the runtime limit or a person asked for one); null otherwise.",
    )
    checkpoint_request_reason = serializers.CharField(allow_blank=True)


class IngestResultSerializer(PendingRequestSerializer):
    received = serializers.IntegerField()
    stored = serializers.IntegerField()
    duplicates = serializers.IntegerField()


class CheckpointRequestSerializer(serializers.Serializer[dict[str, Any]]):
    reason = serializers.CharField(
        max_length=200, required=False, allow_blank=True, help_text="Why; shown to the job."
    )


class CheckpointRequestStateSerializer(serializers.Serializer[dict[str, Any]]):
    requested_at = serializers.DateTimeField(allow_null=True)
    reason = serializers.CharField(allow_blank=True)
    pending = serializers.BooleanField()
    served_step = serializers.IntegerField(
        allow_null=True, help_text="Step of the checkpoint that served the request."
    )
    newest_step = serializers.IntegerField(
        allow_null=True, help_text="Step of the newest complete checkpoint of the job."
    )
    newest_path = serializers.CharField(allow_null=True)
    newest_completed_at = serializers.DateTimeField(allow_null=True)


class SeriesQuerySerializer(serializers.Serializer[dict[str, Any]]):
    keys = serializers.CharField(required=False, allow_blank=True, default="")
    max_points = serializers.IntegerField(min_value=10, max_value=MAX_POINTS_LIMIT, default=1000)
    step_min = serializers.IntegerField(min_value=0, required=False)
    step_max = serializers.IntegerField(min_value=0, required=False)

    def validate_keys(self, value: str) -> list[str]:
        keys = [k.strip() for k in value.split(",") if k.strip()]
        bad = [k for k in keys if not KEY_PATTERN.match(k)]
        if bad:
            raise serializers.ValidationError(
                _("Invalid key(s): {keys}.").format(keys=", ".join(bad[:5]))
            )
        if len(keys) > 50:
            raise serializers.ValidationError(_("At most 50 keys per request."))
        return keys

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        lo, hi = attrs.get("step_min"), attrs.get("step_max")
        if lo is not None and hi is not None and lo > hi:
            raise serializers.ValidationError({"step_max": [_("Must not be below step_min.")]})
        return attrs


class SeriesSerializer(serializers.Serializer[dict[str, Any]]):
    steps = serializers.ListField(child=serializers.IntegerField())
    values = serializers.ListField(child=serializers.FloatField())
    count = serializers.IntegerField()
    downsampled = serializers.BooleanField()


class SeriesResponseSerializer(serializers.Serializer[dict[str, Any]]):
    run = serializers.IntegerField()
    max_points = serializers.IntegerField()
    series = serializers.DictField(child=SeriesSerializer())


class CheckpointFileSerializer(serializers.Serializer[dict[str, Any]]):
    name = serializers.CharField(max_length=255)
    bytes = serializers.IntegerField(min_value=0)
    sha256 = serializers.RegexField(r"^[a-f0-9]{64}$", required=False)


class CheckpointSerializer(serializers.ModelSerializer[Checkpoint]):
    """Read a checkpoint; POST registers one rank's durable shard of it."""

    rank = serializers.IntegerField(min_value=0, max_value=1_000_000, default=0, write_only=True)
    world_size = serializers.IntegerField(
        min_value=1, max_value=1_000_000, default=1, write_only=True
    )
    files = serializers.ListField(
        child=CheckpointFileSerializer(), required=False, write_only=True, max_length=1000
    )
    shard_bytes = serializers.IntegerField(min_value=0, default=0, write_only=True)
    step = serializers.IntegerField(min_value=0, max_value=MAX_STEP)
    path = serializers.CharField(max_length=1000)

    class Meta:
        model = Checkpoint
        fields = [
            "id", "run", "job", "step", "path", "shards", "shards_done", "size_bytes", "state",
            "manifest", "created_at", "completed_at", "rank", "world_size", "files",
            "shard_bytes",
        ]  # fmt: skip
        read_only_fields = [
            "id", "run", "job", "shards", "shards_done", "size_bytes", "state", "manifest",
            "created_at", "completed_at",
        ]  # fmt: skip

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs["rank"] >= attrs["world_size"]:
            raise serializers.ValidationError({"rank": [_("Must be below world_size.")]})
        return attrs
