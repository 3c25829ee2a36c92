"""Idle GPUs on a virtual clock: warn -> keep running -> stop, the extension budget, exemptions,
a notebook and a training job, the grace period, and freed GPUs going to the next queued job."""

from __future__ import annotations

import pytest
from django.core import mail

from apps.audit.models import AuditEntry
from apps.governance import notify
from apps.governance.models import IdleFlag, Notification
from apps.governance.services import sweep
from apps.governance.utilization import TelemetryUtilization
from apps.jobs.models import Allocation, Job, JobEvent
from apps.telemetry.models import JobTelemetry, SeriesKind, SeriesPoint
from apps.tenancy.models import Role
from tests.conftest import World
from tests.factories import make_membership, make_user
from tests.governance.conftest import HOUR, Wall, feed, long_training, notebook, state, submit

pytestmark = pytest.mark.django_db
FLAGS = "/api/v1/tenants/tenant-a/governance/flags"


def test_training_job_warned_kept_running_then_stopped(world: World, client_for, wall: Wall):
    member = world.user("a", Role.MEMBER)
    member.email = "a-member@example.com"
    member.save()
    client = client_for(member)
    job_id = submit(client, "tenant-a", long_training(wall.cluster, "sft", 16))
    wall.go(0)
    wall.go(6)
    assert state(job_id) == "running"
    feed(job_id, wall.at(0), wall.at(5 * HOUR), util=3.0)

    wall.go(HOUR)  # idle for 1 h only: the training idle period is 2 h
    assert sweep().warned == 0
    wall.go(2 * HOUR + 60)
    result = sweep()
    assert (result.warned, result.stopped) == (1, 0)
    flag = IdleFlag.objects.get(job_id=job_id)
    assert flag.state == "warned" and flag.peak_util_pct == 3.0
    assert flag.stop_at == wall.at(2 * HOUR + 60 + 1800)
    notice = Notification.objects.get(recipient=member, kind="idle_warning")
    assert notify.deliver(notice.pk) == {"email": "sent"}
    assert mail.outbox[0].to == ["a-member@example.com"]
    assert "sft: GPUs idle" in mail.outbox[0].subject
    assert "A checkpoint was requested from the job" in notice.body

    wall.go(2 * HOUR + 60 + 1799)  # inside the grace period: nothing is stopped
    assert sweep().stopped == 0 and state(job_id) == "running"
    response = client.post(f"{FLAGS}/{flag.pk}/keep-running/")
    assert response.status_code == 200, response.json()
    assert response.json()["extensions_used"] == 1 and response.json()["state"] == "extended"
    flag.refresh_from_db()
    assert flag.stop_at == wall.at(2 * HOUR + 60 + 1800 + HOUR)
    audits = AuditEntry.objects.filter(object_type="governance.idleflag", action="update")
    assert audits.count() == 1

    # One grace period before the extended stop, still idle: the owner is reminded, once.
    wall.go(3 * HOUR + 60 - 1)
    assert sweep().reminded == 0
    wall.go(3 * HOUR + 60)
    result = sweep()
    assert (result.reminded, result.stopped) == (1, 0)
    reminder = Notification.objects.filter(recipient=member, kind="idle_warning").latest("pk")
    stop = f"{wall.at(3 * HOUR + 60 + 1800):%Y-%m-%d %H:%M}"
    assert reminder.title == f"sft: still idle, stopping at {stop} UTC"
    assert "extends it again while extensions are left (1 of 2)" in reminder.body
    assert JobEvent.objects.get(job_id=job_id, reason="IdleReminder").message == (
        f"still idle since kept running; stops at {stop} UTC (1 extension(s) left)"
    )
    wall.go(3 * HOUR + 60 + 1799)
    assert sweep().total == 0 and state(job_id) == "running"
    wall.go(3 * HOUR + 60 + 1800)
    assert sweep().stopped == 1
    job = Job.objects.get(pk=job_id)
    assert (job.state, job.state_reason) == ("cancelled", "stopped: idle GPUs")
    flag.refresh_from_db()
    assert flag.state == "stopped" and flag.device_milli == 16000
    # The warning asked the job for a checkpoint; it saved none (it runs no SDK).
    assert flag.checkpoint_note == (
        f"checkpoint requested {wall.at(2 * HOUR + 60):%Y-%m-%d %H:%M} UTC, none saved since; "
        "no complete checkpoint registered"
    )
    reasons = [e.reason for e in JobEvent.objects.filter(job_id=job_id)]
    assert reasons[-5:] == [
        "IdleWarning", "IdleExtended", "IdleReminder", "IdleCheckpoint", "IdleStopped",
    ]  # fmt: skip
    assert Notification.objects.filter(recipient=member, kind="idle_stopped").count() == 1
    wall.go(3 * HOUR + 60 + 1810)
    assert not Allocation.objects.filter(job_id=job_id).exists()
    assert wall.cluster.backend.job_ids() == set()
    assert sweep().total == 0  # idempotent: nothing left to do

    # Efficiency: 16 GPUs reserved 0..3h31m at 3 % mean; 16 GPUs reclaimed until 5h31m.
    JobTelemetry.objects.create(job_id=job_id, gpu_seconds=100.0, util_gpu_seconds=300.0)
    wall.now = wall.at(5 * HOUR + 60 + 1800)
    admin = client_for(world.user("a", Role.TENANT_ADMIN))
    report = admin.get("/api/v1/tenants/tenant-a/governance/efficiency/",
                       {"start": wall.at(-HOUR).isoformat()}).json()  # fmt: skip
    held_h = (3 * HOUR + 60 + 1800) / 3600
    assert report["reserved_gpu_hours"] == pytest.approx(16 * held_h, abs=0.01)
    assert report["used_gpu_hours"] == pytest.approx(16 * held_h * 0.03, abs=0.001)
    assert report["utilization_pct"] == 3.0
    assert report["idle_reclaimed_gpu_hours"] == 32.0
    assert report["jobs_stopped_idle"] == 1
    assert client.get("/api/v1/tenants/tenant-a/governance/efficiency/").status_code == 403
    # Where the 10-minute job series covers the window, "used" takes the window's own mean,
    # not the lifetime one: busy (50 %) before the window, 1.5 % inside it.
    SeriesPoint.objects.bulk_create(
        SeriesPoint(kind=SeriesKind.JOB, key=str(job_id), resolution_s=600, ts=wall.at(t),
                    util=50.0 if t < 0 else 1.5)
        for t in range(-3 * HOUR, 3 * HOUR + 1800, 600)
    )  # fmt: skip
    windowed = admin.get("/api/v1/tenants/tenant-a/governance/efficiency/",
                         {"start": wall.at(0).isoformat()}).json()  # fmt: skip
    assert windowed["utilization_pct"] == 1.5
    assert windowed["used_gpu_hours"] == pytest.approx(16 * held_h * 0.015, abs=0.001)
    provider = TelemetryUtilization()
    assert provider.mean_util([job_id]) == {job_id: 3.0}  # lifetime, from the totals
    assert provider.mean_util([job_id], wall.at(-3 * HOUR), wall.at(0)) == {job_id: 50.0}
    assert provider.mean_util([job_id], wall.at(-9 * HOUR), wall.at(-6 * HOUR)) == {job_id: 3.0}


