"""A pipeline submitted in one request: steps that start after earlier steps (by name) and
after existing jobs (by id), all queued in one transaction or none at all.

Submitting the steps one by one leaves a window where the first steps are queued (or
already running) and a later one is refused; the client must then cancel what it sent. Here
every step is checked first and the whole pipeline is written or refused as one.
"""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.jobs.after import MAX_AFTER
from apps.jobs.api.serializers import NAME, JobSerializer
from apps.jobs.models import Job, JobKind

MAX_STEPS = 32
"""Most steps one pipeline request may hold."""


@extend_schema_field(
    {"oneOf": [{"type": "integer", "minimum": 1}, {"type": "string", "pattern": NAME.pattern}]}
)
class StepRefField(serializers.Field):  # type: ignore[type-arg]  # DRF's Field is generic in stubs only
    """A job this step starts after: an existing job's id, or an earlier step's name."""

    default_error_messages = {
        "invalid": gettext_lazy("Give a job id (a number) or the name of an earlier step.")
    }

    def to_internal_value(self, data: Any) -> int | str:
        if isinstance(data, bool):
            self.fail("invalid")
        if isinstance(data, int) and data >= 1:
            return data
        if isinstance(data, str) and NAME.fullmatch(data):
            return data
        self.fail("invalid")
        raise AssertionError  # fail() raises

    def to_representation(self, value: Any) -> Any:
        return value


class PipelineStepSerializer(JobSerializer):
    """One step: a job body as for ``POST jobs/``, ``kind`` training unless given, whose
    ``after`` may also name earlier steps of the pipeline."""

    after = serializers.ListField(
        child=StepRefField(),
        max_length=MAX_AFTER,
        required=False,
        write_only=True,
        help_text="What this step starts after: ids of training jobs of the tenant, and names "
        "of earlier training steps of this pipeline.",
    )

    class Meta(JobSerializer.Meta):
        extra_kwargs = {"kind": {"default": JobKind.TRAINING}}

    def validate_after(self, value: list[int | str]) -> list[Job | str]:  # type: ignore[override]
        """Existing jobs checked as for one job (the same errors); step names kept for the
        pipeline to check against its earlier steps."""
        ids = [ref for ref in value if isinstance(ref, int)]
        jobs: list[Job | str] = list(super().validate_after(ids)) if ids else []
        return jobs + list(dict.fromkeys(ref for ref in value if isinstance(ref, str)))


class PipelineSerializer(serializers.Serializer[dict[str, Any]]):
    steps: serializers.ListSerializer[dict[str, Any]] = serializers.ListSerializer(
        child=PipelineStepSerializer(),
        min_length=1,
        max_length=MAX_STEPS,
        help_text="The steps in order; a step's `after` names earlier steps or existing jobs. "
        "All are queued, or none (400 with each step's errors at its index).",
    )

    def validate_steps(self, steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Names unique, and a step starts only after earlier training steps: checked for
        every step before anything is written."""
        kinds: dict[str, str] = {}
        errors: dict[str, dict[str, list[str]]] = {}
        for index, step in enumerate(steps):
            problems: list[str] = []
            name = step["name"]
            for ref in step.get("after", []):
                if not isinstance(ref, str):
                    continue
                if ref not in kinds:
                    problems.append(
                        _("'{name}' is not an earlier step of this pipeline.").format(name=ref)
                    )
                elif kinds[ref] != JobKind.TRAINING:
                    problems.append(
                        _(
                            "Step '{name}' is not a training job: only a training job ends by "
                            "succeeding, so nothing can start after it."
                        ).format(name=ref)
                    )
            step_errors = {"after": problems} if problems else {}
            if name in kinds:
                step_errors["name"] = [
                    _("Another step is named '{name}': step names must be unique.").format(
                        name=name
                    )
                ]
            kinds.setdefault(name, step["kind"])
            if step_errors:
                errors[str(index)] = step_errors  # keyed by index, as the per-step checks are
        if errors:
            raise serializers.ValidationError(errors)
        return steps


def create_steps(steps: list[dict[str, Any]], **extra: Any) -> list[Job]:
    """Every validated step, in order, each after the jobs it names (``extra``: the tenant
    and owner; the caller holds the transaction)."""
    made: dict[str, Job] = {}
    for attrs in steps:
        after = [made[ref] if isinstance(ref, str) else ref for ref in attrs.get("after", [])]
        job = PipelineStepSerializer().create({**attrs, **extra, "after": after})
        made[job.name] = job
    return list(made.values())


class PipelineJobsSerializer(serializers.Serializer[dict[str, Any]]):
    jobs = JobSerializer(many=True, help_text="The queued steps, in the order given.")


class PipelineJobSerializer(serializers.ModelSerializer[Job]):
    """A job of a drawn pipeline: enough for a box and its arrows."""

    after = serializers.SerializerMethodField(
        help_text="Ids of the jobs of this answer that this one starts after, in id order."
    )

    class Meta:
        model = Job
        fields = [
            "id", "name", "kind", "state", "owner", "after", "submitted_at", "started_at",
            "finished_at", "expected_start_at",
        ]  # fmt: skip
        read_only_fields = fields

    owner = serializers.CharField(source="owner.username", read_only=True, allow_null=True)

    def get_after(self, job: Job) -> list[int]:
        shown: set[int] = self.context["shown"]
        return sorted(j.pk for j in job.after.all() if j.pk in shown)


class PipelineGraphSerializer(serializers.Serializer[dict[str, Any]]):
    jobs = PipelineJobSerializer(
        many=True,
        help_text="The job asked for and every job linked to it through `after`, either way, "
        "in id order.",
    )
    truncated = serializers.BooleanField(
        help_text="True when the pipeline has more jobs than an answer holds (the nearest are "
        "kept)."
    )
