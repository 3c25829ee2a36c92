"""Bad input is a 400 with field errors, conflicting state a 409: rule codes agents can
report, strict boolean filters, receiver targets, one probe run per pool, one token per node;
the unknown-fault alert reads sensibly; health changes reach dashboards live."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from apps.core import events
from apps.health import probes, services
from apps.health.models import Alert, FaultRule, NodeToken, ProbeRun
from tests.health.conftest import Pool, report, result
from tests.jobs.test_pool_events import Listener

pytestmark = pytest.mark.django_db


def test_rule_codes_must_be_fault_codes(world, client_for, sim: Pool) -> None:
    admin = client_for(world.platform_admin)
    url = "/api/v1/health/rules/"
    body = {"severity": "warning", "fault_action": "alert"}
    bad = admin.post(url, {**body, "code": "BAD CODE!!"}, format="json")
    assert bad.status_code == 400 and list(bad.json()["errors"]) == ["code"]
    assert "family:detail" in bad.json()["errors"]["code"][0]
    for code in ("xid:13", "nvlink"):
        assert admin.post(url, {**body, "code": code}, format="json").status_code == 201
    duplicate = admin.post(url, {**body, "code": "xid:13"}, format="json")
    assert duplicate.status_code == 400 and "code" in duplicate.json()["errors"]
    assert FaultRule.objects.filter(code__in=["xid:13", "nvlink"]).count() == 2


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("nodes/", "cordoned"),
        ("nodes/", "is_spare"),
        ("nodes/summary/", "cordoned"),
        ("node-tokens/", "active"),
    ],
)
def test_boolean_filters_refuse_anything_but_true_or_false(
    world, client_for, sim: Pool, path, name
) -> None:
    admin = client_for(world.platform_admin)
    bad = admin.get(f"/api/v1/health/{path}", {name: "maybe"})
    assert bad.status_code == 400 and name in bad.json()["errors"]
    assert admin.get(f"/api/v1/health/{path}", {name: "false"}).status_code == 200


def test_cordoned_filter_still_filters(world, client_for, sim: Pool) -> None:
    services.cordon_node(node=sim.nodes[2], reason="test")
    admin = client_for(world.platform_admin)
    rows = admin.get("/api/v1/health/nodes/", {"cordoned": "true"}).json()["results"]
    assert [n["name"] for n in rows] == ["n2"]


def test_receiver_target_errors_are_under_target(world, client_for, sim: Pool) -> None:
    admin = client_for(world.platform_admin)
    url = "/api/v1/health/receivers/"
    for kind, target in (("webhook", "not a url"), ("email", "nobody-at-example")):
        bad = admin.post(url, {"name": kind, "kind": kind, "target": target}, format="json")
        assert bad.status_code == 400 and list(bad.json()["errors"]) == ["target"]
    ok = admin.post(url, {"name": "ops", "kind": "email", "target": "ops@example.com"},
                    format="json")  # fmt: skip
    assert ok.status_code == 201
    edit = admin.patch(f"{url}{ok.json()['id']}/", {"kind": "webhook"}, format="json")
    assert edit.status_code == 400 and list(edit.json()["errors"]) == ["target"]


def test_a_pool_runs_one_probe_at_a_time(world, client_for, sim: Pool) -> None:
    admin = client_for(world.platform_admin)
    url = "/api/v1/health/probe-runs/"
    first = admin.post(url, {"pool": sim.pool.pk}, format="json")
    assert first.status_code == 201
    second = admin.post(url, {"pool": sim.pool.pk}, format="json")
    assert second.status_code == 409
    assert f"probe run {first.json()['id']} pending" in second.json()["detail"]
    assert ProbeRun.objects.count() == 1
    probes.execute(first.json()["id"], seed=3)  # done: the next may start
    assert admin.post(url, {"pool": sim.pool.pk}, format="json").status_code == 201


def test_minting_a_node_token_revokes_the_earlier_one(world, client_for, sim: Pool) -> None:
    admin = client_for(world.platform_admin)
    url = "/api/v1/health/node-tokens/"
    old = admin.post(url, {"node": sim.nodes[0].pk}, format="json").json()
    other = admin.post(url, {"node": sim.nodes[1].pk}, format="json").json()
    new = admin.post(url, {"node": sim.nodes[0].pk}, format="json").json()
    assert services.node_for_token(old["token"]) is None
    assert services.node_for_token(new["token"]) is not None
    assert services.node_for_token(other["token"]) is not None  # another node's stays
    active = admin.get(url, {"active": "true"}).json()["results"]
    assert sorted(t["id"] for t in active) == sorted([other["id"], new["id"]])
    assert NodeToken.objects.get(pk=old["id"]).revoked_at is not None


def test_unknown_fault_alert_reads_sensibly(sim: Pool) -> None:
    report(sim.nodes[0], result("custom", "warn", ("weird:thing",)))
    report(sim.nodes[1], result("xid", "warn", ("xid:13",), detail="Graphics engine exception"))
    report(sim.nodes[2], result("xid", "warn", ("xid:31",)))
    messages = dict(Alert.objects.values_list("fault", "message"))
    assert messages == {
        "weird:thing": "n0: weird:thing (not in the fault catalogue)",
        "xid:13": "n1: xid:13 (Graphics engine exception)",
        "xid:31": "n2: xid:31 (rule xid)",
    }


@pytest.fixture
def listener() -> Iterator[Listener]:
    events._changed_pools().clear()
    listening = Listener()
    yield listening
    listening.close()


def test_incidents_and_alerts_opening_and_closing_reach_the_dashboard(
    world, sim: Pool, listener: Listener, django_capture_on_commit_callbacks
) -> None:
    """An alert-only fault changes no node, yet the Health page must hear of it."""
    with django_capture_on_commit_callbacks(execute=True):
        report(sim.nodes[0], result("disk", "warn", ("disk:full",)))
    opened = listener.received()
    with django_capture_on_commit_callbacks(execute=True):
        report(sim.nodes[0], result("disk", "ok"))
    closed = listener.received()
    for got in (opened, closed):
        assert [(p["type"], p["data"]["ids"]) for p in got] == [("pools.changed", [sim.pool.pk])]
    alert = Alert.objects.get()
    assert alert.state == "resolved"
