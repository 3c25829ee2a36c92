"""Hyperparameters, tags and the end of a run, through the SDK against the real runs API on a
live server: values JSON cannot carry, a bad tag, a standalone script that crashes."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import zhisuan

from apps.accounts.services import create_token
from apps.runs.models import MetricKey, Run, RunState
from apps.tenancy.models import Role
from tests.factories import make_project
from tests.sdk.conftest import present

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("sdk_env")]


@pytest.fixture
def login(world, live_server) -> dict[str, str]:
    """What `zs login` would store: the live server, a member's token, the tenant."""
    _, token = create_token(user=world.user("a", Role.MEMBER), name="sdk")
    return {"url": live_server.url, "token": token, "tenant": world.tenant_a.slug}


def test_hyperparameters_json_cannot_carry_are_sent_as_numbers_or_text(login):
    # Before: a Path (or a numpy scalar in init's config) failed to encode, the update was
    # retried as "cannot reach the platform" forever, every hyperparameter was lost and the
    # metrics waited behind it until exit.
    run = zhisuan.init(name="exp", config={"lr": np.float32(0.5)}, **login)
    assert run.enabled
    zhisuan.config(out=Path("/data/out"), betas=(0.9, 0.95), steps=np.int64(7),
                   clip=float("inf"), nested={"eps": np.float64(1e-8)},
                   sizes=np.array([1, 2]))  # fmt: skip
    zhisuan.log(1, loss=2.0)
    assert run.flush(20), run.stats
    zhisuan.finish(timeout_s=10)
    db_run = Run.objects.get(pk=present(run.id))
    assert db_run.config == {
        "lr": 0.5, "out": "/data/out", "betas": [0.9, 0.95], "steps": 7, "clip": "inf",
        "nested": {"eps": 1e-8}, "sizes": [1, 2],
    }  # fmt: skip
    assert MetricKey.objects.get(run=db_run, name="loss").count == 1
    assert run.stats.retries == 0


def test_a_bad_tag_is_dropped_without_losing_the_hyperparameters(login, caplog):
    # Before: the server refused the whole update for "my tag", config included, and the
    # warning read "refused 0 values".
    run = zhisuan.init(name="exp", **login)
    with caplog.at_level(logging.WARNING, logger="zhisuan"):
        zhisuan.config(lr=3e-4)
        zhisuan.tags("sft", "my tag", "7b")
    assert run.flush(20)
    zhisuan.finish(timeout_s=10)
    db_run = Run.objects.get(pk=present(run.id))
    assert db_run.config == {"lr": 3e-4}
    assert db_run.tags == ["sft", "7b"]
    assert "tag 'my tag' is not valid" in caplog.text
    assert "refused" not in caplog.text


def test_sdk_tags_add_to_tags_set_on_the_dashboard(login):
    # Before: tag() sent the SDK's whole list, so a tag a colleague set meanwhile was lost.
    run = zhisuan.init(name="exp", tags=["sft"], **login)
    assert run.flush(20)
    Run.objects.filter(pk=present(run.id)).update(tags=["sft", "baseline"])  # the dashboard
    zhisuan.tags("7b", "sft")
    assert run.flush(20)
    zhisuan.finish(timeout_s=10)
    assert Run.objects.get(pk=present(run.id)).tags == ["sft", "baseline", "7b"]


def test_a_refused_run_says_which_field(world, login, caplog):
    # Before: only "HTTP 400: Invalid input.", not that the project was the problem.
    elsewhere = make_project(tenant=world.tenant_b)
    with caplog.at_level(logging.WARNING, logger="zhisuan"):
        run = zhisuan.init(name="exp", project=elsewhere.pk, **login)
    assert not run.enabled
    assert "(HTTP 400: Invalid input. project: No such project in this tenant.)" in caplog.text


def _script(login: dict[str, str], body: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    script = textwrap.dedent(
        f"""
        import zhisuan
        run = zhisuan.init(name="crash", url={login["url"]!r}, token={login["token"]!r},
                           tenant={login["tenant"]!r})
        print(run.id)
        zhisuan.log(1, loss=1.0)
        """
    ) + textwrap.dedent(body)
    env = {"PATH": "/usr/bin:/bin", "XDG_CONFIG_HOME": str(tmp_path)}
    return subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=60)  # fmt: skip


def test_a_standalone_script_that_raises_leaves_its_run_failed(login, tmp_path):
    # Before: the exit handler marked it "finished" like a run that ended well.
    done = _script(login, 'raise RuntimeError("diverged")\n', tmp_path)
    assert done.returncode == 1 and "RuntimeError: diverged" in done.stderr
    assert Run.objects.get(pk=int(done.stdout.split()[0])).state == RunState.FAILED
    done = _script(login, "", tmp_path)
    assert done.returncode == 0, done.stderr
    assert Run.objects.get(pk=int(done.stdout.split()[0])).state == RunState.FINISHED


def test_checkpoints_of_a_run_made_outside_a_job_are_registered(login, tmp_path):
    # Before: registration read ZS_RUN_ID only, which a run from init(name=...) never has,
    # so its checkpoints silently never reached the platform.
    from zhisuan import checkpoint

    run = zhisuan.init(name="laptop", **login)
    checkpoint.save({"w": np.arange(4.0)}, 3, str(tmp_path / "ck"))
    checkpoint.wait()
    zhisuan.finish(timeout_s=10)
    ckpt = Run.objects.get(pk=present(run.id)).checkpoints.get()
    assert (ckpt.step, ckpt.state) == (3, "complete")


def test_trial_params_reads_the_values_the_platform_gives_a_sweeps_trial(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ZS_TRIAL_PARAMS", '{"lr": 0.0003, "opt": "adam"}')
    assert zhisuan.trial_params() == {"lr": 0.0003, "opt": "adam"}
    for other in ("", "[1, 2]", "not json"):
        monkeypatch.setenv("ZS_TRIAL_PARAMS", other)
        assert zhisuan.trial_params() == {}
    monkeypatch.delenv("ZS_TRIAL_PARAMS")
    assert zhisuan.trial_params() == {}
