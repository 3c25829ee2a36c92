"""`zs user list|create|deactivate|activate|password` against the real users API, as a platform
admin; anyone else is refused."""

from __future__ import annotations

import io

import pytest

from apps.accounts.models import User
from apps.accounts.services import create_token
from apps.tenancy.models import Role
from tests.sdk.test_cli import zs

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def admin_cli(world, live_server, sdk_env):
    _, token = create_token(user=world.platform_admin, name="cli")
    assert zs("--url", live_server.url, "login", "--token", token, "--tenant", "tenant-a")[0] == 0
    return live_server.url


def _stdin(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(text))


def test_an_admin_creates_lists_deactivates_and_resets_a_user(
    admin_cli, monkeypatch, capsys
) -> None:
    _stdin(monkeypatch, "a-first-password-9\n")
    code, out = zs("user", "create", "erin", "--name", "Erin", "--email", "erin@lab.example",
                   "--password-stdin")  # fmt: skip
    assert code == 0, capsys.readouterr().err
    erin = User.objects.get(username="erin")
    assert out == (f"Created User erin (id {erin.pk}). Add them to a tenant: Settings, Members "
                   "(a tenant admin).\n")  # fmt: skip
    assert erin.check_password("a-first-password-9") and erin.email == "erin@lab.example"

    code, out = zs("user", "list", "--search", "a-")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["USERNAME", "NAME", "EMAIL", "TENANTS", "PLATFORM", "STATE",
                                "LAST-LOGIN"]  # fmt: skip
    member = next(line for line in lines if line.startswith("a-member "))
    assert "tenant-a:member" in member and "active" in member and member.endswith("never")

    code, out = zs("user", "deactivate", "erin")
    assert code == 0 and "deactivated: cannot sign in" in out
    erin.refresh_from_db()
    assert not erin.is_active
    assert "erin" not in zs("user", "list")[1].split()
    assert "deactivated" in zs("user", "list", "--all", "--search", "erin")[1]
    assert "already deactivated" in zs("user", "deactivate", "erin")[1]
    assert zs("user", "activate", "erin")[0] == 0
    erin.refresh_from_db()
    assert erin.is_active

    _stdin(monkeypatch, "another-password-42\n")
    code, out = zs("user", "password", "erin", "--password-stdin")
    assert code == 0 and out == f"User erin (id {erin.pk}): new password set; their browsers " \
        "are signed out.\n"  # fmt: skip
    erin.refresh_from_db()
    assert erin.check_password("another-password-42")


def test_refusals_are_clear(admin_cli, monkeypatch, capsys) -> None:
    _stdin(monkeypatch, "short\n")
    code, _ = zs("user", "create", "erin", "--password-stdin")
    assert code == 2
    err = capsys.readouterr().err
    assert "password: This password is too short: use at least 8 characters." in err
    assert not User.objects.filter(username="erin").exists()
    # No password on stdin and no terminal to ask on: said, nothing sent.
    _stdin(monkeypatch, "")
    assert zs("user", "create", "erin")[0] == 2
    assert "--password-stdin" in capsys.readouterr().err
    assert zs("user", "deactivate", "nobody")[0] == 4
    assert "no user 'nobody'" in capsys.readouterr().err
    # An admin cannot lock themselves out from the CLI either.
    assert zs("user", "deactivate", "root")[0] == 2
    assert "is_active: You cannot deactivate yourself." in capsys.readouterr().err


def test_a_member_is_refused(world, live_server, sdk_env, capsys) -> None:
    _, token = create_token(user=world.user("a", Role.MEMBER), name="cli")
    assert zs("--url", live_server.url, "login", "--token", token)[0] == 0
    assert zs("user", "list")[0] == 3
    assert "HTTP 403" in capsys.readouterr().err


def test_a_new_platform_s_first_admin_logs_in_with_no_tenant_yet(live_server, sdk_env, capsys):
    admin = User.objects.create_user("first", password="a-first-password-9", is_platform_admin=True)
    _, token = create_token(user=admin, name="cli")
    code, out = zs("--url", live_server.url, "login", "--token", token)
    assert code == 0 and "(no tenant yet)" in out
    code, out = zs("user", "list")
    assert code == 0 and out.splitlines()[1].startswith("first ")
    assert zs("list")[0] == 2
    assert "no tenant: pass --tenant" in capsys.readouterr().err
