"""Job specs in and out. Validation turns every bad spec into a 400 with field errors."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from django.core.exceptions import ObjectDoesNotExist
from django.db.models import Max, Sum
from django.utils.text import format_lazy
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.clusters.backends.spec import DEFAULT_NOTEBOOK_STORAGE_GIB
from apps.clusters.models import Node, ResourcePool
from apps.governance.policy import runtime_cap
from apps.jobs.after import MAX_AFTER, NEVER_SUCCEEDS
from apps.jobs.homes import home_job_id
from apps.jobs.models import Allocation, Job, JobEvent, JobKind, JobLogLine, state_word
from apps.jobs.notebooks import open_path
from apps.tenancy.models import ADMIN_ROLES, Project

# registry/namespace/name:tag or @sha256:digest, as Docker parses image references.
IMAGE_REF = re.compile(
    r"^(?:[a-z0-9.-]+(?::[0-9]+)?/)?[a-z0-9]+(?:[._-][a-z0-9]+)*(?:/[a-z0-9]+(?:[._-][a-z0-9]+)*)*"
    r"(?::[\w][\w.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$"
)
NAME = re.compile(r"^[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?$")
# Names become Kubernetes object names: say the rule, not "does not match the pattern".
NAME_RULE: dict[str, Any] = {
    "invalid": gettext_lazy(
        "Use lower-case letters, digits and '-', starting and ending with a letter or digit."
    )
}
MAX_RUNTIME_S = 90 * 86400  # the longest runtime limit a job may declare
# \Z, not $ (which also matches before a trailing newline): env names are dict keys, never trimmed.
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\Z")
HIGH_PRIORITY = 2  # P0..P2 preempt others, so only tenant admins may submit them


def priority_error(priority: int, role: str | None) -> str | None:
    """Why this role may not submit at this priority, or None when it may."""
    if priority <= HIGH_PRIORITY and role not in ADMIN_ROLES:
        return _("P{priority} may preempt other work; only tenant admins can submit P0-P2.").format(
            priority=priority
        )
    return None


def _argv_item() -> serializers.CharField:
    """One item of a container's command or args, kept exactly as sent."""
    return serializers.CharField(max_length=1000, allow_blank=True, trim_whitespace=False)


class PriorityRule:
    """``validate_priority`` for serializers whose submissions may preempt others: P0-P2 only
    from tenant admins (the view says the caller's role)."""

    context: Any

    def validate_priority(self, value: int) -> int:
        view = self.context.get("view")
        error = priority_error(value, view.role) if view is not None else None
        if error:
            raise serializers.ValidationError(error)
        return value


class RejectUnknownFields:
    """A 400 for keys the serializer does not declare. Silently dropping them would let a spec
    asking for ``privileged``, ``hostPath`` or ``hostNetwork`` look accepted while the platform
    ran something else; the caller must learn the field is refused. Declared read-only fields
    (``state``, ``owner``...) stay ignored, so a job read back can be posted again."""

    fields: Any
    unknown_field = gettext_lazy("Unknown field; it cannot be set on a job.")

    def to_internal_value(self, data: Any) -> Any:
        unknown: dict[str, Any] = {}
        if isinstance(data, dict):
            unknown = {str(k): [self.unknown_field] for k in data if k not in self.fields}
        try:
            value = super().to_internal_value(data)  # type: ignore[misc]
        except serializers.ValidationError as exc:
            # Every problem in one answer: the unknown keys and those of the known fields
            # (a typo inside a replica group reported beside one at the top).
            if unknown and isinstance(exc.detail, dict):
                raise serializers.ValidationError({**exc.detail, **unknown}) from exc
            raise
        if unknown:
            raise serializers.ValidationError(dict(sorted(unknown.items())))
        return value


class ReplicaGroupSerializer(RejectUnknownFields, serializers.Serializer[dict[str, Any]]):
    name = serializers.RegexField(NAME, max_length=40, error_messages=NAME_RULE)
    replicas = serializers.IntegerField(min_value=1, max_value=4096, default=1)
    accelerators = serializers.IntegerField(min_value=0, max_value=16, default=0)
    accelerator_milli = serializers.IntegerField(min_value=0, max_value=999, default=0)
    cpu_milli = serializers.IntegerField(min_value=100, max_value=512_000, default=4000)
    memory_mib = serializers.IntegerField(min_value=128, max_value=4_194_304, default=16_384)
    rdma_nics = serializers.IntegerField(min_value=0, max_value=8, default=0)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs["accelerators"] and attrs["accelerator_milli"]:
            raise serializers.ValidationError(
                {
                    "accelerator_milli": [
                        _("Ask for whole accelerators or a fraction of one, not both.")
                    ]
                }
            )
        return attrs


