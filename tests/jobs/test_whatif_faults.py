"""Node outages in a what-if replay: the window's own (apps/scheduling/whatif_faults.py) and
maintenance windows (sim/scenario.py::maintenance)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from apps.health.models import FaultAction, Incident, IncidentState, Severity
from apps.jobs.models import Job, JobKind, JobState
from apps.scheduling import whatif
from apps.scheduling.models import WhatIfRun
from apps.scheduling.sim.scenario import Maintenance, ScenarioError
from apps.scheduling.whatif_faults import Outage, window_outages
from tests.factories import make_node, make_pool, make_tenant

pytestmark = pytest.mark.django_db
T0 = datetime(2026, 11, 2, tzinfo=UTC)
H = 3600.0
URL = "/api/v1/scheduling/what-if/"


def _at(hours: float) -> datetime:
    return T0 + timedelta(hours=hours)


def _incident(node, action, opened, closed=None, *, cordoned=None, fault="xid:79") -> Incident:
    notes = [] if cordoned is None else [[_at(opened).isoformat(), "asked the agent to reset"],
                                         [_at(cordoned).isoformat(), "cordoned"]]  # fmt: skip
    return Incident.objects.create(
        node=node,
        fault=fault,
        severity=Severity.CRITICAL,
        action=action,
        state=IncidentState.OPEN if closed is None else IncidentState.CLOSED,
        actions_taken=notes,
        opened_at=_at(opened),
        last_seen_at=_at(opened),
        closed_at=None if closed is None else _at(closed),
    )


def test_incidents_that_took_a_node_out_of_service_become_outages():
    pool = make_pool()
    a, b, c, d = (make_node(pool=pool) for _ in range(4))
    spare = make_node(pool=pool, is_spare=True)
    _incident(a, FaultAction.CORDON_DRAIN, 2, 4)
    # A remediation that did not help, escalated to a cordon an hour after it opened ...
    _incident(b, FaultAction.CORDON, 2, 5, cordoned=3, fault="xid:48")
    # ... and a drain of the same node while it was cordoned, never closed: one outage,
    # drained from 4.5 h to the window's end.
    _incident(b, FaultAction.CORDON_DRAIN, 4.5, None)
    _incident(c, FaultAction.ALERT, 1, 2, fault="ecc")  # alert only: the node stayed in
    _incident(c, FaultAction.REMEDIATE, 1, 2, fault="xid:31")  # fixed in place
    _incident(d, FaultAction.CORDON, -2, 1)  # from before the window: from its start
    _incident(d, FaultAction.CORDON_DRAIN, -5, -1)  # over before the window
    _incident(d, FaultAction.CORDON, 11, 12)  # after it
    _incident(spare, FaultAction.CORDON_DRAIN, 1, 2)  # not a node of the replay
    ids = {str(n.pk) for n in (a, b, c, d)}
    outages = window_outages(T0, _at(10), ids)
    assert outages == [
        Outage(str(d.pk), 0.0, 1 * H, None),
        Outage(str(a.pk), 2 * H, 4 * H, 2 * H),
        Outage(str(b.pk), 3 * H, 10 * H, 4.5 * H),
    ]
    failure = outages[2].failure()
    assert (failure.time, failure.repair, failure.drain_after) == (3 * H, 7 * H, 1.5 * H)
    assert outages[0].failure().drain_after is None


@pytest.fixture
def one_node():
    """One 8-GPU node (and a spare), a job that held it from 0 to 6 h, and a drain of the
    node from 2 to 3 h that the job did not really meet (it ran elsewhere, say)."""
    tenant = make_tenant("vision")
    pool = make_pool()
    node = make_node(pool=pool)
    make_node(pool=pool, is_spare=True)
    Job.objects.create(
        tenant=tenant, name="long", kind=JobKind.TRAINING, pool=pool, priority=2,
        spec={"replica_groups": [{"name": "worker", "replicas": 1, "accelerators": 8}]},
        state=JobState.SUCCEEDED, submitted_at=T0, admitted_at=T0, finished_at=_at(6),
    )  # fmt: skip
    _incident(node, FaultAction.CORDON_DRAIN, 2, 3)
    return node


def test_a_replay_meets_the_windows_outages_unless_told_not_to(one_node):
    history = whatif.history_workload(T0, _at(10))
    assert history.faults == {
        "outages": 1, "drained": 1, "node_hours": 1.0, "replayed": True,
        "spans": [{"start_h": 2.0, "end_h": 3.0, "drained": True}],
    }  # fmt: skip
    [failure] = history.workload.failures
    assert (failure.node_id, failure.time, failure.repair) == (str(one_node.pk), 2 * H, 1 * H)
    [with_faults] = whatif.replay(history, ["ours"])
    # Drained at 2 h, back at 3 h, started over (no checkpoint known): done at 9 h.
    assert with_faults.summary["failure_interruptions"] == 1
    assert with_faults.summary["failure_lost_gpu_h"] == pytest.approx(16.0)
    healthy = whatif.changed(history, faults=False)
    assert healthy.workload.failures == () and healthy.faults["replayed"] is False
    assert healthy.faults["outages"] == 1  # what the window had, still reported
    [without] = whatif.replay(healthy, ["ours"])
    assert without.summary["failure_interruptions"] == 0
    # The allocation: 8 GPUs for 6 h of 10 without the outage; with it 8 GPUs for 2 h and
    # then 6 h more, over the 9 node-hours in service.
    assert without.summary["alloc_window"] == pytest.approx(0.6)
    assert with_faults.summary["alloc_window"] == pytest.approx(8 / 9)


def test_an_api_replay_can_leave_the_outages_out(
    world, client_for, one_node, monkeypatch, django_capture_on_commit_callbacks
):
    monkeypatch.setattr(timezone, "now", lambda: _at(10))
    monkeypatch.setattr("apps.scheduling.tasks.whatif_replay.delay", lambda pk: None)
    client = client_for(world.platform_admin)
    with django_capture_on_commit_callbacks(execute=True):
        default = client.post(URL, {"hours": 10, "policies": ["ours"]}, format="json").json()
        healthy = client.post(
            URL, {"hours": 10, "policies": ["ours"], "replay_faults": False}, format="json"
        ).json()
    assert (default["replay_faults"], healthy["replay_faults"]) == (True, False)
    for body, replayed in ((default, True), (healthy, False)):
        whatif.execute(body["id"])
        result = client.get(f"{URL}{body['id']}/").json()["result"]
        assert result["faults"] == {
            "outages": 1, "drained": 1, "node_hours": 1.0, "replayed": replayed,
            "spans": [{"start_h": 2.0, "end_h": 3.0, "drained": True}],
        }  # fmt: skip
        [ours] = result["policies"]
        assert ours["completed"] == 1 and ours["preemptions"] == 0
        # 8/9 with the outage (over the node-hours in service), 0.6 without
        assert ours["allocation"] == pytest.approx(8 / 9 if replayed else 0.6)
    response = client.post(URL, {"hours": 1, "replay_faults": "sometimes"}, format="json")
    assert response.status_code == 400 and "replay_faults" in response.json()["errors"]


def test_whatif_command_replays_with_and_without_the_outages(one_node, monkeypatch):
    monkeypatch.setattr(timezone, "now", lambda: _at(10))
    out = StringIO()
    call_command("whatif", "--hours", "10", "--policies", "ours", stdout=out)
    assert (
        "Node outages in the window (health incidents that cordoned a node): 1, 1 of them "
        "drained, 1.0 node-hours; replayed" in out.getvalue()
    )
    out = StringIO()
    call_command("whatif", "--hours", "10", "--policies", "ours", "--faults", "none", stdout=out)
    assert "1.0 node-hours; left out: every node healthy" in out.getvalue()
    out = StringIO()
    call_command(
        "whatif", "--hours", "10", "--policies", "ours", "--faults", "replay,none", stdout=out
    )
    text = out.getvalue()
    assert "## What-if: 2 replays" in text
    assert "| as it is |" in text and "| as it is, no outages |" in text
    for bad in ("sometimes", "replay,replay", ""):
        with pytest.raises(CommandError, match="--faults"):
            call_command("whatif", "--faults", bad, stdout=StringIO())


def test_a_run_stores_at_most_max_spans_outages_one_by_one(monkeypatch):
    from apps.scheduling import whatif_faults

    monkeypatch.setattr(whatif_faults, "MAX_SPANS", 2)
    outages = [Outage(str(i), i * H, (i + 1) * H, None) for i in range(3)]
    stored = whatif_faults.summary(outages, replayed=True)
    assert stored["outages"] == 3 and stored["node_hours"] == 3.0
    assert [s["start_h"] for s in stored["spans"]] == [0.0, 1.0]


def test_a_maintenance_window_takes_servers_out_at_a_chosen_time(one_node):
    history = whatif.history_workload(T0, _at(10))
    pool = history.workload.nodes[0].pool
    planned = whatif.changed(history, windows=[Maintenance(pool, 1, 0.5 * H, 1.0)])
    assert planned.maintenance == [
        {"pool": pool, "nodes": 1, "start_h": 0.5, "hours": 1.0, "drain": True}
    ]
    assert len(planned.workload.failures) == 2  # the real outage and the window
    [r] = whatif.replay(planned, ["ours"])
    # Drained at 0.5 h (back at 1.5 h), then again by the real outage at 2 h (back at 3 h).
    assert r.summary["failure_interruptions"] == 2
    assert r.summary["failure_lost_gpu_h"] == pytest.approx(8 * 0.5 + 8 * 0.5)
    cordoned = whatif.changed(history, windows=[Maintenance(pool, 1, 0.5 * H, 1.0, drain=False)])
    [r] = whatif.replay(cordoned, ["ours"])
    assert r.summary["failure_interruptions"] == 1  # the job ran on through the cordon
    with pytest.raises(ScenarioError, match="starts after the replayed window ends"):
        whatif.changed(history, windows=[Maintenance(pool, 1, 10 * H, 1.0)])
    with pytest.raises(ScenarioError, match="has 1 nodes"):
        whatif.changed(history, windows=[Maintenance(pool, 2, 0.0, 1.0)])


def test_an_api_replay_with_a_maintenance_window(
    world, client_for, one_node, monkeypatch, django_capture_on_commit_callbacks
):
    monkeypatch.setattr(timezone, "now", lambda: _at(10))
    monkeypatch.setattr("apps.scheduling.tasks.whatif_replay.delay", lambda pk: None)
    client = client_for(world.platform_admin)
    window = {"pool": one_node.pool_id, "nodes": 1, "start_h": 0.5, "hours": 1.0}
    with django_capture_on_commit_callbacks(execute=True):
        body = client.post(
            URL, {"hours": 10, "policies": ["ours"], "maintenance": [window]}, format="json"
        ).json()
    assert body["maintenance"] == [{**window, "drain": True}]
    whatif.execute(body["id"])
    result = client.get(f"{URL}{body['id']}/").json()["result"]
    [made] = result["maintenance"]
    assert (made["nodes"], made["start_h"], made["hours"], made["drain"]) == (1, 0.5, 1.0, True)
    bad = [
        ({**window, "nodes": 2}, "has 1 nodes"),  # the pool has one server (and a spare)
        ({**window, "start_h": 10}, "inside the replayed hours"),
        ({**window, "hours": 0}, "hours"),
        ({**window, "pool": 99999}, "pool"),
    ]
    for change, why in bad:
        response = client.post(
            URL, {"hours": 10, "policies": ["ours"], "maintenance": [change]}, format="json"
        )
        assert response.status_code == 400, change
        assert why in str(response.json()["errors"]["maintenance"]), response.json()
    many = {"hours": 10, "policies": ["ours"], "maintenance": [window] * 21}
    response = client.post(URL, many, format="json")
    assert response.status_code == 400
    assert response.json()["errors"]["maintenance"] == ["At most 20 windows."]
    assert WhatIfRun.objects.count() == 1


def test_whatif_command_asks_when_to_take_servers_down(one_node, monkeypatch):
    monkeypatch.setattr(timezone, "now", lambda: _at(10))
    out = StringIO()
    pool = f"{one_node.pool.cluster.name}/{one_node.pool.name}"
    call_command(
        "whatif", "--hours", "10", "--policies", "ours", "--maintenance", f"{pool}:1@0.5,4+1",
        stdout=out,
    )  # fmt: skip
    text = out.getvalue()
    assert "## What-if: 2 replays" in text
    assert f"| as it is, {pool} 1 nodes drained from hour 0.5 for 1 h | ours |" in text
    assert f"| as it is, {pool} 1 nodes drained from hour 4 for 1 h | ours |" in text
    out = StringIO()
    call_command(
        "whatif", "--hours", "10", "--policies", "ours", "--maintenance", f"{pool}:1@1+2:cordon",
        stdout=out,
    )  # fmt: skip
    assert f"Replayed with maintenance: {pool} 1 nodes cordoned from hour 1 for 2 h" in (
        out.getvalue()
    )
    for bad in (f"{pool}:0@1+2", f"{pool}:1@1", f"{pool}:1@-1+2", f"{pool}:1@1+2:drain", "1@1+2"):
        with pytest.raises(CommandError, match="--maintenance"):
            call_command("whatif", "--maintenance", bad, stdout=StringIO())
