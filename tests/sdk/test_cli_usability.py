"""`zs` against the real API on a live server: input it must not crash on, messages that say
what to do, and the small commands and options around them."""

from __future__ import annotations

import getpass
import json
import os
import subprocess
import sys
import threading
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from zhisuan import _config
from zhisuan.cli import JOB_STATES, _when
from zhisuan.client import _flatten

from apps.accounts.services import create_token
from apps.clusters.models import ResourcePool
from apps.jobs.models import Job, JobState
from apps.quotas.models import Quota
from apps.tenancy.models import Role
from tests.factories import make_cluster, make_node, make_pool
from tests.sdk.test_cli import JOB_YAML, zs

pytestmark = pytest.mark.django_db(transaction=True)


@dataclass
class Server:
    url: str
    token: str


@pytest.fixture
def server(world: Any, live_server: Any, sdk_env: Any) -> Server:
    pool = make_pool(cluster=make_cluster(name="local"), name="train")
    make_node(pool=pool, name="n0")
    Quota.objects.create(tenant=world.tenant_a, pool=pool, accelerator_model="A800",
                         guarantee=8, borrow_limit=0)  # fmt: skip
    _, token = create_token(user=world.user("a", Role.MEMBER), name="cli")
    return Server(str(live_server.url), token)


@pytest.fixture
def logged_in(server: Server) -> Server:
    assert zs("--url", server.url, "login", "--token", server.token)[0] == 0
    return server


def job_file(tmp_path: Path, text: str = JOB_YAML, name: str = "job.yaml") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def with_pool(tmp_path: Path, pool: str) -> str:
    return job_file(tmp_path, JOB_YAML.replace("pool: train", f"pool: {pool}"))


def zs_process(*argv: str, env: dict[str, str] | None = None, **kwargs: Any) -> Any:
    """`zs` as its own process (what a terminal runs): the locale, pipes and exit are real."""
    return subprocess.run(
        [sys.executable, "-m", "zhisuan.cli", *argv],
        env={**os.environ, **(env or {})}, stderr=subprocess.PIPE, text=True, timeout=60,
        check=False, **kwargs,
    )  # fmt: skip


# ---------------------------------------------------------------------------- zs submit
def test_submit_keeps_command_and_env_text_and_sends_dates_as_text(logged_in, tmp_path, capsys):
    text = JOB_YAML.replace(
        "command: [torchrun, --nproc_per_node=8, train.py]",
        "command: [python, train.py, --lr, 1e-3, --tag, 007]",
    ).replace("NCCL_DEBUG: WARN", "NCCL_DEBUG: WARN\n  USE_FP8: no\n  RUN_DATE: 2024-06-01")
    code, _ = zs("submit", "-f", job_file(tmp_path, text))
    assert code == 0, capsys.readouterr().err
    spec = Job.objects.get().spec
    assert spec["command"] == ["python", "train.py", "--lr", "1e-3", "--tag", "007"]
    assert spec["env"] == {"NCCL_DEBUG": "WARN", "USE_FP8": "no", "RUN_DATE": "2024-06-01"}
    # --set reads its value as the same field in the file would be read
    code, _ = zs("submit", "-f", job_file(tmp_path), "--set", "name=second",
                 "--set", "args=[--lr, 1e-3]")  # fmt: skip
    assert code == 0, capsys.readouterr().err
    assert Job.objects.get(name="second").spec["args"] == ["--lr", "1e-3"]


@pytest.mark.parametrize("value", ["[x", "{a", "[a}"])
def test_a_bad_set_value_is_a_usage_error_naming_the_set(logged_in, tmp_path, capsys, value):
    code, _ = zs("submit", "-f", job_file(tmp_path), "--set", f"name={value}")
    err = capsys.readouterr().err
    assert code == 2 and err.startswith(f"zs: error: --set 'name={value}': the value is not")
    assert "Traceback" not in err and len(err.splitlines()) == 1
    assert zs("submit", "-f", job_file(tmp_path), "--set", "=x")[0] == 2
    assert Job.objects.count() == 0


