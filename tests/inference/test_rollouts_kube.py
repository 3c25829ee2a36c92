"""A rollout on a Kubernetes cluster goes through the outbox: the control loop holds the
surge room and asks for a rollout row, the relay labels the surge nodes and patches the pod
template, the reconciler follows the Deployment to its end, and the relay then gives the
surge room back where the pods left it. The cluster here is the simulated backend (the
Kubernetes backend's calls are tested over HTTP in tests/kube/test_rollout_http.py)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from apps.accounting.models import UsageSegment
from apps.accounts.models import User
from apps.clusters.backends.simulated import SimulatedBackend
from apps.clusters.backends.spec import WorkloadStatus
from apps.clusters.models import Cluster, ClusterKind
from apps.inference import rollouts, services
from apps.inference.models import InferenceService, RolloutState, ServiceRevision
from apps.jobs import relay, workload
from apps.jobs.models import Allocation, Job, JobEvent, OutboxAction, OutboxEntry, OutboxState
from apps.quotas.models import Quota
from apps.tenancy.models import Role
from tests.conftest import World
from tests.factories import make_node, make_pool, make_running

Client = Callable[[User | None], APIClient]


class PodsBackend(SimulatedBackend):
    """The simulated cluster, told where the service's pods run (its replicas are counts)."""

    def __init__(self, pods: dict[str, int]) -> None:
        super().__init__(startup_s=0.0)
        self.pods = pods

    def service_pods(self, job_id: int, tenant: str) -> dict[str, int]:
        return dict(self.pods)


@pytest.fixture
def kube_service(world: World, monkeypatch: pytest.MonkeyPatch) -> InferenceService:
    """Two 4-GPU replicas filling node n-a; n-b is free. No traffic reading (no Prometheus):
    a rollout does not need one."""
    monkeypatch.setattr(services, "kube_traffic", lambda _service: None)
    pool = make_pool(cluster=Cluster.objects.create(name="k", kind=ClusterKind.KUBERNETES))
    first = make_node(pool=pool, name="n-a")
    make_node(pool=pool, name="n-b")
    Quota.objects.create(tenant=world.tenant_a, pool=pool, accelerator_model="A800", guarantee=12)
    service = services.create_service(
        tenant=world.tenant_a, owner=world.user("a", Role.MEMBER), name="chat", pool=pool,
        settings={"model_uri": "hf://org/v1", "min_replicas": 2, "max_replicas": 2,
                  "accelerators": 4},
    )  # fmt: skip
    make_running(service.job, node=first)
    services.autoscale_tick()
    service.refresh_from_db()
    assert service.serving_revision == 1
    return service


def _rollout_row(service: InferenceService) -> OutboxEntry | None:
    return OutboxEntry.objects.filter(job=service.job_id, action=OutboxAction.ROLLOUT).first()


def _start(service: InferenceService, client_for: Client, world: World) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    url = f"/api/v1/tenants/tenant-a/inference/services/{service.pk}/"
    assert client.patch(url, {"model_uri": "hf://org/v2"}, format="json").status_code == 200
    services.autoscale_tick()


def _cluster(service: InferenceService, pods: dict[str, int]) -> PodsBackend:
    backend = PodsBackend(pods)
    backend.apply(workload.build(Job.objects.get(pk=service.job_id)))
    return backend


def test_the_relay_patches_the_template_and_gives_surge_room_back_where_pods_left_it(
    world: World, client_for: Client, kube_service: InferenceService
) -> None:
    service = kube_service
    backend = _cluster(service, {"n-a": 2})
    _start(service, client_for, world)
    surge = Allocation.objects.get(job=service.job_id, surge=True)
    assert surge.node.name == "n-b"  # n-a is full: the surge room is on the other node
    row = _rollout_row(service)
    assert row is not None and row.state == OutboxState.PENDING
    relay.relay(backend=backend)
    assert backend.revisions[service.job_id] == 2  # the pod template now says revision 2
    assert set(backend.serve_nodes[service.job_id]) == {"n-a", "n-b"}  # surge node labelled
    assert _rollout_row(service).state == OutboxState.DONE  # type: ignore[union-attr]

    # The Deployment rolls: one pod on the new revision so far.
    job = Job.objects.get(pk=service.job_id)
    status = WorkloadStatus(job_id=job.pk, kind="inference", namespace="zs-tenant-a",
                            name="x", phase="running", revision=2, replicas_updated=1,
                            rolled_out=False)  # fmt: skip
    rollouts.observe(job, status)
    service.refresh_from_db()
    assert (service.rollout_state, service.updated_replicas) == (RolloutState.ROLLING, 1)

    # Done: the new pods run on n-a and n-b; one of n-a's slots is empty now.
    backend.pods = {"n-a": 1, "n-b": 1}
    relay.reconcile(backend=backend)  # the simulated Deployment reports revision 2, rolled out
    service.refresh_from_db()
    assert service.rollout_state == RolloutState.FINISHING
    relay.relay(backend=backend)
    service.refresh_from_db()
    assert (service.rollout_state, service.serving_revision) == (RolloutState.IDLE, 2)
    held = sorted(Allocation.objects.filter(job=job).values_list("node__name", "surge"))
    assert held == [("n-a", False), ("n-b", False)]  # the rows say where the pods are
    assert UsageSegment.objects.filter(job=job, reason="RolloutDone").count() == 1
    assert set(backend.serve_nodes[job.pk]) == {"n-a", "n-b"}
    assert JobEvent.objects.filter(job=job, reason="RolloutComplete").count() == 1


