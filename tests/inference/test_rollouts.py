"""Rolling updates of inference services: a new runtime image, model, port or probe is a new
revision, rolled out replica by replica with surge room admitted against the quota, followed to its
end (or rolled back), through the API and the control loop."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime, timedelta

import pytest
from django.db import connection
from django.utils import timezone
from rest_framework.test import APIClient

from apps.accounting.models import UsageSegment
from apps.accounts.models import User
from apps.clusters.models import Cluster, ClusterKind, ResourcePool
from apps.inference import services
from apps.inference.models import InferenceService, RevisionState, RolloutState, ServiceRevision
from apps.jobs import workload
from apps.jobs.models import Allocation, Job, JobEvent, JobState
from apps.quotas.models import Quota
from apps.scheduling.replicas import admit_surge
from apps.tenancy.models import Role
from tests.conftest import World
from tests.factories import make_node, make_pool, make_running

Client = Callable[[User | None], APIClient]


def _pool(kind: str = ClusterKind.SIMULATED) -> ResourcePool:
    pool = make_pool(cluster=Cluster.objects.create(name=f"c-{kind}", kind=kind))
    make_node(pool=pool)  # 8 x A800
    return pool


def _service(world: World, pool: ResourcePool, *, running: bool = True, **settings: object
             ) -> InferenceService:  # fmt: skip
    user = world.user("a", Role.MEMBER)
    values = {"model_uri": "hf://org/model-v1", "min_replicas": 2, "max_replicas": 2,
              "target_value": 8.0, "cold_start_s": 5, **settings}  # fmt: skip
    name = str(values.pop("name", "chat"))
    service = services.create_service(
        tenant=world.tenant_a, owner=user, name=name, pool=pool, settings=values
    )
    if running:
        make_running(service.job)
        _tick(1)  # the service's first start: it serves revision 1
    service.refresh_from_db()
    return service


def _url(service: InferenceService, tail: str = "") -> str:
    return f"/api/v1/tenants/tenant-a/inference/services/{service.pk}/{tail}"


def _tick(seconds: int, start: datetime | None = None) -> datetime:
    start = start or timezone.now()
    for second in range(seconds):
        services.autoscale_tick(now=start + timedelta(seconds=second))
    return start + timedelta(seconds=seconds)


def _reasons(service: InferenceService) -> list[str]:
    return list(
        JobEvent.objects.filter(job_id=service.job_id, reason__startswith="Rollout")
        .order_by("id")
        .values_list("reason", flat=True)
    )


def test_a_new_model_rolls_out_with_a_surge_replica_and_gives_its_room_back(
    world: World, client_for: Client
) -> None:
    pool = _pool()
    service = _service(world, pool)
    Quota.objects.create(tenant=world.tenant_a, pool=pool, accelerator_model="A800", guarantee=4)
    client = client_for(world.user("a", Role.MEMBER))
    answer = client.patch(_url(service), {"model_uri": "hf://org/model-v2"}, format="json")
    assert answer.status_code == 200, answer.data
    assert (answer.data["revision"], answer.data["serving_revision"]) == (2, 1)
    assert answer.data["rollout_state"] == "rolling"
    job = Job.objects.get(pk=service.job_id)
    # Any later attempt starts on the new revision too.
    assert job.spec["args"] == ["--model", "hf://org/model-v2", "--port", "8000"]
    assert job.spec["env"]["ZS_MODEL_URI"] == "hf://org/model-v2"
    assert workload.build(job).inference.revision == 2  # type: ignore[union-attr]

    now = _tick(1)
    surge = Allocation.objects.filter(job=job, surge=True)
    assert surge.count() == 1 and surge.get().extra  # admitted against the quota, billed
    devices = [d for a in Allocation.objects.filter(job=job) for d in a.devices]
    assert len(devices) == len(set(devices)) == 3
    service.refresh_from_db()
    assert service.rollout_state == RolloutState.ROLLING
    assert service.updated_replicas == 1  # the surge replica loads the new model
    assert service.ready_replicas >= 2  # the old ones serve meanwhile

    _tick(30, now)
    service.refresh_from_db()
    assert service.rollout_state == RolloutState.IDLE
    assert (service.revision, service.serving_revision) == (2, 2)
    assert service.ready_replicas == 2
    assert not Allocation.objects.filter(job=job, surge=True).exists()
    assert Allocation.objects.filter(job=job).count() == 2
    assert UsageSegment.objects.filter(job=job, reason="RolloutDone").count() == 1
    states = dict(ServiceRevision.objects.filter(service=service).values_list("number", "state"))
    assert states == {1: RevisionState.SUPERSEDED, 2: RevisionState.COMPLETE}
    assert _reasons(service) == ["RolloutStarted", "RolloutComplete"]
    listed = client.get(_url(service, "revisions/")).data["results"]
    assert [(r["number"], r["state"], r["created_by"]) for r in listed] == [
        (2, "complete", "a-member"), (1, "superseded", "a-member")
    ]  # fmt: skip


def test_without_room_for_a_surge_replica_the_rollout_waits_then_replaces_in_place(
    world: World, client_for: Client
) -> None:
    pool = _pool()
    service = _service(world, pool)
    # The tenant's quota is exactly what the service runs: no room for a surge replica.
    Quota.objects.create(tenant=world.tenant_a, pool=pool, accelerator_model="A800", guarantee=2)
    client = client_for(world.user("a", Role.MEMBER))
    assert client.patch(_url(service), {"runtime_image": "vllm/vllm-openai:v0.7.0"},
                        format="json").status_code == 200  # fmt: skip
    now = _tick(3)
    service.refresh_from_db()
    assert service.rollout_state == RolloutState.WAITING
    assert "quota" in service.rollout_reason.lower()
    assert service.rollout_detail  # the same as phrases, for the dashboard
    assert _reasons(service) == ["RolloutStarted", "RolloutWaiting"]
    shown = client.get(_url(service)).data
    assert (shown["rollout_state"], shown["updated_replicas"]) == ("waiting", 0)

    # One replica may be missing: the rollout goes on without surge room.
    assert client.patch(_url(service), {"max_unavailable": 1}, format="json").status_code == 200
    for second in range(40):
        _tick(1, now + timedelta(seconds=second))
        assert Allocation.objects.filter(job=service.job_id).count() == 2  # never beyond quota
    service.refresh_from_db()
    assert (service.rollout_state, service.serving_revision) == (RolloutState.IDLE, 2)
    assert service.runtime_image == "vllm/vllm-openai:v0.7.0"
    assert _reasons(service) == ["RolloutStarted", "RolloutWaiting", "RolloutComplete"]


def test_rollback_serves_an_earlier_revision_again_as_a_new_one(
    world: World, client_for: Client
) -> None:
    pool = _pool()
    service = _service(world, pool)
    Quota.objects.create(tenant=world.tenant_a, pool=pool, accelerator_model="A800", guarantee=4)
    client = client_for(world.user("a", Role.MEMBER))
    client.patch(_url(service), {"model_uri": "hf://org/model-v2"}, format="json")
    _tick(30)
    answer = client.post(_url(service, "rollback/"), {"revision": 1}, format="json")
    assert answer.status_code == 200, answer.data
    assert (answer.data["revision"], answer.data["model_uri"]) == (3, "hf://org/model-v1")
    third = ServiceRevision.objects.get(service=service, number=3)
    assert (third.rollback_of, third.state, third.created_by) == (
        1,
        "rolling",
        world.user("a", Role.MEMBER),
    )
    events = JobEvent.objects.filter(job_id=service.job_id, reason="RolloutStarted")
    assert events.last().message == (  # type: ignore[union-attr]
        "rolling back to revision 1 as revision 3: "
        "image vllm/vllm-openai:v0.6.3, model hf://org/model-v1"
    )
    for revision, why in [
        (3, "earlier revision than the current one (3)"),
        (99, "earlier revision than the current one"),
        (1, "already runs that revision's image, model, port and probes"),
    ]:
        refused = client.post(_url(service, "rollback/"), {"revision": revision}, format="json")
        assert refused.status_code == 400
        assert why in str(refused.data["errors"]["revision"][0])
    assert client.post(_url(service, "rollback/"), {}, format="json").status_code == 400
    # Another tenant cannot see the service, its revisions or roll it back.
    other = client_for(world.user("b", Role.MEMBER))
    other_url = f"/api/v1/tenants/tenant-a/inference/services/{service.pk}/"
    assert other.get(other_url + "revisions/").status_code == 404
    assert other.post(other_url + "rollback/", {"revision": 2}, format="json").status_code == 404
    assert ServiceRevision.objects.filter(service=service).count() == 3


def test_a_viewer_cannot_roll_back(world: World, client_for: Client) -> None:
    service = _service(world, _pool())
    client = client_for(world.user("a", Role.VIEWER))
    assert client.patch(_url(service), {"model_uri": "hf://x/y"}, format="json").status_code == 403
    assert (
        client.post(_url(service, "rollback/"), {"revision": 1}, format="json").status_code == 403
    )
    assert client.get(_url(service, "revisions/")).status_code == 200


def test_a_revision_made_before_the_service_runs_takes_effect_when_it_starts(
    world: World, client_for: Client
) -> None:
    pool = _pool()
    service = _service(world, pool, running=False)
    client = client_for(world.user("a", Role.MEMBER))
    answer = client.patch(_url(service), {"model_uri": "hf://org/model-v2"}, format="json")
    assert answer.status_code == 200
    assert answer.data["rollout_state"] == ""  # nothing runs yet: no rollout
    assert ServiceRevision.objects.get(service=service, number=2).state == "pending"
    assert _reasons(service) == ["RolloutStarted", "RolloutPending"]
    make_running(Job.objects.get(pk=service.job_id))
    _tick(1)
    service.refresh_from_db()
    assert (service.serving_revision, service.rollout_state) == (2, "")
    assert ServiceRevision.objects.get(service=service, number=2).state == "complete"
    assert not Allocation.objects.filter(job=service.job_id, surge=True).exists()


def test_an_ended_service_takes_no_new_revision(world: World, client_for: Client) -> None:
    service = _service(world, _pool())
    Job.objects.filter(pk=service.job_id).update(state=JobState.CANCELLED)
    client = client_for(world.user("a", Role.MEMBER))
    answer = client.patch(_url(service), {"model_uri": "hf://org/model-v2"}, format="json")
    assert answer.status_code == 400, answer.data
    assert "create a new service" in str(answer.data["errors"]["model_uri"][0])
    refused = client.post(_url(service, "rollback/"), {"revision": 1}, format="json")
    assert refused.status_code == 400
    assert ServiceRevision.objects.filter(service=service).count() == 1


def test_settings_that_are_not_the_revision_do_not_roll(world: World, client_for: Client) -> None:
    service = _service(world, _pool())
    client = client_for(world.user("a", Role.MEMBER))
    answer = client.patch(
        _url(service), {"target_value": 12.0, "model_uri": "hf://org/model-v1"}, format="json"
    )
    assert answer.status_code == 200
    assert (answer.data["revision"], answer.data["rollout_state"]) == (1, "")
    assert _reasons(service) == []


@pytest.mark.django_db(transaction=True)
def test_concurrent_model_changes_make_one_revision_each() -> None:
    assert connection.vendor == "postgresql", "races are tested on PostgreSQL"
    world = World()
    service = _service(world, _pool())
    user = world.user("a", Role.MEMBER)
    models = [f"hf://org/model-{i}" for i in range(4)]
    barrier = threading.Barrier(len(models))
    codes: list[int] = []

    def patch(model: str) -> None:
        try:
            client = APIClient()
            client.force_authenticate(user)
            barrier.wait()
            codes.append(
                client.patch(_url(service), {"model_uri": model}, format="json").status_code
            )
        finally:
            connection.close()

    threads = [threading.Thread(target=patch, args=(m,)) for m in models]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert codes == [200] * 4
    numbers = sorted(
        ServiceRevision.objects.filter(service=service).values_list("number", flat=True)
    )
    assert numbers == [1, 2, 3, 4, 5]
    service.refresh_from_db()
    newest = ServiceRevision.objects.get(service=service, number=5)
    # The service, its job's spec and its newest revision agree on what is served.
    assert service.revision == 5 and service.model_uri == newest.model_uri
    assert Job.objects.get(pk=service.job_id).spec["env"]["ZS_MODEL_URI"] == newest.model_uri
    assert ServiceRevision.objects.filter(service=service, state="rolling").count() == 1


@pytest.mark.django_db(transaction=True)
def test_concurrent_surge_requests_never_exceed_the_quota() -> None:
    assert connection.vendor == "postgresql", "races are tested on PostgreSQL"
    world = World()
    pool = _pool()
    rolling = [
        _service(world, pool, min_replicas=1, max_replicas=1, name=f"s{i}") for i in range(4)
    ]
    # Four services of one replica each hold 4 devices; the quota leaves room for 2 surges.
    Quota.objects.create(tenant=world.tenant_a, pool=pool, accelerator_model="A800", guarantee=6)
    barrier = threading.Barrier(len(rolling))
    held: list[int] = []

    def ask(service: InferenceService) -> None:
        try:
            barrier.wait()
            held.append(admit_surge(service.job, 1, timezone.now()).replicas)
        finally:
            connection.close()

    threads = [threading.Thread(target=ask, args=(s,)) for s in rolling]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(held) == [0, 0, 1, 1]
    assert Allocation.objects.filter(job__tenant=world.tenant_a, surge=True).count() == 2
    devices = [d for a in Allocation.objects.all() for d in a.devices]
    assert len(devices) == len(set(devices)) == 6


def test_a_new_port_or_probe_is_a_revision_that_rolls_and_rolls_back(
    world: World, client_for: Client
) -> None:
    pool = _pool()
    service = _service(world, pool)
    Quota.objects.create(tenant=world.tenant_a, pool=pool, accelerator_model="A800", guarantee=4)
    client = client_for(world.user("a", Role.MEMBER))
    answer = client.patch(
        _url(service), {"port": 9000, "readiness_path": "/ready", "max_surge": 2}, format="json"
    )
    assert answer.status_code == 200, answer.data
    assert (answer.data["revision"], answer.data["rollout_state"]) == (2, "rolling")
    job = Job.objects.get(pk=service.job_id)
    # The container listens where the probes look, on this attempt's replicas and any later.
    assert job.spec["args"] == ["--model", "hf://org/model-v1", "--port", "9000"]
    assert (job.spec["inference"]["port"], job.spec["inference"]["max_surge"]) == (9000, 2)
    second = ServiceRevision.objects.get(service=service, number=2)
    assert second.settings == {
        "port": 9000,
        "readiness_path": "/ready",
        "liveness_path": "/health",
        "probe_initial_delay_s": 30,
        "probe_period_s": 10,
    }
    assert second.message == "changed port 8000 → 9000, readiness_path /health → /ready"
    assert second.message_key == "revisionSettings"
    started = JobEvent.objects.get(job=job, reason="RolloutStarted")
    assert started.message == (
        "rolling out revision 2: port 8000 → 9000, readiness_path /health → /ready"
    )
    _tick(40)
    service.refresh_from_db()
    assert (service.serving_revision, service.rollout_state) == (2, RolloutState.IDLE)
    assert not Allocation.objects.filter(job=job, surge=True).exists()

    # The surge limits alone say how a rollout goes, not what runs: no revision.
    assert client.patch(_url(service), {"max_surge": 1}, format="json").status_code == 200
    assert ServiceRevision.objects.filter(service=service).count() == 2
    assert Job.objects.get(pk=job.pk).spec["inference"]["max_surge"] == 1

    # A rollback brings the port and probes back with the image and model.
    back = client.post(_url(service, "rollback/"), {"revision": 1}, format="json")
    assert back.status_code == 200, back.data
    assert (back.data["revision"], back.data["port"], back.data["readiness_path"]) == (
        3,
        8000,
        "/health",
    )
    assert Job.objects.get(pk=job.pk).spec["args"][-1] == "8000"
    listed = client.get(_url(service, "revisions/")).data["results"]
    assert [(r["number"], r["settings"]["port"]) for r in listed] == [
        (3, 8000),
        (2, 9000),
        (1, 8000),
    ]
    # Revision 2 runs something else than now; revision 1 is what runs now.
    refused = client.post(_url(service, "rollback/"), {"revision": 1}, format="json")
    assert refused.status_code == 400


def test_an_ended_service_keeps_a_new_port_for_no_one(world: World, client_for: Client) -> None:
    service = _service(world, _pool())
    Job.objects.filter(pk=service.job_id).update(state=JobState.CANCELLED)
    client = client_for(world.user("a", Role.MEMBER))
    answer = client.patch(_url(service), {"port": 9000}, format="json")
    assert answer.status_code == 200, answer.data
    assert (answer.data["port"], answer.data["revision"]) == (9000, 1)
    assert ServiceRevision.objects.filter(service=service).count() == 1


def test_a_restart_mid_rollout_goes_on_where_it_was(world: World, client_for: Client) -> None:
    pool = _pool()
    service = _service(world, pool, min_replicas=3, max_replicas=3)
    Quota.objects.create(tenant=world.tenant_a, pool=pool, accelerator_model="A800", guarantee=4)
    client = client_for(world.user("a", Role.MEMBER))
    assert client.patch(_url(service), {"model_uri": "hf://org/model-v2"},
                        format="json").status_code == 200  # fmt: skip
    now = _tick(12)
    service.refresh_from_db()
    assert service.rollout_state == RolloutState.ROLLING
    moved = service.updated_replicas
    assert moved in (2, 3), moved
    services._RUNTIME.clear()  # the embedded server restarts: its simulated replicas are new
    now = _tick(1, now)
    service.refresh_from_db()
    # Not back to the first replica: the ones moved to revision 2 stay moved.
    assert service.rollout_state == RolloutState.IDLE or service.updated_replicas >= moved
    _tick(30, now)
    service.refresh_from_db()
    assert (service.serving_revision, service.rollout_state) == (2, RolloutState.IDLE)
    assert service.ready_replicas == 3
    assert not Allocation.objects.filter(job=service.job_id, surge=True).exists()