def test_a_parse_error_names_the_file_once(logged_in, tmp_path, capsys):
    code, _ = zs("submit", "-f", job_file(tmp_path, "name: [unclosed\n", "malformed.yaml"))
    err = capsys.readouterr().err
    assert code == 2 and err.count("malformed.yaml") == 1 and len(err.splitlines()) == 1


def test_job_files_are_read_as_utf8_whatever_the_locale(logged_in, tmp_path):
    text = JOB_YAML.replace("NCCL_DEBUG: WARN", 'NCCL_DEBUG: WARN\n  NOTE: "微调 训练"')
    path = job_file(tmp_path, "# 中文注释\n" + text)
    # an ASCII locale, as LC_ALL=C without Python's UTF-8 coercion (or GBK on Windows)
    ascii_locale = {"LC_ALL": "C", "LANG": "C", "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0"}
    done = zs_process("submit", "-f", path, env=ascii_locale, stdout=subprocess.PIPE)
    assert done.returncode == 0, done.stderr
    assert Job.objects.get().spec["env"]["NOTE"] == "微调 训练"
    (tmp_path / "latin1.yaml").write_bytes("name: caf\xe9\n".encode("latin-1"))
    code, _ = zs("submit", "-f", str(tmp_path / "latin1.yaml"))
    assert code == 2


def test_nested_field_errors_print_one_line_per_leaf(logged_in, tmp_path, capsys):
    text = JOB_YAML.replace("accelerators: 8", "accelerators: 8\n    gpus: 8")
    code, _ = zs("submit", "-f", job_file(tmp_path, text))
    err = capsys.readouterr().err
    assert code == 2
    assert "  replica_groups[0].gpus: Unknown field; it cannot be set on a job.\n" in err
    assert "{" not in err
    # A typo at the top is reported beside the nested one, in one answer.
    text = text.replace("name:", "priviledged: true\nname:", 1)
    code, _ = zs("submit", "-f", job_file(tmp_path, text))
    err = capsys.readouterr().err
    assert code == 2
    assert "  priviledged: Unknown field; it cannot be set on a job.\n" in err
    assert "  replica_groups[0].gpus: Unknown field; it cannot be set on a job.\n" in err


def test_flattening_field_errors_of_either_shape():
    out: dict[str, list[str]] = {}
    _flatten({"replica_groups": [{}, {"gpus": ["Unknown."], "volumes": {"0": {"name": ["x"]}}}],
              "name": ["bad"], "env": {"A": "not a string"}}, "", out)  # fmt: skip
    assert out == {"replica_groups[1].gpus": ["Unknown."],
                   "replica_groups[1].volumes[0].name": ["x"], "name": ["bad"],
                   "env.A": ["not a string"]}  # fmt: skip


def test_errors_of_a_whole_object_are_printed_under_its_own_name(logged_in, tmp_path, capsys):
    # DRF names them non_field_errors; before, `replica_groups.non_field_errors:` was shown.
    code, _ = zs("submit", "-f", job_file(tmp_path), "--set", "replica_groups=3")
    err = capsys.readouterr().err
    assert code == 2
    assert '  replica_groups: Expected a list of items but got type "int".\n' in err
    assert "non_field_errors" not in err
    out: dict[str, list[str]] = {}
    _flatten({"non_field_errors": ["The whole request."], "topology": {"non_field_errors": ["x"]}},
             "", out)  # fmt: skip
    assert out == {"": ["The whole request."], "topology": ["x"]}


def test_a_pool_name_in_two_clusters_needs_its_cluster(logged_in, world, tmp_path, capsys):
    pools = {}
    for cluster in ("west", "east"):
        pool = make_pool(cluster=make_cluster(name=cluster), name="a800-train")
        make_node(pool=pool, name=f"{cluster}-n0")
        Quota.objects.create(tenant=world.tenant_a, pool=pool, accelerator_model="A800",
                             guarantee=8, borrow_limit=0)  # fmt: skip
        pools[cluster] = pool
    code, _ = zs("submit", "-f", with_pool(tmp_path, "a800-train"))
    assert code == 2
    assert capsys.readouterr().err.strip() == (
        "zs: error: pool name 'a800-train' is in clusters east and west: write cluster/pool "
        "(e.g. east/a800-train) or the pool id"
    )
    code, _ = zs("submit", "-f", with_pool(tmp_path, "west/a800-train"))
    assert code == 0, capsys.readouterr().err
    assert Job.objects.get().pool == pools["west"]
    code, _ = zs("submit", "-f", with_pool(tmp_path, "nope"))
    assert code == 2
    assert "pools: east/a800-train, train, west/a800-train" in capsys.readouterr().err
    code, out = zs("pools")
    clusters = {line.split()[2]: line.split()[1] for line in out.splitlines()[1:]}
    assert code == 0 and out.split()[:3] == ["ID", "CLUSTER", "POOL"]
    assert sorted(line.split()[1] for line in out.splitlines()[1:]) == ["east", "local", "west"]
    assert clusters["train"] == "local"


