"""Queue time limits (expire / escalate) and the governance API: policy bounds, isolation."""

from __future__ import annotations

import pytest

from apps.governance.models import IdleFlag, IdlePolicy, Notification, QueueFlag
from apps.governance.services import sweep
from apps.jobs.models import Job
from apps.tenancy.models import Role
from tests.conftest import World
from tests.governance.conftest import HOUR, Wall, feed, long_training, state, submit

pytestmark = pytest.mark.django_db
POLICY = "/api/v1/tenants/tenant-a/governance/policy/"


def test_job_waiting_past_its_limit_expires_with_the_blocking_reason(world, client_for, wall):
    owner = world.user("a", Role.MEMBER)
    client = client_for(owner)
    first = submit(client, "tenant-a", long_training(wall.cluster, "one", 16))
    second = submit(client, "tenant-a", long_training(wall.cluster, "two", 16, max_wait_s=600))
    wall.go(0)
    assert state(first) == "dispatching" and state(second) == "queued"
    wall.go(599)
    assert sweep().expired == 0 and state(second) == "queued"
    wall.go(601)
    assert sweep().expired == 1
    job = Job.objects.get(pk=second)
    assert job.state == "failed"
    assert job.state_reason.startswith("expired in queue (waited 10 min, limit 10 min: ")
    assert "over its limit of 24" in job.state_reason
    notice = Notification.objects.get(recipient=owner, kind="queue_expired")
    assert "over its limit of 24" in notice.body
    assert QueueFlag.objects.get(job_id=second).pending_code == "quota"
    # The event and the notice carry the scheduler's phrases, for the reader's language.
    event = job.events.get(reason="QueueExpired")
    assert event.message_key == "queueExpired"
    assert event.message_args["waited"] == {"seconds": 600}
    blocking = event.message_args["blocking"]
    assert blocking and blocking[0]["key"] == "overQuota"
    assert blocking[0]["args"]["limit"] == "24"  # quantities as the core writes them
    assert notice.detail["title"] == {"key": "noticeQueueExpired", "args": {"name": "two"}}
    [body] = notice.detail["body"]
    assert body["key"] == "noticeQueueExpiredBody"
    assert body["args"]["blocking"] == blocking and body["args"]["job"] == second
    listed = client.get("/api/v1/tenants/tenant-a/governance/notifications/").json()
    assert listed["results"][0]["detail"] == notice.detail
    assert sweep().total == 0


def test_escalate_policy_keeps_the_job_and_tells_owner_and_admins(world, client_for, wall):
    admin = client_for(world.user("a", Role.TENANT_ADMIN))
    assert admin.patch(POLICY, {"queue_action": "escalate"}, format="json").status_code == 200
    client = client_for(world.user("a", Role.MEMBER))
    submit(client, "tenant-a", long_training(wall.cluster, "one", 16))
    second = submit(client, "tenant-a", long_training(wall.cluster, "two", 16, max_wait_s=60))
    wall.go(0)
    wall.go(61)
    assert sweep().escalated == 1 and sweep().escalated == 0
    assert state(second) == "queued"
    recipients = set(
        Notification.objects.filter(kind="queue_escalated").values_list("recipient__username",
                                                                          flat=True)
    )  # fmt: skip
    assert recipients == {"a-member", "a-tenant_admin"}


def test_policy_bounds_and_roles(world: World, client_for) -> None:
    root = client_for(world.platform_admin)
    admin = client_for(world.user("a", Role.TENANT_ADMIN))
    member = client_for(world.user("a", Role.MEMBER))
    assert member.get(POLICY).json()["effective"]["training_idle_s"] == 7200
    assert member.patch(POLICY, {"grace_s": 600}, format="json").status_code == 403
    assert not IdlePolicy.objects.exists()
    bad = admin.patch(POLICY, {"util_threshold_pct": 150, "queue_action": "nope",
                               "training_idle_s": 3 * HOUR}, format="json")  # fmt: skip
    assert bad.status_code == 400
    assert set(bad.json()["errors"]) == {"util_threshold_pct", "queue_action"}
    looser = admin.patch(POLICY, {"training_idle_s": 3 * HOUR, "util_threshold_pct": 5},
                         format="json")  # fmt: skip
    assert looser.status_code == 400
    assert looser.json()["errors"] == {
        "training_idle_s": ["Must be at most the platform default (7200)."],
        "util_threshold_pct": ["Must be at least the platform default (10)."],
    }
    assert not IdlePolicy.objects.exists()
    ok = admin.patch(POLICY, {"training_idle_s": HOUR, "util_threshold_pct": 20}, format="json")
    assert ok.status_code == 200 and ok.json()["customized"] is True
    assert ok.json()["effective"]["training_idle_s"] == 3600
    # Platform default: only platform admins set it; a stricter default binds every tenant.
    default = "/api/v1/governance/default-policy/"
    assert admin.put(default, {"grace_s": 600}, format="json").status_code == 403
    assert root.put(default, {"training_idle_s": 1800}, format="json").status_code == 200
    assert member.get(POLICY).json()["effective"]["training_idle_s"] == 1800
    bad_default = root.put(default, {"grace_s": 0}, format="json")
    assert bad_default.status_code == 400 and "grace_s" in bad_default.json()["errors"]