def test_notebook_extension_budget_exhausted_then_stopped(world, client_for, wall):
    client = client_for(world.user("a", Role.MEMBER))
    job_id = submit(client, "tenant-a", notebook(wall.cluster))
    wall.go(0)
    wall.go(6)
    assert state(job_id) == "running"
    feed(job_id, wall.at(0), wall.at(6 * HOUR), util=0.0)
    wall.go(HOUR + 60)  # notebooks: 1 h idle period
    assert sweep().warned == 1
    flag = IdleFlag.objects.get(job_id=job_id)
    for used in (1, 2):
        response = client.post(f"{FLAGS}/{flag.pk}/keep-running/")
        assert response.json()["extensions_used"] == used
    stop_at = IdleFlag.objects.get(pk=flag.pk).stop_at
    response = client.post(f"{FLAGS}/{flag.pk}/keep-running/")
    assert response.status_code == 409
    assert "No extensions left (2 of 2 used)" in response.json()["detail"]
    assert IdleFlag.objects.get(pk=flag.pk).stop_at == stop_at
    wall.go(HOUR + 60 + 1800 + 2 * HOUR)
    assert sweep().stopped == 1
    job = Job.objects.get(pk=job_id)
    assert job.state == "cancelled" and job.state_reason == "stopped: idle GPUs"
    assert IdleFlag.objects.get(pk=flag.pk).checkpoint_note == (
        "no checkpoint applies (not a training job)"
    )