# ---------------------------------------------------------------------------- no tracebacks
def test_a_reader_that_goes_away_ends_zs_quietly(logged_in, tmp_path):
    assert zs("submit", "-f", job_file(tmp_path))[0] == 0
    job = Job.objects.get()
    for argv in (["list", "--limit", "1000"], ["describe", str(job.pk)]):
        read, write = os.pipe()
        os.close(read)  # `| head -1` that has already exited
        try:
            done = zs_process(*argv, stdout=write)
        finally:
            os.close(write)
        assert done.returncode == 1 and done.stderr == "", done.stderr


def test_timeout_must_be_above_zero(capsys, sdk_env):
    for argv in (["--timeout", "0", "list"], ["list", "--timeout", "-1"]):
        with pytest.raises(SystemExit) as usage:
            zs(*argv)
        assert usage.value.code == 2 and "must be more than 0 seconds" in capsys.readouterr().err


class Terminal:
    """stdin as a terminal; reading it (echo on) is what the CLI must never do for a token."""

    def isatty(self) -> bool:
        return True

    def readline(self, size: int = -1) -> str:
        raise AssertionError("the token was read with echo on")

    read = readline


def answers(*replies: str | type[BaseException]) -> Any:
    left = list(replies)

    def fake_getpass(prompt: str = "") -> str:
        reply = left.pop(0)
        if isinstance(reply, str):
            return reply
        raise reply()

    return fake_getpass


