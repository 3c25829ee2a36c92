"""Sweeps in and out. A sweep is checked whole before anything is written: its search space,
its template, and every trial's job as the job API would check it."""

from __future__ import annotations

import random
from typing import Any

from django.db import transaction
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.jobs.api.serializers import NAME, NAME_RULE, AfterJobSerializer, RejectUnknownFields
from apps.sweeps import rules, selectors, services, space
from apps.sweeps.models import EarlyStop, Sweep, SweepMethod, Trial
from apps.sweeps.services import JOB_ENDED
from apps.tenancy.models import Project

SET_BY_SWEEP = ("name", "kind", "after")
MAX_PARALLEL = 64
MAX_SEED = 2**31 - 1
MAX_REDUCTION_FACTOR = 16
MAX_BRACKETS = 4


class SweepCountsSerializer(serializers.Serializer[dict[str, int]]):
    waiting = serializers.IntegerField(help_text="Trials not started yet (no job).")
    active = serializers.IntegerField(help_text="Trials whose job is queued or running.")
    succeeded = serializers.IntegerField()
    failed = serializers.IntegerField()
    cancelled = serializers.IntegerField(help_text="Cancelled, not counting those stopped early.")
    stopped_early = serializers.IntegerField(help_text="Stopped by the early-stopping rule.")


class TrialOutcomeSerializer(serializers.Serializer[selectors.Outcome]):
    index = serializers.IntegerField(source="trial.index")
    params = serializers.DictField(
        source="trial.params", child=serializers.JSONField(), help_text="This trial's values."
    )
    job = AfterJobSerializer(source="trial.job", allow_null=True, help_text="Null until it starts.")
    run = serializers.IntegerField(allow_null=True, help_text="The job's training run.")
    value = serializers.FloatField(
        allow_null=True,
        help_text="The value of the sweep's metric that ranks the trial: the newest the run "
        "reported (rank_by last) or the best over its steps (rank_by best).",
    )
    step = serializers.IntegerField(allow_null=True, help_text="The step of that value.")
    last_value = serializers.FloatField(
        allow_null=True, help_text="The newest value the run reported, whatever rank_by says."
    )
    last_step = serializers.IntegerField(allow_null=True, help_text="The step of that value.")
    rank = serializers.IntegerField(
        allow_null=True, help_text="1 for the best value for the sweep's goal; null without one."
    )
    stopped_step = serializers.IntegerField(
        source="trial.stopped_step",
        allow_null=True,
        help_text="The step at which the early-stopping rule stopped it; null otherwise.",
    )
    bracket = serializers.IntegerField(
        allow_null=True,
        help_text="Its halving bracket (1, 2, ...) when the sweep runs several; null otherwise.",
    )


class TrialCountField(serializers.IntegerField):
    """``trials``: asked for on submit, read back as the number of trials drawn."""

    def get_attribute(self, instance: Sweep) -> int:
        counts = self.context.get("counts") or {}  # a page of the list, read at once
        if instance.pk in counts:
            return int(counts[instance.pk]["total"])
        return instance.trials.count()


