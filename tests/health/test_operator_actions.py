"""What operators do to nodes: uncordon is refused while a fault holds the node (and a fault
still reported cordons again), one failed node takes one spare, a maintenance cordon and its
uncordon leave health alone, a manual drain restarts jobs from their checkpoints, and a node
the quota guarantees need cannot become a spare."""

from __future__ import annotations

import pytest

from apps.audit.models import AuditEntry
from apps.clusters.models import Node
from apps.health.models import Incident, IncidentJob
from apps.jobs.models import Allocation, Job, JobEvent
from apps.quotas.models import Quota
from tests.health.conftest import Pool, report, result
from tests.health.test_faults import node_of, running_job, tick

pytestmark = pytest.mark.django_db


def test_uncordon_is_refused_while_a_cordoning_incident_is_open(
    world, client_for, sim: Pool, django_capture_on_commit_callbacks
) -> None:
    node = sim.nodes[1]
    with django_capture_on_commit_callbacks(execute=True):
        report(node, result("ib", "fail", ("ib:port_down",)))
    incident = Incident.objects.get()
    admin = client_for(world.platform_admin)
    refused = admin.post(f"/api/v1/health/nodes/{node.pk}/uncordon/")
    assert refused.status_code == 409
    detail = refused.json()["detail"]
    assert f"#{incident.pk} (ib:port_down)" in detail and "resolve" in detail
    node.refresh_from_db()
    assert node.cordoned and node.health == "faulty" and sim.backend.uncordons == []
    resolved = admin.post(f"/api/v1/health/incidents/{incident.pk}/resolve/")
    assert resolved.status_code == 200 and resolved.json()["state"] == "closed"
    node.refresh_from_db()
    assert not node.cordoned and node.health == "healthy"


def test_a_fault_still_reported_cordons_an_uncordoned_node_again(
    sim: Pool, django_capture_on_commit_callbacks
) -> None:
    node = sim.nodes[0]
    with django_capture_on_commit_callbacks(execute=True):
        report(node, result("disk", "fail", ("disk:failed",)))
    Node.objects.filter(pk=node.pk).update(cordoned=False)  # lost behind the platform's back
    with django_capture_on_commit_callbacks(execute=True):
        report(node, result("disk", "fail", ("disk:failed",)))
    node.refresh_from_db()
    assert node.cordoned and sim.backend.cordons == [node.name, node.name]
    notes = [what for _, what in Incident.objects.get().actions_taken]
    assert notes.count("cordoned") == 2
    assert "the fault is still reported: cordoned again" in notes


def test_one_failed_node_takes_one_spare(
    world, client_for, sim: Pool, django_capture_on_commit_callbacks
) -> None:
    Node.objects.filter(pk=sim.nodes[3].pk).update(is_spare=True)  # two spares to take
    node = sim.nodes[0]
    with django_capture_on_commit_callbacks(execute=True):
        report(
            node,
            result("gpu_count", "fail", ("gpu:missing",)),
            result("ecc", "fail", ("ecc:uncorrectable",)),
        )
    first, other = Incident.objects.order_by("id")
    assert first.spare is not None and other.spare_id is None
    assert Node.objects.filter(is_spare=True).count() == 1  # one of the two is left
    notes = [what for _, what in other.actions_taken]
    assert "cordoned" not in notes and "node already cordoned" in notes
    assert f"hot spare {first.spare.name} already replaces the node" in notes
    assert sim.backend.cordons == [node.name]


def test_a_maintenance_cordon_and_its_uncordon_leave_health_alone(
    world, client_for, sim: Pool
) -> None:
    admin = client_for(world.platform_admin)
    healthy, degraded = sim.nodes[0], sim.nodes[1]
    Node.objects.filter(pk=degraded.pk).update(health="degraded")
    for node, health in ((healthy, "healthy"), (degraded, "degraded")):
        cordoned = admin.post(f"/api/v1/health/nodes/{node.pk}/cordon/")
        assert cordoned.status_code == 200
        assert (cordoned.json()["cordoned"], cordoned.json()["health"]) == (True, health)
        back = admin.post(f"/api/v1/health/nodes/{node.pk}/uncordon/")
        assert back.status_code == 200
        assert (back.json()["cordoned"], back.json()["health"]) == (False, health)