def test_finishing_waits_while_every_slot_still_has_a_pod(
    world: World, client_for: Client, kube_service: InferenceService
) -> None:
    service = kube_service
    backend = _cluster(service, {"n-a": 2, "n-b": 1})  # an old pod is still terminating
    _start(service, client_for, world)
    relay.relay(backend=backend)
    relay.reconcile(backend=backend)
    relay.relay(backend=backend)
    row = _rollout_row(service)
    assert (
        row is not None
        and row.state == OutboxState.PENDING
        and "still holds pods" in row.last_error
    )
    assert Allocation.objects.filter(job=service.job_id, surge=True).count() == 1
    backend.pods = {"n-b": 1, "n-a": 1}
    OutboxEntry.objects.filter(pk=row.pk).update(available_at=timezone.now() - timedelta(seconds=1))
    relay.relay(backend=backend)
    assert not Allocation.objects.filter(job=service.job_id, surge=True).exists()
    service.refresh_from_db()
    assert service.rollout_state == RolloutState.IDLE


def test_a_failed_rollout_rolls_back_once(
    world: World, client_for: Client, kube_service: InferenceService
) -> None:
    service = kube_service
    backend = _cluster(service, {"n-a": 2})
    _start(service, client_for, world)
    relay.relay(backend=backend)
    job = Job.objects.get(pk=service.job_id)
    failed = WorkloadStatus(job_id=job.pk, kind="inference", namespace="zs-tenant-a", name="x",
                            phase="running", revision=2, rolled_out=False, rollout_failed=True,
                            message="ReplicaSet has timed out progressing.")  # fmt: skip
    rollouts.observe(job, failed)
    service.refresh_from_db()
    assert (service.revision, service.model_uri, service.rollout_state) == (
        3, "hf://org/v1", RolloutState.ROLLING
    )  # fmt: skip
    second = ServiceRevision.objects.get(service=service, number=2)
    assert (second.state, second.message) == ("failed", "ReplicaSet has timed out progressing.")
    third = ServiceRevision.objects.get(service=service, number=3)
    assert (third.rollback_of, third.created_by) == (1, None)
    assert "automatic rollback" in third.message
    assert _rollout_row(service).state == OutboxState.PENDING  # type: ignore[union-attr]
    reasons = list(JobEvent.objects.filter(job=job, reason__startswith="Rollout")
                   .order_by("id").values_list("reason", flat=True))  # fmt: skip
    assert reasons == ["RolloutStarted", "RolloutFailed", "RolloutStarted"]
    # The automatic rollback fails too: no third try, the service stays as it is.
    relay.relay(backend=backend)
    rollouts.observe(job, WorkloadStatus(**{**failed.__dict__, "revision": 3}))
    service.refresh_from_db()
    assert (service.revision, service.rollout_state) == (3, RolloutState.FAILED)
    assert ServiceRevision.objects.get(service=service, number=3).state == "failed"
    services.autoscale_tick()  # a failed revision is not taken for one the service started on
    service.refresh_from_db()
    assert (service.serving_revision, service.rollout_state) == (1, RolloutState.FAILED)
    assert ServiceRevision.objects.get(service=service, number=3).state == "failed"


def test_a_probe_that_never_answers_rolls_back_to_the_probes_that_did(
    world: World, client_for: Client, kube_service: InferenceService
) -> None:
    service = kube_service
    backend = _cluster(service, {"n-a": 2})
    client = client_for(world.user("a", Role.MEMBER))
    url = f"/api/v1/tenants/tenant-a/inference/services/{service.pk}/"
    answer = client.patch(url, {"readiness_path": "/v2/ready"}, format="json")
    assert (answer.status_code, answer.data["revision"]) == (200, 2)
    services.autoscale_tick()
    relay.relay(backend=backend)
    job = Job.objects.get(pk=service.job_id)
    rendered = workload.build(job).inference
    assert (rendered.readiness_path, rendered.revision) == ("/v2/ready", 2)  # type: ignore[union-attr]
    rollouts.observe(
        job,
        WorkloadStatus(
            job_id=job.pk,
            kind="inference",
            namespace="zs-tenant-a",
            name="x",
            phase="running",
            revision=2,
            rolled_out=False,
            rollout_failed=True,
            message="ReplicaSet has timed out progressing.",
        ),
    )
    service.refresh_from_db()
    assert (service.revision, service.readiness_path, service.rollout_state) == (
        3, "/health", RolloutState.ROLLING
    )  # fmt: skip
    third = ServiceRevision.objects.get(service=service, number=3)
    assert (third.rollback_of, third.settings["readiness_path"]) == (1, "/health")
    rendered = workload.build(Job.objects.get(pk=job.pk)).inference
    assert (rendered.readiness_path, rendered.revision) == ("/health", 3)  # type: ignore[union-attr]
