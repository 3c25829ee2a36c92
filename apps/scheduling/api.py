"""What-if replays over REST: platform admins start one and poll it (a worker runs it)."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from apps.clusters.models import Node, ResourcePool
from apps.core.permissions import IsPlatformAdmin as PlatformAdminOnly
from apps.core.viewsets import request_user
from apps.quotas.services import pool_capacity
from apps.scheduling import whatif
from apps.scheduling.models import WhatIfRun
from apps.scheduling.sim.scenario import MAX_LOAD
from apps.tenancy.models import Tenant


class IsPlatformAdmin(PlatformAdminOnly):
    """A replay reads every tenant's jobs, so only platform admins run or read one."""

    message = gettext_lazy(
        "Only platform admins run what-if replays (they read every tenant's jobs)."
    )


class WaitSerializer(serializers.Serializer[dict[str, Any]]):
    count = serializers.IntegerField()
    mean_s = serializers.FloatField()
    p95_s = serializers.FloatField()
    p99_s = serializers.FloatField()


class TenantUseSerializer(serializers.Serializer[dict[str, Any]]):
    tenant = serializers.CharField()
    guarantee_gpus = serializers.FloatField(help_text="Its guarantees, summed over pools.")
    mean_used_gpus = serializers.FloatField(help_text="Devices it held, mean over the window.")
    short_when_demanding = serializers.FloatField(
        help_text="Share of the time it had jobs waiting that it held under 90% of its "
        "guarantee, 0..1."
    )


class SamplePointSerializer(serializers.Serializer[dict[str, Any]]):
    t_h = serializers.FloatField(help_text="Hours from the window's start.")
    allocation = serializers.FloatField(help_text="Share of accelerators allocated, 0..1.")
    waiting = serializers.IntegerField(help_text="Jobs waiting to start.")


class PolicyResultSerializer(serializers.Serializer[dict[str, Any]]):
    policy = serializers.CharField()
    title = serializers.CharField(help_text="The policy as the benchmarks name it.")
    allocation = serializers.FloatField(
        help_text="Mean share of the accelerators in service allocated, 0..1."
    )
    mean_free_gpus = serializers.FloatField()
    mean_fragmented_gpus = serializers.FloatField()
    completed = serializers.IntegerField()
    one_leaf = serializers.ListField(
        child=serializers.IntegerField(),
        help_text="Multi-node jobs that fit a leaf: [in one, all].",
    )
    one_su = serializers.ListField(
        child=serializers.IntegerField(), help_text="Multi-node jobs that fit an SU: [in one, all]."
    )
    keeps_quotas = serializers.BooleanField(
        required=False,
        help_text="Whether the policy kept tenants to their guarantees and borrowing limits "
        "(ours and standard on a cluster with quotas; the baselines are modelled without).",
    )
    mean_allocated_gpus = serializers.FloatField(
        required=False,
        help_text="GPUs allocated, mean over the window (the allocation share is of the nodes "
        "in service, which outages change).",
    )
    preemptions = serializers.IntegerField()
    preempted_gpu_hours = serializers.FloatField()
    late_jobs = serializers.IntegerField(help_text="Jobs that waited past their maximum wait.")
    not_started = serializers.IntegerField(
        required=False, help_text="Replayed jobs that had not started when the window ended."
    )
    large_longest_wait_s = serializers.FloatField()
    large_over_2x = serializers.IntegerField(
        help_text="Jobs of >= 256 GPUs that waited over 2x their fair-share expectation."
    )
    large_checked = serializers.IntegerField()
    # Not required: runs stored before tenant use was measured do not have it.
    tenants = TenantUseSerializer(many=True, required=False, help_text="Each tenant's use.")
    waits = serializers.DictField(child=WaitSerializer(), help_text="By job size class.")
    series = SamplePointSerializer(
        many=True, required=False, help_text="Allocation and queue over the window."
    )
    cycles = serializers.IntegerField()
    cpu_s = serializers.FloatField()


class CapacityChangeSerializer(serializers.Serializer[dict[str, Any]]):
    pool = serializers.CharField(help_text="The pool, as cluster/pool.")
    nodes = serializers.IntegerField(help_text="Nodes added (> 0) or removed (< 0).")
    accelerators = serializers.IntegerField(help_text="Accelerators added or removed.")