class TopologySerializer(RejectUnknownFields, serializers.Serializer[dict[str, Any]]):
    mode = serializers.ChoiceField(["none", "soft", "hard"], default="none")
    highest_tier = serializers.ChoiceField(["leaf", "su", "spine"], default="spine")


class VolumeSerializer(RejectUnknownFields, serializers.Serializer[dict[str, Any]]):
    name = serializers.RegexField(NAME, max_length=40, error_messages=NAME_RULE)
    claim = serializers.RegexField(
        NAME,
        max_length=63,
        error_messages={
            "invalid": format_lazy(gettext_lazy("A claim name: {rule}"), rule=NAME_RULE["invalid"])
        },
    )
    mount_path = serializers.RegexField(
        r"^/[^:]*$",
        max_length=200,
        error_messages={
            "invalid": gettext_lazy("An absolute path inside the container, without ':'.")
        },
    )
    read_only = serializers.BooleanField(default=False)  # type: ignore[assignment]  # API name


class NotebookOptionsSerializer(RejectUnknownFields, serializers.Serializer[dict[str, Any]]):
    flavor = serializers.ChoiceField(["jupyter", "vscode"], default="jupyter")
    storage_gib = serializers.IntegerField(
        min_value=1, max_value=2048, default=DEFAULT_NOTEBOOK_STORAGE_GIB
    )


class InferenceOptionsSerializer(RejectUnknownFields, serializers.Serializer[dict[str, Any]]):
    port = serializers.IntegerField(min_value=1, max_value=65535, default=8000)


class AllocationSerializer(serializers.ModelSerializer[Allocation]):
    node = serializers.CharField(source="node.name", read_only=True)
    surge = serializers.BooleanField(
        read_only=True,
        help_text="Room held for a rolling update's surge replica until the rollout ends; "
        "not one of the service's replicas.",
    )

    class Meta:
        model = Allocation
        fields = ["replica_group", "replica_index", "node", "devices", "shares", "surge"]
        read_only_fields = fields


class AfterJobSerializer(serializers.ModelSerializer[Job]):
    class Meta:
        model = Job
        fields = ["id", "name", "state"]
        read_only_fields = fields


class TrialOfJobSerializer(serializers.Serializer[dict[str, Any]]):
    sweep = serializers.IntegerField()
    sweep_name = serializers.CharField()
    index = serializers.IntegerField()


def _linked(jobs: Iterable[Job]) -> list[dict[str, Any]]:
    """Jobs linked by ``after`` (prefetched by the view, so sorted here), in id order."""
    return list(AfterJobSerializer(sorted(jobs, key=lambda j: j.pk), many=True).data)