class SweepSerializer(RejectUnknownFields, serializers.ModelSerializer[Sweep]):
    """Submit (POST) and read sweeps."""

    name = serializers.RegexField(NAME, max_length=34, error_messages=NAME_RULE)
    project = serializers.PrimaryKeyRelatedField(
        queryset=Project.objects.all(), required=False, allow_null=True
    )
    method = serializers.ChoiceField(SweepMethod.choices, default=SweepMethod.RANDOM)
    parameters = serializers.DictField(
        child=serializers.JSONField(),
        help_text="name -> a list of values, or {values|uniform|log_uniform|int: [...]} "
        "(apps/sweeps/space.py). At most 16.",
    )
    trials = TrialCountField(
        min_value=1,
        max_value=space.MAX_TRIALS,
        required=False,
        help_text="How many trials: required for random; a grid runs every combination.",
    )
    seed = serializers.IntegerField(
        min_value=0,
        max_value=MAX_SEED,
        required=False,
        help_text="Seeds the random draws (one is chosen when left out); the same seed draws "
        "the same trials.",
    )
    parallel = serializers.IntegerField(min_value=1, max_value=MAX_PARALLEL, default=4)
    template = serializers.DictField(
        child=serializers.JSONField(),
        help_text="A training job body as for POST jobs/, without name, kind or after; "
        "`{{name}}` in command, args and env values stands for the trial's value of a "
        "parameter. Each trial is job `<sweep>-<index>`, and its run's config starts as its "
        "values.",
    )
    owner = serializers.CharField(source="owner.username", read_only=True, allow_null=True)
    counts = serializers.SerializerMethodField()
    best = serializers.SerializerMethodField(
        help_text="The best trial so far by the sweep's metric, goal and rank_by; null without one."
    )

    class Meta:
        model = Sweep
        fields = [
            "id", "name", "project", "owner", "method", "parameters", "trials", "seed",
            "parallel", "metric", "goal", "rank_by", "early_stop", "stop_after_step",
            "stop_min_trials", "reduction_factor", "brackets", "startup_trials", "template",
            "state", "note", "counts", "best", "created_at", "finished_at",
        ]  # fmt: skip
        read_only_fields = ["state", "note", "created_at", "finished_at"]
        extra_kwargs = {
            "stop_min_trials": {"min_value": 1, "max_value": space.MAX_TRIALS},
            "reduction_factor": {"min_value": 2, "max_value": MAX_REDUCTION_FACTOR},
            "brackets": {"min_value": 1, "max_value": MAX_BRACKETS},
            "startup_trials": {"min_value": 1, "max_value": space.MAX_TRIALS},
        }

    @extend_schema_field(SweepCountsSerializer)
    def get_counts(self, sweep: Sweep) -> dict[str, int]:
        # A page of the list reads every sweep's counts at once (SweepViewSet.list).
        counts = self.context.get("counts")
        if counts is None or sweep.pk not in counts:
            counts = selectors.trial_counts([sweep], JOB_ENDED)
        return {k: v for k, v in counts[sweep.pk].items() if k != "total"}

    @extend_schema_field(TrialOutcomeSerializer(allow_null=True))
    def get_best(self, sweep: Sweep) -> dict[str, Any] | None:
        if not sweep.metric:
            return None
        read = self.context.get("outcomes") or {}
        found = selectors.best(sweep, read.get(sweep.pk))
        return dict(TrialOutcomeSerializer(found).data) if found is not None else None

    def validate_project(self, value: Project | None) -> Project | None:
        if value is not None and value.tenant_id != self.context["view"].tenant.pk:
            raise serializers.ValidationError(_("No such project in this tenant."))
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        attrs.setdefault("seed", random.SystemRandom().randrange(MAX_SEED))
        template: dict[str, Any] = dict(attrs["template"])
        try:
            params = space.parse_space(attrs["parameters"])
            drawn = space.trials(params, attrs["method"], attrs.get("trials"), attrs["seed"])
        except space.SpaceError as exc:
            raise serializers.ValidationError(exc.errors) from exc
        errors: dict[str, Any] = {
            key: [_("Set by the sweep for each trial; leave it out of the template.")]
            for key in SET_BY_SWEEP
            if key in template
        }
        errors.update(space.unknown_placeholders(template, {p.name for p in params}))
        if attrs["method"] == SweepMethod.TPE:
            _check_adaptive(attrs)
        rule = attrs.get("early_stop", EarlyStop.NONE)
        if rule != EarlyStop.NONE and not attrs.get("metric"):
            raise serializers.ValidationError(
                {"early_stop": [_("Early stopping compares trials by a metric: name one.")]}
            )
        if rule != EarlyStop.ASHA and attrs.get("brackets", 1) > 1:
            raise serializers.ValidationError(
                {"brackets": [_("Brackets are successive halving's: set early_stop to asha.")]}
            )
        if rule == EarlyStop.ASHA and attrs.get("stop_after_step", 0) < 1:
            raise serializers.ValidationError(
                {"stop_after_step": [_("Successive halving needs its first rung: a step from 1.")]}
            )
        if errors:
            raise serializers.ValidationError({"template": errors})
        if attrs.get("project") is not None:  # the sweep's project is its trials' too
            template["project"] = attrs["project"].pk
        view = self.context["view"]
        submitter = services.Submitter(view.tenant, view.role)
        for index, values in enumerate(drawn, start=1):
            body = services.trial_body(attrs["name"], template, index, values)
            found, _serializer = services.job_errors(body, submitter)
            if found:
                detail: dict[str, Any] = {"template": found}
                if index > 1:
                    detail["parameters"] = [
                        _("Trial {index} ({values}) makes a job that is refused.").format(
                            index=index,
                            values=", ".join(f"{k}={space.as_text(v)}" for k, v in values.items()),
                        )
                    ]
                raise serializers.ValidationError(detail)
        if attrs.get("project") is None and template.get("project") is not None:
            # Named in the template only (and checked there): the sweep belongs to it too.
            attrs["project"] = Project.objects.get(pk=template["project"])
        attrs["template"], attrs["drawn"] = template, drawn
        return attrs

    @transaction.atomic
    def create(self, validated_data: dict[str, Any]) -> Sweep:
        drawn = validated_data.pop("drawn")
        validated_data.pop("trials", None)
        sweep = Sweep.objects.create(**validated_data)
        adaptive = sweep.method == SweepMethod.TPE
        brackets = rules.assign_brackets(len(drawn), sweep.brackets, sweep.reduction_factor)
        Trial.objects.bulk_create(
            # A tpe trial past the startup is chosen when it starts (services.choose); its
            # random draw above only served to check the template.
            Trial(
                sweep=sweep,
                index=index,
                params={} if adaptive and index > sweep.startup_trials else values,
                bracket=bracket + 1,
            )
            for index, (values, bracket) in enumerate(zip(drawn, brackets, strict=True), start=1)
        )
        return sweep


def _check_adaptive(attrs: dict[str, Any]) -> None:
    """A tpe sweep models its results: it needs a metric, and trials after the startup."""
    errors: dict[str, list[str]] = {}
    if not attrs.get("metric"):
        errors["metric"] = [_("An adaptive search chooses trials by a metric: name one.")]
    startup = attrs.get("startup_trials", Sweep._meta.get_field("startup_trials").default)
    if attrs.get("trials") is not None and attrs["trials"] <= startup:
        errors["trials"] = [
            _(
                "The first {startup} trials (startup_trials) are drawn at random; ask for more "
                "trials than that, or lower startup_trials."
            ).format(startup=startup)
        ]
    if errors:
        raise serializers.ValidationError(errors)


class SweepDetailSerializer(SweepSerializer):
    outcomes = serializers.SerializerMethodField(
        help_text="Every trial in order: its values, job, run and metric value."
    )

    class Meta(SweepSerializer.Meta):
        fields = [*SweepSerializer.Meta.fields, "outcomes"]

    @extend_schema_field(TrialOutcomeSerializer(many=True))
    def get_outcomes(self, sweep: Sweep) -> list[dict[str, Any]]:
        rows = TrialOutcomeSerializer(selectors.outcomes(sweep), many=True)  # type: ignore[arg-type]  # many=True takes a list
        return list(rows.data)