def test_a_reminder_per_extension_and_none_for_a_click_inside_the_grace_period(
    world, client_for, wall
):
    client = client_for(world.user("a", Role.MEMBER))
    job_id = submit(client, "tenant-a", notebook(wall.cluster))
    wall.go(0)
    wall.go(6)
    feed(job_id, wall.at(0), wall.at(8 * HOUR), util=0.0)
    wall.go(HOUR + 60)
    assert sweep().warned == 1
    flag = IdleFlag.objects.get(job_id=job_id)
    # Kept running at once: stop at 1h01m + 30 min + 1 h; reminded at its last 30 min.
    assert client.post(f"{FLAGS}/{flag.pk}/keep-running/").status_code == 200
    wall.go(HOUR + 60 + 3600)
    assert sweep().reminded == 1
    assert sweep().reminded == 0  # once
    # Kept running again inside that last half hour: the answer gives the new stop (3h31m),
    # and the new extension is reminded of at its own last half hour, from 3h01m.
    wall.go(HOUR + 60 + 3600 + 600)
    answer = client.post(f"{FLAGS}/{flag.pk}/keep-running/").json()
    assert answer["reminded_at"] is None
    assert answer["stop_at"].startswith(f"{wall.at(3 * HOUR + 60 + 1800):%Y-%m-%dT%H:%M}")
    wall.go(3 * HOUR + 60 - 1)
    assert sweep().reminded == 0
    wall.go(3 * HOUR + 60)
    assert sweep().reminded == 1
    reminders = JobEvent.objects.filter(job_id=job_id, reason="IdleReminder")
    assert [e.message.endswith("(0 extension(s) left)") for e in reminders] == [False, True]


def test_no_reminder_when_the_extension_is_shorter_than_the_grace_period(world, client_for, wall):
    client = client_for(world.user("a", Role.TENANT_ADMIN))
    policy = client.patch("/api/v1/tenants/tenant-a/governance/policy/",
                          {"extension_s": 900}, format="json")  # fmt: skip
    assert policy.status_code == 200, policy.json()
    job_id = submit(client, "tenant-a", notebook(wall.cluster))
    wall.go(0)
    wall.go(6)
    feed(job_id, wall.at(0), wall.at(4 * HOUR), util=0.0)
    wall.go(HOUR + 60)
    assert sweep().warned == 1
    flag = IdleFlag.objects.get(job_id=job_id)
    wall.go(HOUR + 60 + 1700)  # kept running 100 s before the stop: a new stop 15 min later
    assert client.post(f"{FLAGS}/{flag.pk}/keep-running/").status_code == 200
    for t in (1800, 2400, 2600):
        wall.go(HOUR + 60 + t)
        assert sweep().reminded == 0
    wall.go(HOUR + 60 + 1800 + 900)
    assert sweep().stopped == 1
    assert not JobEvent.objects.filter(job_id=job_id, reason="IdleReminder").exists()


def test_a_job_exempted_before_any_warning_is_never_warned(world, client_for, wall):
    owner = client_for(world.user("a", Role.MEMBER))
    job_id = submit(owner, "tenant-a", notebook(wall.cluster))
    url = f"{FLAGS}/exempt-job/"
    # Only its owner or a tenant admin, in its own tenant, for a job idle stops apply to.
    other = make_user("other-member")
    make_membership(tenant=world.tenant_a, user=other, role=Role.MEMBER)
    body = {"job": job_id, "reason": "debugging a hang"}
    assert client_for(other).post(url, body, format="json").status_code == 403
    assert (
        client_for(world.user("a", Role.VIEWER)).post(url, body, format="json").status_code == 403
    )
    outsider = client_for(world.user("b", Role.TENANT_ADMIN))
    assert outsider.post(url, body, format="json").status_code == 404
    theirs = outsider.post("/api/v1/tenants/tenant-b/governance/flags/exempt-job/", body,
                           format="json")  # fmt: skip
    assert theirs.json()["errors"] == {"job": ["No such job in this tenant."]}
    assert owner.post(url, {"job": job_id}, format="json").json()["errors"] == {
        "reason": ["This field is required."]
    }
    assert not IdleFlag.objects.exists()

    response = owner.post(url, body, format="json")
    assert response.status_code == 200, response.json()
    assert (response.json()["state"], response.json()["exempt_reason"]) == (
        "exempt", "debugging a hang",
    )  # fmt: skip
    assert AuditEntry.objects.filter(object_type="governance.idleflag", action="create").exists()
    wall.go(0)
    wall.go(6)
    feed(job_id, wall.at(0), wall.at(6 * HOUR), util=0.0)
    for hours in (2, 5):
        wall.go(hours * HOUR)
        assert sweep().total == 0
    assert state(job_id) == "running"
    assert JobEvent.objects.filter(job_id=job_id, reason="IdleExempt").count() == 1
    again = client_for(world.platform_admin).post(url, body, format="json")  # acts as an admin
    assert again.status_code == 200 and again.json()["exempted_by"] == world.platform_admin.username
    # An ended job, or a kind idle stops do not apply to, is refused.
    Job.objects.filter(pk=job_id).update(state="succeeded")
    ended = owner.post(url, body, format="json")
    assert ended.json()["errors"] == {"job": ["The job has ended."]}
    Job.objects.filter(pk=job_id).update(state="running", kind="inference")
    served = owner.post(url, body, format="json")
    assert served.json()["errors"] == {
        "job": ["Only training jobs and notebooks are stopped when idle."]
    }