class JobSerializer(PriorityRule, RejectUnknownFields, serializers.ModelSerializer[Job]):
    """Submit (POST) and read jobs. Spec fields are flattened for a friendly API."""

    pool = serializers.PrimaryKeyRelatedField(queryset=ResourcePool.objects.all())
    project = serializers.PrimaryKeyRelatedField(
        queryset=Project.objects.all(), required=False, allow_null=True
    )
    name = serializers.RegexField(NAME, max_length=40, error_messages=NAME_RULE)
    priority = serializers.IntegerField(min_value=0, max_value=5, default=4)
    image = serializers.CharField(max_length=300, write_only=True)
    # argv items are kept as sent: an empty argument (`--sep ""`) or one with spaces at its
    # ends is what the user quoted, not a mistake to refuse or trim.
    command = serializers.ListField(
        child=_argv_item(), max_length=64, default=list, write_only=True
    )
    args = serializers.ListField(child=_argv_item(), max_length=256, default=list, write_only=True)
    env = serializers.DictField(
        child=serializers.CharField(max_length=4096, allow_blank=True),
        default=dict,
        write_only=True,
    )
    replica_groups = ReplicaGroupSerializer(many=True, write_only=True)
    accelerator_model = serializers.CharField(max_length=32, required=False, allow_blank=True)
    topology = TopologySerializer(required=False, write_only=True)
    volumes = VolumeSerializer(many=True, required=False, write_only=True)
    notebook = NotebookOptionsSerializer(required=False, write_only=True)
    inference = InferenceOptionsSerializer(required=False, write_only=True)
    max_wait_s = serializers.IntegerField(
        min_value=60, max_value=30 * 86400, required=False, allow_null=True
    )
    max_runtime_s = serializers.IntegerField(
        min_value=60,
        max_value=MAX_RUNTIME_S,
        required=False,
        allow_null=True,
        help_text="Longest the job may hold its accelerators per run (seconds, from its "
        "admission); it is stopped after that. The scheduler plans with it: declared runtimes "
        "tell it when busy nodes will drain for a waiting large job. A tenant's governance "
        "policy may cap it for training jobs and notebooks; those that declare none then get "
        "the cap.",
    )
    max_retries = serializers.IntegerField(min_value=0, max_value=20, default=3)
    after = serializers.ListField(
        child=serializers.IntegerField(min_value=1),
        max_length=MAX_AFTER,
        required=False,
        write_only=True,
        help_text="Ids of training jobs of the same tenant that must succeed before this job "
        "starts. Until then it stays queued with pending code `after` (its max wait not "
        "running); if one of them fails or is cancelled, this job is cancelled.",
    )
    after_jobs = serializers.SerializerMethodField(
        help_text="The jobs this one starts after, in id order, with their state now."
    )
    next_jobs = serializers.SerializerMethodField(
        help_text="The jobs that start after this one (named it in `after`), in id order, "
        "with their state now."
    )
    owner = serializers.CharField(source="owner.username", read_only=True, allow_null=True)
    allocations = AllocationSerializer(many=True, read_only=True)
    open_url = serializers.SerializerMethodField(
        help_text="Where a running notebook opens, relative to the platform's address "
        "(/notebooks/<id>/, through the platform's proxy), for its owner and tenant admins; "
        "null otherwise."
    )

    pending_detail = serializers.ListField(
        child=serializers.JSONField(),
        read_only=True,
        help_text="pending_message as the scheduler's phrases: a list of {key, args}, an "
        "argument being a value, a phrase, a list of phrases (clauses), {items: [...]} or "
        "{time: ISO 8601}; the keys are apps/scheduling/core/text.py's. Empty when the "
        "message has none.",
    )
    trial = serializers.SerializerMethodField(
        help_text="For a sweep's trial: the sweep's id and name and the trial's index; null for "
        "other jobs."
    )
    home_job = serializers.SerializerMethodField(
        help_text="Notebooks: the id of the notebook whose home volume (files) this one "
        "mounts: its own id, or the first notebook of a chain of restarts. Null for other kinds."
    )

    class Meta:
        model = Job
        fields = [
            "id", "name", "kind", "pool", "project", "priority", "owner",
            "image", "command", "args", "env", "replica_groups", "accelerator_model", "topology",
            "volumes", "notebook", "inference", "max_wait_s", "max_runtime_s", "max_retries",
            "after", "after_jobs", "next_jobs", "waiting_for_jobs", "released_at", "spec",
            "requested_devices", "requested_milli", "state", "state_reason", "state_changed_at",
            "pending_code", "pending_message", "pending_detail", "queue_position",
            "expected_start_at", "expected_start_as_of", "attempt", "failures", "submitted_at",
            "admitted_at", "started_at", "finished_at", "allocations",
            "open_url", "home_job", "home_deleted_at", "trial",
        ]  # fmt: skip
        read_only_fields = [
            "spec", "requested_devices", "requested_milli", "state", "state_reason",
            "state_changed_at", "pending_code", "pending_message", "queue_position",
            "expected_start_at", "expected_start_as_of", "attempt", "failures", "submitted_at",
            "admitted_at", "started_at", "finished_at", "home_deleted_at", "waiting_for_jobs",
            "released_at",
        ]  # fmt: skip

    @extend_schema_field(AfterJobSerializer(many=True))
    def get_after_jobs(self, job: Job) -> list[dict[str, Any]]:
        return _linked(job.after.all())

    @extend_schema_field(AfterJobSerializer(many=True))
    def get_next_jobs(self, job: Job) -> list[dict[str, Any]]:
        return _linked(job.dependents.all())

    @extend_schema_field(TrialOfJobSerializer(allow_null=True))
    def get_trial(self, job: Job) -> dict[str, Any] | None:
        try:
            trial = job.trial  # joined by the job views
        except ObjectDoesNotExist:
            return None
        return {"sweep": trial.sweep_id, "sweep_name": trial.sweep.name, "index": trial.index}

    def get_home_job(self, job: Job) -> int | None:
        return home_job_id(job)

    def get_open_url(self, job: Job) -> str | None:
        """Only for the caller who may open it (owner, tenant admin): see apps.jobs.notebooks."""
        request, view = self.context.get("request"), self.context.get("view")
        user_id = getattr(getattr(request, "user", None), "pk", None)
        if job.owner_id != user_id and getattr(view, "role", None) not in ADMIN_ROLES:
            return None
        return open_path(job)

    def validate_image(self, value: str) -> str:
        if not IMAGE_REF.match(value):
            raise serializers.ValidationError(
                _("{image} is not a valid image reference.").format(image=repr(value))
            )
        return value

    def validate_env(self, value: dict[str, str]) -> dict[str, str]:
        bad = [k for k in value if not ENV_NAME.match(k)]
        if bad:
            raise serializers.ValidationError(
                _("Invalid variable name(s): {names}.").format(names=", ".join(bad))
            )
        return value

    def validate_after(self, value: list[int]) -> list[Job]:
        """The jobs, in the order given, each once; the same answer for a job that does not
        exist and one of another tenant, so an id says nothing of other tenants."""
        tenant = self.context["view"].tenant
        ids = list(dict.fromkeys(value))
        found = {j.pk: j for j in Job.objects.filter(tenant=tenant, pk__in=ids)}
        errors: list[str] = []
        for job_id in ids:
            job = found.get(job_id)
            if job is None:
                errors.append(_("No job #{job} in this tenant.").format(job=job_id))
            elif job.kind != JobKind.TRAINING:
                errors.append(
                    _(
                        "Job #{job} is not a training job: only a training job ends by "
                        "succeeding, so nothing can start after it."
                    ).format(job=job_id)
                )
            elif job.state in NEVER_SUCCEEDS:
                errors.append(
                    _("Job #{job} ({name}) is {state}: a job after it would never start.").format(
                        job=job_id, name=job.name, state=state_word(job.state)
                    )
                )
        if errors:
            raise serializers.ValidationError(errors)
        return [found[job_id] for job_id in ids]

    def validate_project(self, value: Project | None) -> Project | None:
        if value is not None and value.tenant_id != self.context["view"].tenant.pk:
            raise serializers.ValidationError(_("No such project in this tenant."))
        return value

    @classmethod
    def clone_errors(cls, job: Job, role: str | None) -> dict[str, list[str]]:
        """What submitting this job again, as it stands, would be refused for: a copy goes
        through the rules a new submission meets (its priority for the caller's role, the
        pool as it is now), not around them."""
        errors: dict[str, list[str]] = {}
        error = priority_error(job.priority, role)
        if error:
            errors["priority"] = [
                _("{error} Submit a copy at P3 or lower instead.").format(error=error)
            ]
        models = job.spec.get("accelerator_models") or [""]
        errors.update(cls._check_capacity(job.pool, models[0], job.spec.get("replica_groups", [])))
        return errors

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        kind = attrs.get("kind")
        groups = attrs.get("replica_groups") or []
        errors: dict[str, list[str]] = {}
        if not groups:
            errors["replica_groups"] = [_("At least one replica group is required.")]
        names = [g["name"] for g in groups]
        if len(set(names)) != len(names):
            errors["replica_groups"] = [_("Replica group names must be unique.")]
        if kind == JobKind.NOTEBOOK and (len(groups) != 1 or groups[0]["replicas"] != 1):
            errors["replica_groups"] = [_("A notebook has exactly one group with one replica.")]
        if kind == JobKind.INFERENCE and len(groups) != 1:
            errors["replica_groups"] = [_("An inference service has exactly one replica group.")]
        errors.update(
            self._check_capacity(attrs["pool"], attrs.get("accelerator_model", ""), groups)
        )
        errors.update(self._apply_runtime_cap(attrs))
        if errors:
            raise serializers.ValidationError(errors)
        return attrs

    def _apply_runtime_cap(self, attrs: dict[str, Any]) -> dict[str, list[str]]:
        """The tenant's runtime cap (governance policy) bounds what a training job or notebook
        declares, and is the limit of one that declares none."""
        tenant = getattr(self.context.get("view"), "tenant", None)
        if tenant is None:
            return {}
        cap = runtime_cap(tenant, attrs.get("kind", ""))
        if cap is None:
            return {}
        declared = attrs.get("max_runtime_s")
        if declared is None:
            attrs["max_runtime_s"] = cap
            return {}
        if declared > cap:
            return {
                "max_runtime_s": [
                    _(
                        "At most {cap} s: the runtime cap of tenant '{tenant}' (its governance "
                        "policy)."
                    ).format(cap=cap, tenant=tenant.slug)
                ]
            }
        return {}

    @staticmethod
    def _check_capacity(
        pool: ResourcePool, model: str, groups: list[dict[str, Any]]
    ) -> dict[str, list[str]]:
        nodes = Node.objects.filter(pool=pool, is_spare=False)
        models = sorted(
            set(nodes.exclude(accelerator_model="").values_list("accelerator_model", flat=True))
        )
        if model and model not in models:
            known = ", ".join(models) or _("none")
            return {
                "accelerator_model": [
                    _("Pool {pool} has no {model}; it has: {known}.").format(
                        pool=pool.name, model=model, known=known
                    )
                ]
            }
        if model:
            nodes = nodes.filter(accelerator_model=model)
        stats = nodes.aggregate(total=Sum("accelerator_count"), per_node=Max("accelerator_count"))
        total, per_node = int(stats["total"] or 0), int(stats["per_node"] or 0)
        wanted = sum(g["accelerators"] * g["replicas"] for g in groups)
        biggest = max((g["accelerators"] for g in groups), default=0)
        if biggest > per_node:
            return {
                "replica_groups": [
                    _(
                        "A replica asks for {asked} accelerators; the largest node in {pool} "
                        "has {most}."
                    ).format(asked=biggest, pool=pool.name, most=per_node)
                ]
            }
        if wanted > total:
            return {
                "replica_groups": [
                    _("The job asks for {asked} accelerators; pool {pool} has {total}.").format(
                        asked=wanted, pool=pool.name, total=total
                    )
                ]
            }
        return {}

    def create(self, validated_data: dict[str, Any]) -> Job:
        from apps.jobs.services import submit_job

        spec_keys = ("image", "command", "args", "env", "replica_groups", "topology", "volumes")
        spec: dict[str, Any] = {k: validated_data[k] for k in spec_keys if k in validated_data}
        model = validated_data.get("accelerator_model") or ""
        spec["accelerator_models"] = [model] if model else []
        if validated_data["kind"] == JobKind.NOTEBOOK:
            spec["notebook"] = validated_data.get("notebook") or {
                "flavor": "jupyter",
                "storage_gib": DEFAULT_NOTEBOOK_STORAGE_GIB,
            }
        if validated_data["kind"] == JobKind.INFERENCE:
            spec["inference"] = validated_data.get("inference") or {"port": 8000}
        return submit_job(
            tenant=validated_data["tenant"],
            owner=validated_data["owner"],
            name=validated_data["name"],
            kind=JobKind(validated_data["kind"]),
            pool=validated_data["pool"],
            priority=validated_data["priority"],
            spec=spec,
            project=validated_data.get("project"),
            max_wait_s=validated_data.get("max_wait_s"),
            max_runtime_s=validated_data.get("max_runtime_s"),
            max_retries=validated_data["max_retries"],
            after=validated_data.get("after"),
        )