def test_tenant_isolation_on_every_endpoint(world, client_for, wall: Wall) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    job_id = submit(client, "tenant-a", long_training(wall.cluster, "sft", 8))
    wall.go(0)
    wall.go(6)
    feed(job_id, wall.at(0), wall.at(3 * HOUR), util=0.0)
    wall.go(2 * HOUR + 60)
    sweep()
    flag = IdleFlag.objects.get(job_id=job_id)
    notice = Notification.objects.get(job_id=job_id)
    other = client_for(world.user("b", Role.TENANT_ADMIN))
    for url in (f"/api/v1/tenants/tenant-b/governance/flags/{flag.pk}/",
                f"/api/v1/tenants/tenant-b/governance/notifications/{notice.pk}/"):  # fmt: skip
        assert other.get(url).status_code == 404
    for action in ("keep-running", "exempt"):
        url = f"/api/v1/tenants/tenant-b/governance/flags/{flag.pk}/{action}/"
        assert other.post(url, {"reason": "x" * 5}, format="json").status_code == 404
        url = f"/api/v1/tenants/tenant-a/governance/flags/{flag.pk}/{action}/"
        assert other.post(url, {"reason": "x" * 5}, format="json").status_code == 404
        viewer = client_for(world.user("a", Role.VIEWER))
        assert viewer.post(url, {"reason": "x" * 5}, format="json").status_code == 403
    assert other.get(POLICY).status_code == 404
    assert other.patch(POLICY, {"grace_s": 600}, format="json").status_code == 404
    assert other.get("/api/v1/tenants/tenant-a/governance/efficiency/").status_code == 404
    viewer = client_for(world.user("a", Role.VIEWER))
    assert viewer.patch(POLICY, {"grace_s": 600}, format="json").status_code == 403
    assert not IdlePolicy.objects.exists()
    refreshed = IdleFlag.objects.get(pk=flag.pk)
    assert (refreshed.state, refreshed.extensions_used, refreshed.stop_at) == (
        "warned", 0, flag.stop_at)  # fmt: skip
    # The inbox is the caller's own: the tenant admin does not see the member's notice.
    admin_a = client_for(world.user("a", Role.TENANT_ADMIN))
    assert admin_a.get("/api/v1/tenants/tenant-a/governance/notifications/").json()["results"] == []
    inbox = client.get("/api/v1/tenants/tenant-a/governance/notifications/").json()
    assert [n["kind"] for n in inbox["results"]] == ["idle_warning"]
    read = client.post(f"/api/v1/tenants/tenant-a/governance/notifications/{notice.pk}/read/")
    assert read.status_code == 200 and read.json()["read_at"] is not None
    listed = client.get("/api/v1/tenants/tenant-a/governance/flags/").json()
    assert [f["job"] for f in listed["results"]] == [job_id]


def test_inbox_unread_filter_count_read_all_and_flags_by_job(world, client_for, wall) -> None:
    """What the dashboard's bell and the job page read: unread notices and their count, all
    marked read at once (the caller's own, in this tenant only), a job's own flag."""
    member = world.user("a", Role.MEMBER)
    client = client_for(member)
    jobs = [submit(client, "tenant-a", long_training(wall.cluster, f"sft{i}", 8)) for i in (1, 2)]
    inbox = "/api/v1/tenants/tenant-a/governance/notifications/"

    def notice(user, tenant, job: int | None, read: bool = False) -> Notification:
        return Notification.objects.create(
            tenant=tenant, recipient=user, kind="idle_warning", job_id=job, title="idle",
            body="b", read_at=wall.at(0) if read else None,
        )  # fmt: skip

    mine = [notice(member, world.tenant_a, jobs[0]), notice(member, world.tenant_a, jobs[1])]
    notice(member, world.tenant_a, None, read=True)
    other_tenant = notice(member, world.tenant_b, None)  # not a member there: never counted
    someone_else = notice(world.user("a", Role.TENANT_ADMIN), world.tenant_a, jobs[0])
    assert client.get(f"{inbox}unread-count/").json() == {"marked": 0, "unread": 2}
    unread = client.get(inbox, {"unread": "true"}).json()["results"]
    assert [n["id"] for n in unread] == [mine[1].pk, mine[0].pk]  # newest first
    assert len(client.get(inbox, {"unread": "false"}).json()["results"]) == 1
    assert [n["id"] for n in client.get(inbox, {"job": jobs[0]}).json()["results"]] == [mine[0].pk]
    viewer = client_for(world.user("a", Role.VIEWER))  # marking read is the viewer's own inbox
    assert viewer.post(f"{inbox}read-all/").json() == {"marked": 0, "unread": 0}
    assert client.post(f"{inbox}read-all/").json() == {"marked": 2, "unread": 0}
    assert client.get(f"{inbox}unread-count/").json()["unread"] == 0
    for untouched in (other_tenant, someone_else):
        untouched.refresh_from_db()
        assert untouched.read_at is None

    flags = "/api/v1/tenants/tenant-a/governance/flags/"
    made = [IdleFlag.objects.create(job_id=j, tenant=world.tenant_a, state=s)
            for j, s in zip(jobs, ("warned", "cleared"), strict=True)]  # fmt: skip
    by_job = client.get(flags, {"job": jobs[1]}).json()["results"]
    assert [f["id"] for f in by_job] == [made[1].pk]
    active = client.get(flags, {"state": ["warned", "extended"]}).json()["results"]
    assert [f["job"] for f in active] == [jobs[0]]
    assert client.get(flags, {"state": "asleep"}).status_code == 400