def test_resolving_an_alert_only_incident_keeps_an_operators_cordon(
    world, client_for, sim: Pool
) -> None:
    node = sim.nodes[2]
    admin = client_for(world.platform_admin)
    assert admin.post(f"/api/v1/health/nodes/{node.pk}/cordon/").status_code == 200
    report(node, result("disk", "warn", ("disk:full",)))
    incident = Incident.objects.get()
    assert admin.post(f"/api/v1/health/incidents/{incident.pk}/resolve/").status_code == 200
    assert Node.objects.get(pk=node.pk).cordoned


def test_manual_drain_restarts_the_jobs_elsewhere_without_spending_retries(
    world, client_for, sim: Pool, django_capture_on_commit_callbacks
) -> None:
    job = running_job(world, client_for, sim, max_retries=0)
    node = node_of(job)
    admin = client_for(world.platform_admin)
    url = f"/api/v1/health/nodes/{node.pk}/drain/"
    with django_capture_on_commit_callbacks(execute=True):
        drained = admin.post(url)
    assert drained.status_code == 200
    assert (drained.json()["cordoned"], drained.json()["health"]) == (True, "healthy")
    assert sim.backend.cordons == [node.name] and sim.backend.drains == [node.name]
    job.refresh_from_db()
    assert job.state == "restarting" and job.failures == 0 and job.attempt == 1
    assert JobEvent.objects.filter(job=job, reason="NodeDrained").count() == 1
    incident = Incident.objects.get()
    assert (incident.fault, incident.state, incident.action) == ("drain", "closed", "cordon_drain")
    hit = IncidentJob.objects.get()
    assert hit.job_id == job.pk and hit.outcome == "restarted"
    assert hit.resume_from == "start (no checkpoint registered)"
    entry = AuditEntry.objects.filter(object_type="clusters.node", action="update").get()
    assert entry.before is not None and entry.after is not None
    assert entry.before["cordoned"] is False and entry.after["cordoned"] is True
    # Idempotent: a second drain restarts nothing and records nothing new.
    with django_capture_on_commit_callbacks(execute=True):
        again = admin.post(url)
    assert again.status_code == 200 and Incident.objects.count() == 1
    assert IncidentJob.objects.count() == 1 and sim.backend.drains == [node.name]
    # The jobs run again elsewhere; the drained node can now become a spare.
    for _ in range(3):
        tick(sim, 6)
    job.refresh_from_db()
    assert job.state == "running"
    assert node.name not in set(
        Allocation.objects.filter(job=job).values_list("node__name", flat=True)
    )
    spare = admin.post(f"/api/v1/health/nodes/{node.pk}/spare/", {"spare": True}, format="json")
    assert spare.status_code == 200 and spare.json()["is_spare"] is True
    # Back into service: a maintenance drain holds nothing open.
    assert admin.post(f"/api/v1/health/nodes/{node.pk}/uncordon/").status_code == 200


def test_only_platform_admins_drain(world, client_for, sim: Pool) -> None:
    from apps.tenancy.models import Role

    member = client_for(world.user("a", Role.TENANT_ADMIN))
    assert member.post(f"/api/v1/health/nodes/{sim.nodes[0].pk}/drain/").status_code == 403
    assert not Node.objects.get(pk=sim.nodes[0].pk).cordoned


def test_a_spare_cannot_take_devices_the_guarantees_need(world, client_for, sim: Pool) -> None:
    admin = client_for(world.platform_admin)
    url = "/api/v1/health/nodes/{}/spare/"
    # 32 schedulable GPUs, 24 guaranteed: one node (8) may go, a second may not.
    assert (
        admin.post(url.format(sim.nodes[0].pk), {"spare": True}, format="json").status_code == 200
    )
    refused = admin.post(url.format(sim.nodes[1].pk), {"spare": True}, format="json")
    assert refused.status_code == 409
    assert refused.json()["detail"] == (
        "Making n1 a spare would leave pool train 16 A800 devices for 24 guaranteed "
        "(8 short): lower the guarantees first"
    )
    assert not Node.objects.get(pk=sim.nodes[1].pk).is_spare
    Quota.objects.filter(tenant=world.tenant_b).update(guarantee=0)
    made = admin.post(url.format(sim.nodes[1].pk), {"spare": True}, format="json")
    assert made.status_code == 200
    # Quota edits that do not grow a guarantee still pass.
    quota = Quota.objects.get(tenant=world.tenant_a)
    edit = admin.patch(f"/api/v1/quotas/{quota.pk}/", {"borrow_limit": 40}, format="json")
    assert edit.status_code == 200, edit.json()
    assert Job.objects.count() == 0