class QuotaChangeResultSerializer(serializers.Serializer[dict[str, Any]]):
    tenant = serializers.CharField(help_text="The tenant's slug.")
    pool = serializers.CharField(help_text="The pool, as cluster/pool.")
    accelerator_model = serializers.CharField()
    guarantee = serializers.IntegerField()
    borrow_limit = serializers.IntegerField()
    was_guarantee = serializers.IntegerField(
        allow_null=True, help_text="Its guarantee on the real cluster; null: it had no quota."
    )
    was_borrow_limit = serializers.IntegerField(allow_null=True)


class LoadChangeSerializer(serializers.Serializer[dict[str, Any]]):
    factor = serializers.FloatField(help_text="Times the window's arriving work.")
    jobs_added = serializers.IntegerField(help_text="Copies of arriving jobs added.")
    jobs_dropped = serializers.IntegerField(help_text="Arriving jobs left out.")


class OutageSpanSerializer(serializers.Serializer[dict[str, Any]]):
    start_h = serializers.FloatField(help_text="Hours from the window's start.")
    end_h = serializers.FloatField()
    drained = serializers.BooleanField(help_text="Whether it stopped the node's running work.")


class MaintenanceResultSerializer(serializers.Serializer[dict[str, Any]]):
    pool = serializers.CharField(help_text="The pool, as cluster/pool.")
    nodes = serializers.IntegerField()
    start_h = serializers.FloatField(help_text="Hours from the window's start.")
    hours = serializers.FloatField()
    drain = serializers.BooleanField()


class FaultsSerializer(serializers.Serializer[dict[str, Any]]):
    outages = serializers.IntegerField(
        help_text="Node outages in the window: a node cordoned by a health incident until it "
        "closed (a node's overlapping incidents are one outage)."
    )
    drained = serializers.IntegerField(help_text="Outages that stopped the node's running work.")
    node_hours = serializers.FloatField(help_text="Node-hours out of service in the window.")
    replayed = serializers.BooleanField(
        help_text="Whether the replay had them; false: every node healthy throughout."
    )
    spans = OutageSpanSerializer(
        many=True,
        required=False,
        help_text="Each outage, by start (the first 500), for the chart.",
    )


class WhatIfResultSerializer(serializers.Serializer[dict[str, Any]]):
    live_policy = serializers.CharField(
        required=False,
        allow_null=True,
        help_text="The policy here that the product's scheduler ran when the replay ran "
        "(ZS_SCHEDULER_POLICY): standard or ours.",
    )
    jobs = serializers.IntegerField(help_text="Jobs replayed.")
    never_started = serializers.IntegerField(help_text="Jobs left out: they never started.")
    nodes = serializers.IntegerField(help_text="Nodes of the replayed cluster.")
    accelerators = serializers.IntegerField(help_text="Accelerators of the replayed cluster.")
    capacity_changes = CapacityChangeSerializer(
        many=True,
        required=False,
        help_text="Pools grown or shrunk for the replay; the real measures are of the cluster "
        "as it was.",
    )
    quota_changes = QuotaChangeResultSerializer(
        many=True, required=False, help_text="Quotas set for the replay."
    )
    load_change = LoadChangeSerializer(
        required=False,
        allow_null=True,
        help_text="More or less work arriving in the replay; null: as it was.",
    )
    # Not required: runs stored before outages were replayed do not have it.
    faults = FaultsSerializer(required=False, help_text="The window's node outages.")
    maintenance = MaintenanceResultSerializer(
        many=True, required=False, help_text="Maintenance windows added to the replay."
    )
    actual_waits = serializers.DictField(
        child=WaitSerializer(), help_text="Submission to admission as it happened, by size class."
    )
    # Not required: runs stored before these were measured do not have them.
    actual_allocation = serializers.FloatField(
        required=False,
        help_text="Mean share of the accelerators that the replayed jobs really held, 0..1.",
    )
    actual_late_jobs = serializers.IntegerField(
        required=False,
        help_text="Replayed jobs that really waited past their maximum wait.",
    )
    actual_tenant_use = serializers.DictField(
        child=serializers.FloatField(),
        required=False,
        help_text="Devices each tenant's replayed jobs really held, mean over the window.",
    )
    actual_series = SamplePointSerializer(
        many=True,
        required=False,
        help_text="Allocation and queue as they really were, at the replay's sample times.",
    )
    policies = PolicyResultSerializer(many=True)


