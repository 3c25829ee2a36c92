"""Fault injection on the simulated cluster: each fault class cordons once, alerts once,
restarts hit jobs as whole gangs from their newest checkpoint within their retry budget."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.clusters.models import Node
from apps.health import services
from apps.health.models import Alert, Incident, IncidentJob
from apps.jobs import workload
from apps.jobs.models import Allocation, Job, JobEvent
from apps.jobs.relay import reconcile, relay
from apps.runs.models import Checkpoint
from apps.runs.services import ensure_run_for_job, register_checkpoint
from apps.scheduling.loop import run_cycle
from apps.tenancy.models import Role
from tests.health.conftest import Pool, report, result
from tests.jobs.conftest import training_body

pytestmark = pytest.mark.django_db


def tick(sim: Pool, seconds: float = 0) -> None:
    sim.clock.advance(seconds)
    run_cycle()
    relay()
    reconcile(grace_s=3600)
    relay()


def running_job(world, client_for, sim: Pool, replicas: int = 2, **overrides) -> Job:
    client = client_for(world.user("a", Role.MEMBER))
    body = training_body(
        sim.pool,
        replica_groups=[{"name": "w", "replicas": replicas, "accelerators": 8}],
        **overrides,
    )
    response = client.post("/api/v1/tenants/tenant-a/jobs/", body, format="json")
    assert response.status_code == 201, response.json()
    tick(sim)
    tick(sim, 6)
    job = Job.objects.get(pk=response.json()["id"])
    assert job.state == "running"
    return job


def node_of(job: Job) -> Node:
    return Allocation.objects.filter(job=job).select_related("node").first().node  # type: ignore[union-attr]


def backdate_start(job: Job, seconds: float) -> None:
    JobEvent.objects.filter(job=job, to_state="running").update(
        created_at=timezone.now() - timedelta(seconds=seconds)
    )


CORDON_DRAIN = [
    ("gpu_count", "gpu:missing"),
    ("xid", "xid:79"),
    ("ecc", "ecc:uncorrectable"),
    ("ib", "ib:port_down"),
]


@pytest.mark.parametrize(("check", "fault"), CORDON_DRAIN)
def test_hardware_fault_cordons_once_alerts_once_and_restarts_the_gang(
    world, client_for, sim: Pool, django_capture_on_commit_callbacks, check, fault
) -> None:
    job = running_job(world, client_for, sim)
    node = node_of(job)
    backdate_start(job, 600)
    with django_capture_on_commit_callbacks(execute=True):
        for _ in range(3):  # the agent keeps reporting the fault every round
            assert report(node, result(check, "fail", (fault,))) == []
    node.refresh_from_db()
    assert node.cordoned and node.health == "faulty"
    assert sim.backend.cordons == [node.name]
    assert sim.backend.drains == [node.name]
    alert = Alert.objects.get()
    assert alert.fault == fault and alert.occurrences == 3 and alert.severity == "critical"
    incident = Incident.objects.get()
    assert incident.state == "open" and incident.fault == fault
    hit = IncidentJob.objects.get()
    assert hit.job_id == job.pk and hit.outcome == "restarted" and hit.devices == 16
    assert hit.resume_step is None and hit.resume_from == "start (no checkpoint registered)"
    assert hit.lost_gpu_seconds == pytest.approx(16 * 600, abs=16 * 30)
    assert incident.lost_gpu_seconds == hit.lost_gpu_seconds
    job.refresh_from_db()
    assert job.state == "restarting" and job.failures == 1 and job.attempt == 1
    assert not Allocation.objects.filter(job=job).exists()  # the whole gang, not one replica
    # The hot spare took the node's place; the job runs again at full size, off the bad node.
    spare = Node.objects.get(pk=sim.spare.pk)
    assert not spare.is_spare and incident.spare_id == spare.pk
    for _ in range(3):  # delete the old attempt, requeue, admit, dispatch, run
        tick(sim, 6)
    job.refresh_from_db()
    assert job.state == "running" and job.attempt == 1
    placed = set(Allocation.objects.filter(job=job).values_list("node__name", flat=True))
    assert len(placed) == 2 and node.name not in placed


def test_a_restarted_job_resumes_from_its_newest_complete_checkpoint(
    world, client_for, sim: Pool, django_capture_on_commit_callbacks
) -> None:
    """The incident records the checkpoint the SDK registered (apps.runs), and lost GPU time
    counts from it, not from the attempt's start; a newer checkpoint some rank never finished
    is not a resume point."""
    job = running_job(world, client_for, sim)
    node = node_of(job)
    backdate_start(job, 3600)
    run = ensure_run_for_job(job)
    for rank in (0, 1):
        register_checkpoint(run=run, step=4000, path="/ckpt/step_4000", rank=rank, world_size=2)
    Checkpoint.objects.filter(step=4000).update(created_at=timezone.now() - timedelta(seconds=300))
    register_checkpoint(run=run, step=5000, path="/ckpt/step_5000", rank=0, world_size=2)
    with django_capture_on_commit_callbacks(execute=True):
        report(node, result("xid", "fail", ("xid:79",)))
    hit = IncidentJob.objects.get()
    assert hit.outcome == "restarted" and hit.resume_step == 4000
    assert hit.resume_from == "checkpoint step 4000 /ckpt/step_4000"
    assert hit.lost_gpu_seconds == pytest.approx(16 * 300, abs=16 * 30)
    job.refresh_from_db()
    assert job.state_reason.endswith("will resume from checkpoint step 4000 /ckpt/step_4000")
    event = job.events.get(reason="NodeFault", to_state="restarting")
    assert (event.message_key, event.message_args["node"]) == ("faultResumes", node.name)
    assert event.message_args["resume"] == {
        "key": "resumeStep",
        "args": {"step": 4000, "location": "/ckpt/step_4000"},
    }
    # The restarted attempt is told the same checkpoint.
    env = dict(workload.build(job).replica_groups[0].env)
    assert env["ZS_RESUME_FROM"] == "/ckpt/step_4000" and env["ZS_RESUME_STEP"] == "4000"


CORDON_ONLY = [
    ("modules", "module:nvidia_peermem"),
    ("versions", "driver:version_mismatch"),
    ("disk", "disk:failed"),
]


@pytest.mark.parametrize(("check", "fault"), CORDON_ONLY)
def test_environment_fault_cordons_without_draining(
    world, client_for, sim: Pool, django_capture_on_commit_callbacks, check, fault
) -> None:
    job = running_job(world, client_for, sim)
    node = node_of(job)
    with django_capture_on_commit_callbacks(execute=True):
        report(node, result(check, "fail", (fault,)))
        report(node, result(check, "fail", (fault,)))
    node.refresh_from_db()
    assert node.cordoned and node.health == "degraded"
    assert sim.backend.cordons == [node.name] and sim.backend.drains == []
    assert Alert.objects.filter(fault=fault).count() == 1
    assert Job.objects.get(pk=job.pk).state == "running"  # runs on; no new work lands here


@pytest.mark.parametrize(("check", "fault"), [("disk", "disk:full"), ("ecc", "ecc:sbe")])
def test_warning_alerts_once_and_closes_when_it_clears(
    sim: Pool, django_capture_on_commit_callbacks, check, fault
) -> None:
    node = sim.nodes[0]
    with django_capture_on_commit_callbacks(execute=True):
        report(node, result(check, "warn", (fault,)))
        report(node, result(check, "warn", (fault,)))
        report(node, result(check, "ok"))
    node.refresh_from_db()
    assert not node.cordoned and sim.backend.cordons == []
    alert = Alert.objects.get()
    assert alert.occurrences == 2 and alert.state == "resolved"
    assert Incident.objects.get().state == "closed"


def test_fabricmanager_down_is_fixed_by_the_agent_first(
    sim: Pool, django_capture_on_commit_callbacks
) -> None:
    node = sim.nodes[0]
    with django_capture_on_commit_callbacks(execute=True):
        assert report(node, result("fabricmanager", "fail", ("fabricmanager:down",))) == [
            "restart_fabricmanager"
        ]
        assert report(node, result("fabricmanager", "ok")) == []
    node.refresh_from_db()
    assert not node.cordoned and sim.backend.cordons == [] and not Alert.objects.exists()
    assert Incident.objects.get().state == "closed"


def test_fabricmanager_fix_that_fails_escalates_to_cordon(
    sim: Pool, django_capture_on_commit_callbacks
) -> None:
    node = sim.nodes[0]
    down = result("fabricmanager", "fail", ("fabricmanager:down",))
    with django_capture_on_commit_callbacks(execute=True):
        assert report(node, down) == ["restart_fabricmanager"]
        assert report(node, down) == []
        assert report(node, down) == []
    node.refresh_from_db()
    assert node.cordoned and sim.backend.cordons == [node.name]
    assert Alert.objects.get().fault == "fabricmanager:down"
    assert Incident.objects.get().action == "cordon"


def test_after_its_retry_budget_a_job_fails_instead_of_looping(
    world, client_for, sim: Pool, django_capture_on_commit_callbacks
) -> None:
    job = running_job(world, client_for, sim, max_retries=1)
    with django_capture_on_commit_callbacks(execute=True):
        report(node_of(job), result("xid", "fail", ("xid:79",)))
    for _ in range(3):
        tick(sim, 6)
    job.refresh_from_db()
    assert job.state == "running" and job.failures == 1
    with django_capture_on_commit_callbacks(execute=True):
        report(node_of(job), result("ib", "fail", ("ib:port_down",)))
    job.refresh_from_db()
    assert job.state == "failed" and job.failures == 1
    assert JobEvent.objects.filter(job=job, reason="RetriesExhausted").count() == 1
    assert list(IncidentJob.objects.order_by("id").values_list("outcome", flat=True)) == [
        "restarted",
        "failed",
    ]
    for _ in range(3):
        tick(sim, 10)
    assert Job.objects.get(pk=job.pk).state == "failed"  # stays failed: no loop


def test_resolving_the_incident_uncordons_once(
    world, sim: Pool, django_capture_on_commit_callbacks
) -> None:
    node = sim.nodes[1]
    with django_capture_on_commit_callbacks(execute=True):
        report(node, result("ib", "fail", ("ib:port_down",)))
        report(node, result("modules", "fail", ("module:mlx5_core",)))
    incidents = list(Incident.objects.order_by("id"))
    user = world.platform_admin
    with django_capture_on_commit_callbacks(execute=True):
        services.resolve_incident(incident=incidents[0], actor=user)
    node.refresh_from_db()
    assert node.cordoned  # the module incident still holds it
    with django_capture_on_commit_callbacks(execute=True):
        services.resolve_incident(incident=incidents[1], actor=user)
    node.refresh_from_db()
    assert not node.cordoned and node.health == "healthy"
    assert sim.backend.cordons == [node.name] and sim.backend.uncordons == [node.name]
    assert set(Alert.objects.values_list("state", flat=True)) == {"resolved"}


def test_restart_backoff_grows_and_is_capped(settings) -> None:
    settings.HEALTH_RESTART_BACKOFF_S = 10
    assert [services.restart_backoff(f).total_seconds() for f in (1, 2, 3, 8)] == [
        10.0,
        20.0,
        40.0,
        300.0,
    ]


def test_sync_cordons_repairs_a_lost_cordon(sim: Pool) -> None:
    Node.objects.filter(pk=sim.nodes[2].pk).update(cordoned=True)
    assert services.sync_cordons() == 1
    assert services.sync_cordons() == 0
    assert sim.backend.cordons == ["n2"]


def test_operator_moves_nodes_into_and_out_of_the_spare_pool(world, client_for, sim: Pool):
    job = running_job(world, client_for, sim, replicas=1)
    busy = node_of(job)
    idle = next(n for n in sim.nodes if n.pk != busy.pk)
    admin = client_for(world.platform_admin)
    url = "/api/v1/health/nodes/{}/spare/"

    refused = admin.post(url.format(busy.pk), {"spare": True}, format="json")
    assert refused.status_code == 409 and "drain" in refused.json()["detail"]
    assert not Node.objects.get(pk=busy.pk).is_spare

    made = admin.post(url.format(idle.pk), {"spare": True}, format="json")
    assert made.status_code == 200 and made.json()["is_spare"] is True
    back = admin.post(url.format(sim.spare.pk), {"spare": False}, format="json")
    assert back.status_code == 200 and back.json()["is_spare"] is False
    assert admin.post(url.format(idle.pk), {}, format="json").status_code == 400
    member = client_for(world.user("a", Role.MEMBER))
    assert member.post(url.format(idle.pk), {"spare": False}, format="json").status_code == 403
    assert Node.objects.get(pk=idle.pk).is_spare  # the member changed nothing

    # the scheduler no longer places on the new spare, and does on the node taken out
    client = client_for(world.user("a", Role.MEMBER))
    # 3 whole nodes (the quota leaves 24 GPUs): n1 is a spare now, so spare0 must be used
    body = training_body(sim.pool, replica_groups=[{"name": "w", "replicas": 3, "accelerators": 8}])
    assert client.post("/api/v1/tenants/tenant-a/jobs/", body, format="json").status_code == 201
    tick(sim)
    used = set(Allocation.objects.values_list("node__name", flat=True))
    assert idle.name not in used and sim.spare.name in used
