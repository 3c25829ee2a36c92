"""Failed alert deliveries are retried with a growing delay until served or out of rounds,
and each receiver's state is in the alert's API answer."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from apps.health import notify, services
from apps.health.models import Alert, AlertReceiver
from apps.health.tasks import deliver_alert
from tests.health.conftest import Pool, result

pytestmark = pytest.mark.django_db


class _Flaky(BaseHTTPRequestHandler):
    """Answers 503 to the first ``failures`` posts, then 204."""

    failures = 0
    posts = 0

    def do_POST(self) -> None:
        json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).posts += 1
        self.send_response(503 if type(self).posts <= type(self).failures else 204)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def flaky() -> Iterator[str]:
    _Flaky.posts, _Flaky.failures = 0, 0
    server = HTTPServer(("127.0.0.1", 0), _Flaky)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/hook"
    server.shutdown()


def an_alert(sim: Pool) -> Alert:
    services.ingest_report(node=sim.nodes[0], results=[result("xid", "fail", ("xid:79",))])
    return Alert.objects.get()


def test_retry_delays_grow() -> None:
    assert [notify.retry_delay(n) for n in range(notify.DELIVERY_RETRIES)] == [30, 60, 120, 240]


def test_a_failed_delivery_is_retried_until_it_is_served(sim: Pool, flaky: str) -> None:
    _Flaky.failures = 2
    hook = AlertReceiver.objects.create(name="oncall", kind="webhook", target=flaky)
    mail = AlertReceiver.objects.create(name="ops", kind="email", target="ops@example.com")
    alert = an_alert(sim)
    deliver_alert.apply(args=(alert.pk,))  # eager: each retry runs at once
    alert.refresh_from_db()
    assert _Flaky.posts == 3 and alert.delivery_attempts == 3
    assert alert.deliveries == {str(hook.pk): "http 204", str(mail.pk): "sent"}


def test_a_delivery_that_keeps_failing_stops_and_says_failed(
    world, client_for, sim: Pool, flaky: str
) -> None:
    _Flaky.failures = 100
    hook = AlertReceiver.objects.create(name="oncall", kind="webhook", target=flaky)
    alert = an_alert(sim)
    deliver_alert.apply(args=(alert.pk,))
    alert.refresh_from_db()
    assert _Flaky.posts == 1 + notify.DELIVERY_RETRIES
    assert alert.delivery_attempts == 1 + notify.DELIVERY_RETRIES
    row = client_for(world.platform_admin).get(f"/api/v1/health/alerts/{alert.pk}/").json()
    assert row["delivery_attempts"] == 5
    assert row["delivery_status"] == [
        {
            "receiver": hook.pk,
            "receiver_name": "oncall",
            "state": "failed",
            "outcome": "error: HTTP Error 503: Service Unavailable",
        }
    ]


def test_delivery_state_per_receiver(world, client_for, sim: Pool) -> None:
    hook = AlertReceiver.objects.create(name="oncall", kind="webhook", target="http://x/")
    alert = an_alert(sim)
    Alert.objects.filter(pk=alert.pk).update(
        deliveries={str(hook.pk): "error: timed out", "999": "sent"}, delivery_attempts=1
    )
    rows = client_for(world.platform_admin).get("/api/v1/health/alerts/").json()["results"]
    assert rows[0]["delivery_status"] == [
        {"receiver": hook.pk, "receiver_name": "oncall", "state": "retrying",
         "outcome": "error: timed out"},
        {"receiver": 999, "receiver_name": None, "state": "sent", "outcome": "sent"},
    ]  # fmt: skip