MAX_NODE_CHANGE = 10_000


class NodeChangeSerializer(serializers.Serializer[dict[str, Any]]):
    pool = serializers.PrimaryKeyRelatedField(queryset=ResourcePool.objects.all())
    nodes = serializers.IntegerField(
        min_value=-MAX_NODE_CHANGE,
        max_value=MAX_NODE_CHANGE,
        help_text="Nodes to add (> 0) or remove (< 0); added ones copy the pool's most "
        "common node.",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        pool: ResourcePool = attrs["pool"]
        has = Node.objects.filter(pool=pool, is_spare=False).count()
        if attrs["nodes"] == 0:
            raise serializers.ValidationError({"nodes": _("Add or remove at least one node.")})
        if attrs["nodes"] > 0 and has == 0:
            raise serializers.ValidationError(
                {"pool": _("This pool has no node whose shape new ones could copy.")}
            )
        if -attrs["nodes"] > has:
            raise serializers.ValidationError(
                {
                    "nodes": _("This pool has {has} nodes; it cannot lose {lose}.").format(
                        has=has, lose=-attrs["nodes"]
                    )
                }
            )
        return attrs

    def to_representation(self, instance: dict[str, Any]) -> dict[str, Any]:
        return {"pool": instance["pool"], "nodes": instance["nodes"]}


class MaintenanceSerializer(serializers.Serializer[dict[str, Any]]):
    pool = serializers.PrimaryKeyRelatedField(queryset=ResourcePool.objects.all())
    nodes = serializers.IntegerField(
        min_value=1,
        max_value=MAX_NODE_CHANGE,
        help_text="Servers out of service; a pool's windows take its servers in order, the "
        "first window the first ones.",
    )
    start_h = serializers.FloatField(
        min_value=0, max_value=whatif.MAX_HOURS, help_text="Hours into the replayed window."
    )
    hours = serializers.FloatField(
        min_value=0.1, max_value=whatif.MAX_HOURS, help_text="How long the servers are out."
    )
    drain = serializers.BooleanField(
        default=True,
        help_text="Stop their running work at the start (false: it runs on, and the servers "
        "take no new work).",
    )

    def to_representation(self, instance: dict[str, Any]) -> dict[str, Any]:
        return dict(instance)


class QuotaChangeSerializer(serializers.Serializer[dict[str, Any]]):
    tenant = serializers.SlugRelatedField(slug_field="slug", queryset=Tenant.objects.all())
    pool = serializers.PrimaryKeyRelatedField(queryset=ResourcePool.objects.all())
    accelerator_model = serializers.CharField(max_length=32)
    guarantee = serializers.IntegerField(min_value=0, max_value=10_000_000)
    borrow_limit = serializers.IntegerField(min_value=0, max_value=10_000_000)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        pool: ResourcePool = attrs["pool"]
        model = attrs["accelerator_model"]
        if pool_capacity(pool, model) == 0:  # the quota console's check
            raise serializers.ValidationError(
                {
                    "accelerator_model": _("Pool {pool} has no {model} devices.").format(
                        pool=pool.name, model=model
                    )
                }
            )
        return attrs

    def to_representation(self, instance: dict[str, Any]) -> dict[str, Any]:
        return dict(instance)


class WhatIfRunSerializer(serializers.ModelSerializer[WhatIfRun]):
    hours = serializers.FloatField(
        min_value=0.1, max_value=whatif.MAX_HOURS, default=168.0, help_text="Window to replay."
    )
    policies = serializers.ListField(
        child=serializers.ChoiceField(choices=whatif.POLICIES),
        min_length=1,
        default=list(whatif.POLICIES),
    )
    seed = serializers.IntegerField(min_value=0, max_value=2**31 - 1, default=0)
    node_changes = NodeChangeSerializer(
        many=True,
        default=list,
        help_text="Pools to grow or shrink for the replay (none: the cluster as it is).",
    )
    quota_changes = QuotaChangeSerializer(
        many=True,
        default=list,
        help_text="Quotas to set for the replay (a tenant x pool x model at most once).",
    )
    load_factor = serializers.FloatField(
        min_value=0.1,
        max_value=MAX_LOAD,
        default=1.0,
        help_text="Times the window's arriving work to replay: 1.3 is 30% more jobs in the "
        "same pattern, 0.5 half of them (1: as it was).",
    )
    replay_faults = serializers.BooleanField(
        default=True,
        help_text="Replay the window's node outages (nodes cordoned or drained by health "
        "incidents); false asks what the cluster would have done with every node healthy.",
    )
    maintenance = MaintenanceSerializer(
        many=True,
        default=list,
        help_text="Maintenance windows to add to the replay (the question: when should we "
        "take these servers down?).",
    )
    result = WhatIfResultSerializer(read_only=True, allow_null=True)

    class Meta:
        model = WhatIfRun
        fields = [
            "id",
            "hours",
            "policies",
            "seed",
            "node_changes",
            "quota_changes",
            "load_factor",
            "replay_faults",
            "maintenance",
            "state",
            "progress",
            "message",
            "window_start",
            "window_end",
            "result",
            "created_at",
            "finished_at",
        ]
        read_only_fields = [
            "id",
            "state",
            "progress",
            "message",
            "window_start",
            "window_end",
            "created_at",
            "finished_at",
        ]

    def validate_policies(self, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise serializers.ValidationError(_("Each policy at most once."))
        return value

    def validate_node_changes(self, value: list[dict[str, Any]]) -> list[dict[str, Any]]:
        pools = [c["pool"].pk for c in value]
        if len(set(pools)) != len(pools):
            raise serializers.ValidationError(_("Each pool at most once."))
        return value

    def validate_quota_changes(self, value: list[dict[str, Any]]) -> list[dict[str, Any]]:
        keys = [(c["tenant"].slug, c["pool"].pk, c["accelerator_model"]) for c in value]
        if len(set(keys)) != len(keys):
            raise serializers.ValidationError(
                _("Each tenant's quota of a model in a pool at most once.")
            )
        return value

    def validate_maintenance(self, value: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if len(value) > MAX_MAINTENANCE:
            raise serializers.ValidationError(
                _("At most {count} windows.").format(count=MAX_MAINTENANCE)
            )
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        windows = stored_maintenance(attrs.get("maintenance", []))
        late = [w for w in windows if w["start_h"] >= attrs.get("hours", 168.0)]
        if late:
            raise serializers.ValidationError(
                {"maintenance": _("A window must start inside the replayed hours.")}
            )
        problems = whatif.scenario_problems(
            stored_node_changes(attrs.get("node_changes", [])),
            stored_quota_changes(attrs.get("quota_changes", [])),
            windows,
        )
        if problems:
            raise serializers.ValidationError(problems)
        return attrs


def stored_node_changes(changes: list[dict[str, Any]]) -> list[dict[str, int]]:
    return [{"pool": c["pool"].pk, "nodes": c["nodes"]} for c in changes]


MAX_MAINTENANCE = 20


def stored_maintenance(windows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"pool": w["pool"].pk, "nodes": w["nodes"], "start_h": w["start_h"],
         "hours": w["hours"], "drain": w["drain"]}
        for w in windows
    ]  # fmt: skip


def stored_quota_changes(changes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "tenant": c["tenant"].slug,
            "pool": c["pool"].pk,
            "accelerator_model": c["accelerator_model"],
            "guarantee": c["guarantee"],
            "borrow_limit": c["borrow_limit"],
        }
        for c in changes
    ]


class WhatIfRunViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    viewsets.GenericViewSet[WhatIfRun],
):
    """Replays of the cluster's recent history under other scheduling policies."""

    permission_classes = [IsPlatformAdmin]
    serializer_class = WhatIfRunSerializer
    queryset = WhatIfRun.objects.all()

    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        run = whatif.request_run(
            hours=data["hours"], policies=data["policies"], seed=data["seed"],
            actor=request_user(request),
            node_changes=stored_node_changes(data["node_changes"]),
            quota_changes=stored_quota_changes(data["quota_changes"]),
            load_factor=data["load_factor"],
            replay_faults=data["replay_faults"],
            maintenance=stored_maintenance(data["maintenance"]),
        )  # fmt: skip
        return Response(WhatIfRunSerializer(run).data, status=status.HTTP_201_CREATED)