def test_the_token_prompt_never_echoes_and_ctrl_d_stops(server, monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", Terminal())
    monkeypatch.setattr(getpass, "getpass", answers(EOFError))  # Ctrl-D
    assert zs("--url", server.url, "login")[0] == 2
    assert "no token given" in capsys.readouterr().err
    # Enter at the hidden prompt: asked again, hidden again
    monkeypatch.setattr(getpass, "getpass", answers("", server.token))
    code, out = zs("--url", server.url, "login")
    assert code == 0 and "Logged in" in out
    assert "the token was empty" in capsys.readouterr().err

    def echoing(prompt: str = "") -> str:  # getpass where it cannot turn echo off
        warnings.warn("Can not control echo on the terminal.", getpass.GetPassWarning,
                      stacklevel=2)  # fmt: skip
        return server.token

    monkeypatch.setattr(getpass, "getpass", echoing)
    assert zs("--url", server.url, "login")[0] == 2
    assert "this terminal cannot hide the token" in capsys.readouterr().err


# ---------------------------------------------------------------------------- login, logout
def test_url_and_tenant_work_after_the_command_as_the_hints_say(server, capsys):
    assert zs("list")[0] == 3
    assert "run `zs login --url URL`" in capsys.readouterr().err
    code, out = zs("login", "--url", server.url, "--token", server.token, "--tenant", "tenant-a")
    assert code == 0 and "tenant tenant-a" in out
    assert zs("list", "--tenant", "tenant-a", "--url", server.url, "--timeout", "5")[0] == 0
    assert zs("list", "--tenant", "tenant-b")[0] == 4  # not a member of it
    assert zs("inference", "list", "--url", server.url)[0] == 0
    assert zs("inference", "--tenant", "tenant-a", "list")[0] == 0


def test_login_takes_the_server_tenant_and_token_from_the_environment(server, monkeypatch, capsys):
    monkeypatch.setenv("ZS_API_URL", server.url)
    monkeypatch.setenv("ZS_TENANT", "nope")
    assert zs("login", "--token", server.token)[0] == 4
    assert "no tenant 'nope'" in capsys.readouterr().err
    monkeypatch.setenv("ZS_TENANT", "tenant-a")
    monkeypatch.setenv("ZS_TOKEN", server.token)
    code, out = zs("login")
    assert code == 0 and f"Logged in to {server.url} (tenant tenant-a)" in out
    assert _config.load_file()["url"] == server.url


def test_logout_forgets_the_token(logged_in, capsys):
    code, out = zs("logout")
    path = _config.config_path()
    assert code == 0 and f"the token is removed from {path}" in out
    assert json.loads(path.read_text()) == {"url": logged_in.url, "tenant": "tenant-a"}
    assert zs("list")[0] == 3
    code, out = zs("logout")
    assert code == 0 and out.strip() == f"Not logged in: no token is stored in {path}."
    # the next login needs no --url: the server is remembered
    assert zs("login", "--token", logged_in.token)[0] == 0


# ---------------------------------------------------------------------------- wrong servers
@dataclass
class Page:
    status: int = 200
    content_type: str = "text/html; charset=utf-8"
    body: str = "<!doctype html><html><body><h1>Dashboard</h1></body></html>"
    url: str = ""


@pytest.fixture
def other_server() -> Iterator[Page]:
    """A server that is not the Zhisuan API (a dashboard page, a proxy's error page)."""
    page = Page()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            data = page.body.encode()
            self.send_response(page.status)
            self.send_header("Content-Type", page.content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:
            self.do_GET()

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    page.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    yield page
    httpd.shutdown()
    httpd.server_close()


def test_a_url_that_is_not_the_api_says_so_without_the_page(
    server, other_server, capsys, monkeypatch
):
    hint = "is the URL the platform's base address, e.g. http://host:8000?"
    for status in (200, 404):
        other_server.status = status
        assert zs("--url", other_server.url, "login", "--token", server.token)[0] == 1
        err = capsys.readouterr().err
        assert err.strip() == (f"zs: error: the server at {other_server.url} did not answer as "
                               f"a Zhisuan API (HTTP {status}, text/html): {hint}")  # fmt: skip
    other_server.status = 502
    assert zs("--url", other_server.url, "login", "--token", server.token)[0] == 1
    err = capsys.readouterr().err
    assert "answered HTTP 502 (text/html) instead of the Zhisuan API" in err and "<" not in err
    # the API's own path given as the base: its JSON 404
    assert zs("--url", server.url + "/api/v1", "login", "--token", server.token)[0] == 1
    assert hint in capsys.readouterr().err
    # JSON that is not the API's: still no traceback
    other_server.status, other_server.content_type, other_server.body = (
        200,
        "application/json",
        "[{}]",
    )
    assert zs("--url", other_server.url, "login", "--token", server.token)[0] == 1
    assert hint in capsys.readouterr().err
    assert zs("--url", other_server.url, "--tenant", "t", "pools")[0] == 3  # no token stored
    assert zs("--url", server.url, "login", "--token", server.token)[0] == 0
    capsys.readouterr()
    other_server.body = '[{"id": 1}]'
    assert zs("--url", other_server.url, "pools")[0] == 3  # the stored token stays home
    assert "the stored token is for" in capsys.readouterr().err
    monkeypatch.setenv("ZS_TOKEN", server.token)
    assert zs("--url", other_server.url, "pools")[0] == 1
    assert capsys.readouterr().err.startswith("zs: error: unexpected ")


def test_a_url_without_a_scheme_is_refused_with_an_example(server, monkeypatch, capsys):
    assert zs("--url", "127.0.0.1:8823", "login", "--token", server.token)[0] == 2
    assert capsys.readouterr().err.strip() == (
        "zs: error: the server address '127.0.0.1:8823' must start with http:// or https:// "
        "(e.g. http://127.0.0.1:8823)"
    )
    monkeypatch.setenv("ZS_API_URL", "127.0.0.1:8823")
    monkeypatch.setenv("ZS_TOKEN", server.token)
    assert zs("--tenant", "tenant-a", "list")[0] == 2


# ---------------------------------------------------------------------------- jobs
def test_cancel_of_a_finished_job_says_there_was_nothing_to_cancel(logged_in, tmp_path):
    assert zs("submit", "-f", job_file(tmp_path))[0] == 0
    job = Job.objects.get()
    Job.objects.filter(pk=job.pk).update(state=JobState.SUCCEEDED)
    code, out = zs("cancel", str(job.pk))
    assert code == 0
    assert out.strip() == (f"Job {job.pk} (llama-sft) had already finished (succeeded); "
                           "nothing to cancel.")  # fmt: skip
    assert Job.objects.get().state == JobState.SUCCEEDED


def test_describe_names_the_pool_shows_the_spec_and_says_pending_once(logged_in, tmp_path):
    assert zs("submit", "-f", job_file(tmp_path))[0] == 0
    job = Job.objects.get()
    pool = ResourcePool.objects.get(name="train")
    message = "quota: tenant 'tenant-a' would use 16 of its 8 A800"
    Job.objects.filter(pk=job.pk).update(pending_code="quota", pending_message=message)
    code, out = zs("describe", str(job.pk))
    assert code == 0
    lines = out.splitlines()
    assert f"Pool:           local/train (id {pool.pk})" in lines
    assert f"Pending:        {message}" in lines
    assert "Image:          registry.example.com/ml/pytorch:2.5-cuda12" in lines
    assert "Command:        torchrun --nproc_per_node=8 train.py" in lines
    assert "Replica groups: worker: 1 x 8 accelerators" in lines
    submitted = next(line for line in lines if line.startswith("Submitted:"))
    assert submitted.endswith(" UTC")
    Job.objects.filter(pk=job.pk).update(pending_message="waiting for nodes")
    assert "Pending:        waiting for nodes [quota]" in zs("describe", str(job.pk))[1]
    assert not any(line.startswith("Expected start:") for line in lines)  # no forecast yet


def test_describe_gives_the_forecast_start_of_a_queued_job(logged_in, tmp_path):
    assert zs("submit", "-f", job_file(tmp_path))[0] == 0
    job = Job.objects.get()
    at, as_of = datetime(2026, 12, 6, 14, 30, tzinfo=UTC), datetime(2026, 12, 6, 12, 0, tzinfo=UTC)
    Job.objects.filter(pk=job.pk).update(
        state=JobState.QUEUED, expected_start_at=at, expected_start_as_of=as_of
    )
    assert ("Expected start: 2026-12-06 14:30:00 UTC (if the work ahead runs to its runtime "
            "limits)") in zs("describe", str(job.pk))[1].splitlines()  # fmt: skip
    Job.objects.filter(pk=job.pk).update(expected_start_at=None)
    assert ("Expected start: none within 7 days (work it waits for declares no runtime "
            "limit)") in zs("describe", str(job.pk))[1].splitlines()  # fmt: skip


def test_submit_after_other_jobs_and_describe_them(logged_in, tmp_path, capsys):
    assert zs("submit", "-f", job_file(tmp_path), "--set", "name=prep")[0] == 0
    prep = Job.objects.get()
    code, _out = zs("submit", "-f", job_file(tmp_path), "--set", "name=train",
                    "--after", f"{prep.pk},{prep.pk}")  # fmt: skip
    assert code == 0
    train = Job.objects.get(name="train")
    assert list(train.after.values_list("pk", flat=True)) == [prep.pk]
    assert train.waiting_for_jobs
    lines = zs("describe", str(train.pk))[1].splitlines()
    assert f"Starts after:   #{prep.pk} prep (queued)" in lines
    assert not any(line.startswith("Then starts:") for line in lines)
    lines = zs("describe", str(prep.pk))[1].splitlines()
    assert f"Then starts:    #{train.pk} train (queued)" in lines
    # A bad list is the CLI's usage error; an unknown job is the server's field error.
    with pytest.raises(SystemExit) as usage:
        zs("submit", "-f", job_file(tmp_path), "--after", "12,x")
    assert usage.value.code == 2 and "job ids separated by commas" in capsys.readouterr().err
    code, _out = zs("submit", "-f", job_file(tmp_path), "--after", "999999")
    assert code != 0 and Job.objects.count() == 2


def test_list_says_when_there_are_more_and_checks_the_state(logged_in, tmp_path, capsys):
    for name in ("one", "two", "three"):
        assert zs("submit", "-f", job_file(tmp_path), "--set", f"name={name}")[0] == 0
    capsys.readouterr()
    code, out = zs("list", "--limit", "2")
    assert code == 0 and len(out.splitlines()) == 3
    assert capsys.readouterr().err.strip() == (
        "zs: showing the newest 2 jobs; there are more: raise --limit to see them"
    )
    code, out = zs("list", "--limit", "3")
    assert code == 0 and capsys.readouterr().err == ""
    assert all(line.endswith(" UTC") for line in out.splitlines()[1:])
    with pytest.raises(SystemExit) as usage:
        zs("list", "--state", "bogus")
    err = capsys.readouterr().err
    assert usage.value.code == 2 and "invalid choice: 'bogus'" in err and "running" in err
    assert zs("list", "--state", "queued")[0] == 0


def test_a_job_of_fractional_shares_shows_what_it_asks_for(logged_in, tmp_path):
    # Before: `zs list` and `zs describe` said 0 devices for half an accelerator.
    text = JOB_YAML.replace("accelerators: 8", "accelerator_milli: 500")
    code, out = zs("submit", "-f", job_file(tmp_path, text))
    assert code == 0, out
    job = Job.objects.get()
    assert (job.requested_devices, job.requested_milli) == (0, 500)
    listed = zs("list")[1].splitlines()[1].split()
    assert listed[5] == "0.5"
    assert "Devices:        0.5\n" in zs("describe", str(job.pk))[1]


def test_the_cli_knows_the_servers_job_states():
    assert list(JOB_STATES) == [state.value for state in JobState]


def test_times_are_shown_in_utc_with_their_zone():
    assert _when("2026-12-05T15:35:12+08:00") == "2026-12-05 07:35:12 UTC"
    assert _when("2026-12-05T07:35:12.123456Z") == "2026-12-05 07:35:12 UTC"
    assert _when(None) == "" and _when("not a time") == "not a time"


def test_quotas_show_the_tenants_guarantee_borrowing_and_use(logged_in):
    code, out = zs("quotas")
    assert code == 0
    assert out.splitlines() == [
        "POOL   MODEL  GUARANTEE  BORROW-LIMIT  USED",
        "train  A800   8          0             0",
    ]


def test_checkpoint_asks_a_running_job_and_refuses_one_that_is_not(logged_in, tmp_path, capsys):
    assert zs("submit", "-f", job_file(tmp_path))[0] == 0
    job = Job.objects.get()
    code, _ = zs("checkpoint", str(job.pk))  # queued: nothing runs to save one
    assert code == 2
    assert "only a running job can save one. (HTTP 409)" in capsys.readouterr().err
    Job.objects.filter(pk=job.pk).update(state=JobState.RUNNING)
    code, out = zs("checkpoint", str(job.pk), "--reason", "before I stop it")
    assert code == 0, capsys.readouterr().err
    assert f"Job {job.pk}: a checkpoint is requested (since " in out
    assert "before I stop it" in out
    assert job.events.filter(reason="CheckpointRequested").count() == 1


# ------------------------------------------------------------------- zs submit: a pipeline
PIPELINE_YAML = """
# fields beside `pipeline` are every step's defaults
pool: train
priority: 4
image: registry.example.com/ml/pytorch:2.5-cuda12
accelerator_model: A800
replica_groups:
  - {name: worker, replicas: 1, accelerators: 8}
pipeline:
  - name: prep
    command: [python, prep.py]
    replica_groups: [{name: worker, replicas: 1, accelerators: 1}]
  - name: train
    command: [torchrun, train.py]
    after: [prep]
  - name: eval
    command: [python, eval.py]
    priority: 3
    after: [prep, train]
"""


def test_submit_a_pipeline_in_order_with_names_for_ids(logged_in, tmp_path):
    code, out = zs("submit", "-f", job_file(tmp_path, PIPELINE_YAML), "--set", "max_retries=1")
    assert code == 0, out
    prep, train, evaluate = Job.objects.order_by("pk")
    assert [j.name for j in (prep, train, evaluate)] == ["prep", "train", "eval"]
    assert out.splitlines() == [
        f"Submitted job {prep.pk} (prep): queued",
        f"Submitted job {train.pk} (train): queued, starts after {prep.pk}",
        f"Submitted job {evaluate.pk} (eval): queued, starts after {prep.pk}, {train.pk}",
    ]
    assert list(evaluate.after.order_by("pk").values_list("pk", flat=True)) == [prep.pk, train.pk]
    assert (train.waiting_for_jobs, evaluate.waiting_for_jobs) == (True, True)
    # Defaults, a step's own fields over them, --set over both.
    assert [j.requested_devices for j in (prep, train, evaluate)] == [1, 8, 8]
    assert [j.priority for j in (prep, train, evaluate)] == [4, 4, 3]
    assert {j.max_retries for j in (prep, train, evaluate)} == {1}
    assert evaluate.spec["command"] == ["python", "eval.py"]


def test_zs_pipeline_lists_the_jobs_in_start_order(logged_in, tmp_path, capsys):
    assert zs("submit", "-f", job_file(tmp_path, PIPELINE_YAML))[0] == 0
    prep, train, evaluate = Job.objects.order_by("pk")
    code, out = zs("pipeline", str(train.pk))
    assert code == 0, capsys.readouterr().err
    header, *rows = out.splitlines()
    assert header.split() == ["STEP", "ID", "NAME", "KIND", "STATE", "AFTER", "OWNER", "SINCE"]
    cells = [row.split() for row in rows]
    assert [c[:5] for c in cells] == [
        ["1", str(prep.pk), "prep", "training", "queued"],
        ["2", f"{train.pk}*", "train", "training", "queued"],  # the job asked for
        ["3", str(evaluate.pk), "eval", "training", "queued"],
    ]
    # AFTER, then OWNER (the AFTER of eval is two ids, "a, b").
    assert [cells[0][5:7], cells[1][5:7], cells[2][5:8]] == [
        ["-", "a-member"],
        [str(prep.pk), "a-member"],
        [f"{prep.pk},", str(train.pk), "a-member"],
    ]
    assert zs("pipeline", "999999")[0] == 4  # not a job of the tenant


def test_after_ids_go_to_the_steps_that_follow_no_other_step(logged_in, tmp_path):
    assert zs("submit", "-f", job_file(tmp_path), "--set", "name=upstream")[0] == 0
    upstream = Job.objects.get()
    code, _out = zs("submit", "-f", job_file(tmp_path, PIPELINE_YAML, "p.yaml"),
                    "--after", str(upstream.pk))  # fmt: skip
    assert code == 0
    after = {j.name: list(j.after.values_list("pk", flat=True)) for j in Job.objects.all()}
    assert after["prep"] == [upstream.pk]
    assert after["train"] == [Job.objects.get(name="prep").pk]  # follows prep, which waits


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (
            ("after: [prep]", "after: [eval]"),
            "step 'train' starts after 'eval', which is not an earlier step of the pipeline",
        ),
        (("name: train", "name: prep"), "two pipeline steps are named 'prep'"),
        (("  - name: eval\n", "  - image: x/y:1\n"), "pipeline step 3 has no name"),
        (("after: [prep, train]", "after: train"), "step 'eval': after: expected a list"),
    ],
)
def test_a_bad_pipeline_is_refused_before_anything_is_submitted(
    logged_in, tmp_path, capsys, edit, said
):
    text = PIPELINE_YAML.replace(*edit)
    assert text != PIPELINE_YAML
    code, _out = zs("submit", "-f", job_file(tmp_path, text))
    assert code == 2
    assert said in capsys.readouterr().err
    assert not Job.objects.exists()


def test_a_step_the_server_refuses_queues_no_step(logged_in, tmp_path, capsys):
    text = PIPELINE_YAML.replace(
        "    command: [python, eval.py]\n",
        "    command: [python, eval.py]\n    image: 'not an image'\n",
    )
    code, _out = zs("submit", "-f", job_file(tmp_path, text))
    assert code == 2
    err = capsys.readouterr().err
    assert "the pipeline was not submitted (no step of it was queued)" in err
    # The server's field error, said of the step by its name.
    assert "  step 'eval': image: 'not an image' is not a valid image reference." in err
    assert not Job.objects.exists()
