"""Governance webhooks and SSRF: internal targets are refused when saved and again at each
delivery (DNS rebinding), deliveries go to the address that was checked, and only admins read
the URL. Real sockets on 127.0.0.1; host names are answered by a stub resolver, never DNS."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pytest
from django.core.validators import URLValidator
from django.test import override_settings
from django.utils import timezone

from apps.governance import notify, rules
from apps.governance.models import IdlePolicy, Notification
from apps.governance.services import set_tenant_policy, sweep
from apps.governance.webhook import UnsafeTargetError, resolve
from apps.jobs.notes import note
from apps.tenancy.models import Role
from tests.conftest import World

pytestmark = pytest.mark.django_db
POLICY = "/api/v1/tenants/tenant-a/governance/policy/"
PUBLIC = "93.184.216.34"  # a public address (never connected to in these tests)


class Receiver:
    """A real HTTP server on 127.0.0.1 that records the requests it gets."""

    def __init__(self) -> None:
        got: list[dict[str, Any]] = []
        self.answers: list[int] = []  # statuses to answer first, in order; then 204

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                got.append({"path": self.path, "host": self.headers["Host"],
                            "body": json.loads(body)})  # fmt: skip
                self.send_response(answers.pop(0) if answers else 204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.got = got
        answers = self.answers
        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.close()


@pytest.fixture
def names(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Host name -> address, for the stub resolver; address literals resolve as they are."""
    table: dict[str, str] = {}
    real: Callable[..., Any] = socket.getaddrinfo

    def fake(host: str, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host in table:
            return real(table[host], port, *args, **kwargs)
        try:
            socket.inet_pton(socket.AF_INET6 if ":" in host else socket.AF_INET, host)
        except OSError:
            raise socket.gaierror(socket.EAI_NONAME, "stub resolver: unknown name") from None
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", fake)
    return table


def _notice(world: World) -> Notification:
    return Notification.objects.create(
        tenant=world.tenant_a, recipient=world.user("a", Role.MEMBER), kind="idle_warning",
        title="idle", body="GPUs idle",
        detail={"title": note("noticeIdleStopped", name="sft").as_json(), "body": []},
    )  # fmt: skip


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://127.0.0.1:6379/",
        "http://[::1]:8000/",
        "http://[::ffff:127.0.0.1]/",
        "http://10.0.0.5/hook",
        "http://192.168.1.1/",
        "http://0.0.0.0:8000/",
        "http://224.0.0.1/",
        "http://240.0.0.1/",
        "http://100.64.0.1/",
        "http://internal.corp/hook",  # resolves to a private address
        "http://nowhere.invalid/hook",  # does not resolve
        "ftp://hooks.example.com/x",
    ],
)
def test_internal_targets_are_refused_when_saved(world, client_for, names, url) -> None:
    names["internal.corp"] = "10.1.2.3"
    admin = client_for(world.user("a", Role.TENANT_ADMIN))
    response = admin.patch(POLICY, {"webhook_url": url}, format="json")
    assert response.status_code == 400
    assert list(response.json()["errors"]) == ["webhook_url"]
    assert not IdlePolicy.objects.exists()


def test_a_public_target_is_saved(world, client_for, names) -> None:
    names["hooks.example.com"] = PUBLIC
    admin = client_for(world.user("a", Role.TENANT_ADMIN))
    url = "https://hooks.example.com/services/T0/B0/secret-token"
    response = admin.patch(POLICY, {"webhook_url": url}, format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["effective"]["webhook_url"] == url


def test_delivery_to_loopback_is_refused_and_nothing_is_sent(world, receiver) -> None:
    # Saved before this check existed (or straight in the database): delivery checks again.
    set_tenant_policy(
        tenant=world.tenant_a, values={"webhook_url": f"http://127.0.0.1:{receiver.port}/x"}
    )
    outcome = notify.deliver(_notice(world).pk)
    assert outcome["webhook"].startswith("refused: 127.0.0.1 resolves to 127.0.0.1, a loopback")
    assert receiver.got == []


def test_dns_rebinding_is_caught_at_delivery(world, client_for, names, receiver) -> None:
    names["hooks.example.com"] = PUBLIC
    admin = client_for(world.user("a", Role.TENANT_ADMIN))
    url = f"http://hooks.example.com:{receiver.port}/x"
    assert admin.patch(POLICY, {"webhook_url": url}, format="json").status_code == 200
    names["hooks.example.com"] = "127.0.0.1"  # the name now points inside
    outcome = notify.deliver(_notice(world).pk)
    assert outcome["webhook"].startswith("refused: hooks.example.com resolves to 127.0.0.1")
    assert receiver.got == []
    notice = Notification.objects.get()
    assert notice.deliveries["webhook"].startswith("refused:")


@override_settings(WEBHOOK_ALLOW_PRIVATE=True)
def test_the_operator_can_allow_private_targets(world, client_for, names, receiver) -> None:
    """ZS_WEBHOOK_ALLOW_PRIVATE: an on-premises receiver on the internal network. The POST
    goes to the address that was checked, with the URL's host name in the Host header."""
    names["hooks.corp"] = "127.0.0.1"
    admin = client_for(world.user("a", Role.TENANT_ADMIN))
    url = f"http://hooks.corp:{receiver.port}/notice?key=s3cret"
    assert admin.patch(POLICY, {"webhook_url": url}, format="json").status_code == 200
    notice = _notice(world)
    assert notify.deliver(notice.pk) == {"webhook": "http 204"}
    assert len(receiver.got) == 1
    got = receiver.got[0]
    assert got["path"] == "/notice?key=s3cret" and got["host"] == f"hooks.corp:{receiver.port}"
    assert got["body"]["id"] == notice.pk and got["body"]["tenant"] == "tenant-a"
    # The receiver may say it in its own language from the notes, like the dashboard does.
    assert got["body"]["detail"]["title"] == {"key": "noticeIdleStopped", "args": {"name": "sft"}}


def test_one_internal_address_among_several_refuses_the_name(monkeypatch) -> None:
    def two(host: str, port: int, *args: Any, **kwargs: Any) -> Any:
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (ip, port))
                for ip in (PUBLIC, "169.254.169.254")]  # fmt: skip

    monkeypatch.setattr(socket, "getaddrinfo", two)
    with pytest.raises(UnsafeTargetError, match=r"169\.254\.169\.254, a link-local address"):
        resolve("https://hooks.example.com/x")