def test_exempt_job_is_never_stopped(world, client_for, wall):
    client = client_for(world.user("a", Role.MEMBER))
    job_id = submit(client, "tenant-a", long_training(wall.cluster, "debug", 8))
    wall.go(0)
    wall.go(6)
    feed(job_id, wall.at(0), wall.at(30 * HOUR), util=1.0)
    wall.go(2 * HOUR + 60)
    assert sweep().warned == 1
    flag = IdleFlag.objects.get(job_id=job_id)
    bad = client.post(f"{FLAGS}/{flag.pk}/exempt/", {}, format="json")
    assert bad.status_code == 400
    assert bad.json()["errors"] == {"reason": ["This field is required."]}
    response = client.post(f"{FLAGS}/{flag.pk}/exempt/", {"reason": "debugging NCCL hang"})
    assert response.status_code == 200
    assert response.json()["state"] == "exempt"
    assert response.json()["exempted_by"] == "a-member"
    for hours in (3, 10, 29):
        wall.go(hours * HOUR)
        assert sweep().total == 0
    assert state(job_id) == "running"
    entry = AuditEntry.objects.get(object_type="governance.idleflag", object_id=str(flag.pk))
    assert entry.before is not None and entry.after is not None
    assert entry.after["exempt_reason"] == "debugging NCCL hang"
    assert entry.before["state"] == "warned"


def test_busy_gpus_clear_the_warning(world, client_for, wall):
    client = client_for(world.user("a", Role.MEMBER))
    job_id = submit(client, "tenant-a", long_training(wall.cluster, "bursty", 8))
    wall.go(0)
    wall.go(6)
    feed(job_id, wall.at(0), wall.at(2 * HOUR), util=2.0)
    wall.go(2 * HOUR + 60)
    assert sweep().warned == 1
    feed(job_id, wall.at(2 * HOUR + 60), wall.at(2 * HOUR + 600), util=85.0)
    wall.go(2 * HOUR + 600)
    assert sweep().cleared == 1
    wall.go(2 * HOUR + 3600)  # past the old stop time: busy work is never stopped
    assert sweep().total == 0 and state(job_id) == "running"
    assert IdleFlag.objects.get(job_id=job_id).state == "cleared"


def test_stopped_job_frees_gpus_for_the_next_queued_job(world, client_for, wall):
    client = client_for(world.user("b", Role.MEMBER))
    idle = submit(client, "tenant-b", long_training(wall.cluster, "whole-pool", 32))
    wall.go(0)
    wall.go(6)
    assert state(idle) == "running"
    waiting = submit(client, "tenant-b", long_training(wall.cluster, "next", 16))
    wall.go(60)
    assert state(waiting) == "queued"
    feed(idle, wall.at(0), wall.at(3 * HOUR), util=4.0)
    wall.go(2 * HOUR + 60)
    assert sweep().warned == 1
    wall.go(2 * HOUR + 1700)
    assert sweep().stopped == 0 and state(waiting) == "queued"
    wall.now = wall.at(2 * HOUR + 60 + 1800)
    assert sweep().stopped == 1
    wall.go(2 * HOUR + 1900)  # the scheduler's next cycle admits the queued job
    wall.go(2 * HOUR + 1910)
    assert state(idle) == "cancelled"
    assert state(waiting) == "running"
    assert sum(len(a.devices) for a in Allocation.objects.filter(job_id=waiting)) == 16
