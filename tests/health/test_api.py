"""REST: platform admins only; node tokens report for their own node and nowhere else;
alerts are delivered to webhooks and email once; a probe run finds and cordons a slow node."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pytest
from django.core import mail

from apps.clusters.models import Node
from apps.health import notify, probes, services
from apps.health.models import Alert, AlertReceiver, FaultRule, Incident, NodeCheck, ProbeRun
from apps.tenancy.models import Role
from tests.health.conftest import Pool, result

pytestmark = pytest.mark.django_db
REPORT = "/api/v1/health/report/"


def agent_client(client_for, world, token: str):
    client = client_for(world.platform_admin)
    client.force_authenticate(user=None)
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def test_tenant_users_see_nothing_of_node_health(world, client_for, sim: Pool) -> None:
    for role in (Role.TENANT_ADMIN, Role.MEMBER, Role.VIEWER):
        client = client_for(world.user("a", role))
        for path in ("nodes", "incidents", "alerts", "rules", "node-tokens", "probe-runs"):
            assert client.get(f"/api/v1/health/{path}/").status_code == 403
        before = FaultRule.objects.count()
        response = client.post("/api/v1/health/rules/", {"code": "x"}, format="json")
        assert response.status_code == 403 and FaultRule.objects.count() == before


def test_node_token_reports_only_for_its_own_node(world, client_for, sim: Pool) -> None:
    admin = client_for(world.platform_admin)
    minted = admin.post("/api/v1/health/node-tokens/", {"node": sim.nodes[0].pk}, format="json")
    assert minted.status_code == 201 and minted.json()["token"].startswith("zsn_")
    agent = agent_client(client_for, world, minted.json()["token"])
    body = {"node": "n0", "results": [result("ib", "fail", ("ib:port_down",))]}
    answer = agent.post(REPORT, body, format="json")
    assert answer.status_code == 200 and answer.json() == {"actions": []}
    assert Node.objects.get(name="n0").cordoned
    other = agent.post(REPORT, {**body, "node": "n1"}, format="json")
    assert other.status_code == 403 and not Node.objects.get(name="n1").cordoned
    assert agent.get("/api/v1/health/nodes/").status_code == 401  # nowhere else
    bad = agent.post(REPORT, {"node": "n0", "results": [{"check": "x", "status": "??"}]},
                     format="json")  # fmt: skip
    assert bad.status_code == 400 and "results" in bad.json()["errors"]
    revoke = admin.delete(f"/api/v1/health/node-tokens/{minted.json()['id']}/")
    assert revoke.status_code == 204
    assert agent.post(REPORT, body, format="json").status_code == 401


def test_admin_grid_incidents_alert_inbox_and_acknowledge(world, client_for, sim: Pool) -> None:
    services.ingest_report(node=sim.nodes[2], results=[result("disk", "warn", ("disk:full",))])
    admin = client_for(world.platform_admin)
    grid = {n["name"]: n for n in admin.get("/api/v1/health/nodes/").json()["results"]}
    assert grid["n2"]["open_incidents"] == 1 and grid["n2"]["checks"][0]["status"] == "warn"
    history = admin.get(f"/api/v1/health/nodes/{sim.nodes[2].pk}/history/").json()["results"]
    assert [h["faults"] for h in history] == [["disk:full"]]
    incidents = admin.get("/api/v1/health/incidents/").json()["results"]
    assert [i["fault"] for i in incidents] == ["disk:full"]
    alert = admin.get("/api/v1/health/alerts/").json()["results"][0]
    acked = admin.post(f"/api/v1/health/alerts/{alert['id']}/acknowledge/")
    assert acked.status_code == 200 and acked.json()["acknowledged_by"] == world.platform_admin.pk
    cordon = admin.post(f"/api/v1/health/nodes/{sim.nodes[3].pk}/cordon/")
    assert cordon.status_code == 200 and cordon.json()["cordoned"] is True


def test_operators_edit_the_catalogue(world, client_for, sim: Pool) -> None:
    admin = client_for(world.platform_admin)
    rule = FaultRule.objects.get(code="disk:full")
    response = admin.patch(f"/api/v1/health/rules/{rule.pk}/", {"fault_action": "cordon"},
                           format="json")  # fmt: skip
    assert response.status_code == 200
    services.ingest_report(node=sim.nodes[0], results=[result("disk", "warn", ("disk:full",))])
    assert Node.objects.get(pk=sim.nodes[0].pk).cordoned
    invalid = admin.patch(f"/api/v1/health/rules/{rule.pk}/", {"fault_action": "remediate"},
                          format="json")  # fmt: skip
    assert invalid.status_code == 400 and "remediation" in invalid.json()["errors"]
    assert FaultRule.objects.get(pk=rule.pk).action == "cordon"


class _Hook(BaseHTTPRequestHandler):
    bodies: list[dict[str, Any]] = []

    def do_POST(self) -> None:
        self.bodies.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def hook() -> Iterator[str]:
    _Hook.bodies = []
    server = HTTPServer(("127.0.0.1", 0), _Hook)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/alerts"
    server.shutdown()


def test_alert_goes_to_webhook_and_email_once(sim: Pool, hook: str) -> None:
    AlertReceiver.objects.create(name="oncall", kind="webhook", target=hook)
    AlertReceiver.objects.create(name="ops", kind="email", target="ops@example.com")
    for _ in range(2):
        services.ingest_report(node=sim.nodes[0], results=[result("xid", "fail", ("xid:79",))])
    alert = Alert.objects.get()
    notify.deliver(alert.pk)
    notify.deliver(alert.pk)  # a retried task sends nothing twice
    assert [b["fault"] for b in _Hook.bodies] == ["xid:79"]
    assert len(mail.outbox) == 1 and mail.outbox[0].to == ["ops@example.com"]
    assert "n0: xid:79" in mail.outbox[0].subject
    # Written for the person on call: what, where, what was done, where to look; then the JSON.
    text = mail.outbox[0].body
    lines = text.splitlines()
    assert lines[0] == f"Critical: fault xid:79 on node n0 (pool {sim.pool.name})."
    assert lines[1] == alert.message
    assert lines[2] == "What it means: XID 79: GPU has fallen off the bus."
    incident = alert.incident
    assert incident is not None
    assert f"Incident #{incident.pk} (open)" in text
    assert "What the platform did:" in text and "cordoned" in text
    assert "Health page: http://" in text
    assert json.loads(text.split("The alert as webhooks receive it:\n", 1)[1]) == _Hook.bodies[0]


def test_probe_run_finds_and_cordons_the_slow_node(world, sim: Pool) -> None:
    Node.objects.filter(name="n2").update(labels={probes.SPEED_LABEL: 0.7})
    run = ProbeRun.objects.create(pool=sim.pool, requested_by=world.platform_admin)
    run = probes.execute(run.pk, seed=3)
    assert run.state == "done" and run.slow_nodes == ["n2"] and run.nodes == 4
    assert len(run.rounds) == 3
    assert Incident.objects.get().fault == "slow_node"
    assert Node.objects.get(name="n2").cordoned
    assert not NodeCheck.objects.exists()


def test_node_tokens_filter_by_node_name_and_revocation(world, client_for, sim: Pool) -> None:
    admin = client_for(world.platform_admin)
    url = "/api/v1/health/node-tokens/"
    ids = [
        admin.post(url, {"node": node.pk}, format="json").json()["id"]
        for node in (sim.nodes[0], sim.nodes[1], sim.nodes[1])
    ]
    assert admin.delete(f"{url}{ids[1]}/").status_code == 204
    listed = admin.get(url).json()["results"]
    assert [t["id"] for t in listed] == ids[::-1]
    assert all(t["token"] is None for t in listed)  # the plaintext was in the create answer only
    n1 = admin.get(url, {"node_name": "N1"}).json()["results"]
    assert [t["id"] for t in n1] == [ids[2], ids[1]]
    active = admin.get(url, {"node_name": "n1", "active": "true"}).json()["results"]
    assert [t["id"] for t in active] == [ids[2]]
    revoked = admin.get(url, {"active": "false"}).json()["results"]
    assert [t["id"] for t in revoked] == [ids[1]]


def test_probe_runs_answer_their_rounds_and_filter_by_pool(world, client_for, sim: Pool) -> None:
    Node.objects.filter(name="n2").update(labels={probes.SPEED_LABEL: 0.7})
    run = ProbeRun.objects.create(pool=sim.pool, requested_by=world.platform_admin)
    probes.execute(run.pk, seed=3)
    admin = client_for(world.platform_admin)
    body = admin.get(f"/api/v1/health/probe-runs/{run.pk}/").json()
    assert body["slow_nodes"] == ["n2"] and len(body["rounds"]) == 3
    screen = body["rounds"][0]
    assert screen["purpose"] == "screen" and screen["reference_gbps"] > 0
    assert all(len(pair) == 3 and pair[0] != pair[1] for pair in screen["pairs"])
    url = "/api/v1/health/probe-runs/"
    assert [r["id"] for r in admin.get(url, {"pool": sim.pool.pk}).json()["results"]] == [run.pk]
    assert admin.get(url, {"pool": sim.pool.pk + 999}).status_code == 400
    assert admin.get(url, {"state": "failed"}).json()["results"] == []