def test_only_admins_read_the_webhook_url(world, client_for, names) -> None:
    names["hooks.example.com"] = PUBLIC
    url = "https://hooks.example.com:8443/services/secret-token?sig=abc"
    set_tenant_policy(tenant=world.tenant_a, values={"webhook_url": url})
    for user in (world.user("a", Role.TENANT_ADMIN), world.platform_admin):
        assert client_for(user).get(POLICY).json()["effective"]["webhook_url"] == url
    for role in (Role.MEMBER, Role.VIEWER):
        shown = client_for(world.user("a", role)).get(POLICY).json()["effective"]["webhook_url"]
        assert shown == "https://hooks.example.com:8443/..."
        assert "secret" not in shown
        # Still the URL the schema says the field is: a URI is ASCII (an "…" broke it).
        assert shown.isascii()
        URLValidator()(shown)


@override_settings(WEBHOOK_ALLOW_PRIVATE=True)
def test_a_failed_delivery_is_tried_again_later_and_given_up_in_the_end(
    world, names, receiver
) -> None:
    names["hooks.corp"] = "127.0.0.1"
    set_tenant_policy(
        tenant=world.tenant_a, values={"webhook_url": f"http://hooks.corp:{receiver.port}/n"}
    )

    def due_now(notice: Notification) -> None:  # the wait has passed
        Notification.objects.filter(pk=notice.pk).update(
            retry_at=timezone.now() - timedelta(seconds=1)
        )

    # A receiver that is down for a moment: 503, then 429, then it takes the notice.
    receiver.answers[:] = [503, 429]
    notice = _notice(world)
    before = timezone.now()
    assert notify.deliver(notice.pk) == {"webhook": "http 503"}
    notice.refresh_from_db()
    assert notice.delivery_attempts == 1 and notice.retry_at is not None
    assert 59 <= (notice.retry_at - before).total_seconds() <= 61
    assert sweep().redelivered == 0  # not due yet
    due_now(notice)
    assert sweep().redelivered == 1  # claimed and queued for the worker
    notice.refresh_from_db()
    assert notice.retry_at is None
    assert sweep().redelivered == 0  # claimed once
    assert notify.deliver(notice.pk) == {"webhook": "http 429"}  # what the worker runs
    notice.refresh_from_db()
    assert (notice.retry_at - timezone.now()).total_seconds() > 290  # 5 min after the second
    due_now(notice)
    assert sweep().redelivered == 1
    assert notify.deliver(notice.pk) == {"webhook": "http 204"}
    notice.refresh_from_db()
    assert (notice.delivery_attempts, notice.retry_at) == (3, None)
    assert [g["body"]["id"] for g in receiver.got] == [notice.pk] * 3

    # A receiver that says no (404) is not asked again; one that stays down is given up on
    # after five attempts.
    receiver.answers[:] = [404]
    final = _notice(world)
    assert notify.deliver(final.pk) == {"webhook": "http 404"}
    assert Notification.objects.get(pk=final.pk).retry_at is None
    assert notify.deliver(final.pk) == {"webhook": "http 404"}  # a late task: nothing sent
    down = _notice(world)
    receiver.answers[:] = [500] * 5
    for attempt in range(1, 6):
        assert notify.deliver(down.pk) == {"webhook": "http 500"}
        left = Notification.objects.get(pk=down.pk)
        assert left.delivery_attempts == attempt
        assert (left.retry_at is None) == (attempt == 5)
    assert len(receiver.got) == 3 + 1 + 5


def test_which_outcomes_are_worth_another_attempt() -> None:
    retry = [rules.delivery_retryable(o) for o in (
        "error: timed out", "http 500", "http 503", "http 429", "http 408",
        "http 404", "http 400", "http 204", "sent", "refused: 10.0.0.1 is private",
    )]  # fmt: skip
    assert retry == [True, True, True, True, True, False, False, False, False, False]
    assert [rules.retry_after_s(n) for n in (0, 1, 2, 3, 4, 5)] == [
        None, 60, 300, 1800, 7200, None,
    ]  # fmt: skip