class JobEventSerializer(serializers.ModelSerializer[JobEvent]):
    message_key = serializers.CharField(
        read_only=True,
        help_text="Set when the platform wrote `message` from its catalogue: the key, so a "
        "client can show the same sentence in its own language. Empty otherwise.",
    )
    message_args = serializers.DictField(
        child=serializers.JSONField(),
        read_only=True,
        help_text="The values the catalogue sentence of `message_key` takes: a name or number, "
        "a nested sentence (`{key, args}`), or the scheduler's phrases (a list, as in "
        "`pending_detail`).",
    )

    class Meta:
        model = JobEvent
        fields = [
            "id", "from_state", "to_state", "reason", "message", "message_key", "message_args",
            "created_at",
        ]  # fmt: skip
        read_only_fields = fields


class JobLogLineSerializer(serializers.ModelSerializer[JobLogLine]):
    class Meta:
        model = JobLogLine
        fields = ["ts", "replica", "attempt", "text"]
        read_only_fields = fields


class JobLogsQuerySerializer(serializers.Serializer[dict[str, Any]]):
    tail = serializers.IntegerField(min_value=1, max_value=5_000, default=500)
    since = serializers.DateTimeField(required=False, help_text="Only lines after this time.")


class JobLogsSerializer(serializers.Serializer[dict[str, Any]]):
    # a declared field named like ``Field.source``: DRF's metaclass moves it to the fields
    source = serializers.ChoiceField(  # type: ignore[assignment]
        choices=["simulated", "kubernetes"], help_text="The cluster kind the lines come from."
    )
    lines = JobLogLineSerializer(many=True)
    truncated = serializers.BooleanField(help_text="Older lines exist beyond ``tail``.")


class JobCostSerializer(serializers.Serializer[Any]):
    device_hours = serializers.FloatField(
        help_text="Devices held x hours, every attempt, up to now (a running job's still grow)."
    )
    cost = serializers.DecimalField(max_digits=16, decimal_places=2)
    price_per_device_hour = serializers.DecimalField(
        max_digits=10, decimal_places=4, help_text="The job's pool's current price."
    )
