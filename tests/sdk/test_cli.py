"""`zs` against the real jobs API on a live server, and its job-file parser."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime

import pytest
import yaml
from zhisuan import _config
from zhisuan._yaml import YamlError, parse
from zhisuan.cli import main

from apps.accounts.services import create_token
from apps.clusters.models import ResourcePool
from apps.jobs.models import Job, JobLogLine, JobState
from apps.quotas.models import Quota
from apps.tenancy.models import Role
from tests.factories import make_node, make_pool

JOB_YAML = """
# fine-tune on one node
name: llama-sft
kind: training
pool: train            # by name; the CLI finds its id
priority: 4
image: registry.example.com/ml/pytorch:2.5-cuda12
command: [torchrun, --nproc_per_node=8, train.py]
env:
  NCCL_DEBUG: WARN
replica_groups:
  - name: worker
    replicas: 1
    accelerators: 8
accelerator_model: A800
topology: {mode: soft, highest_tier: leaf}
"""


def zs(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(argv), out=out)
    return code, out.getvalue()


@pytest.fixture
def server(world, live_server, sdk_env):
    pool = make_pool(name="train")
    make_node(pool=pool, name="n0")
    Quota.objects.create(tenant=world.tenant_a, pool=pool, accelerator_model="A800",
                         guarantee=8, borrow_limit=0)  # fmt: skip
    _, token = create_token(user=world.user("a", Role.MEMBER), name="cli")
    return live_server.url, token


pytestmark = pytest.mark.django_db(transaction=True)


def test_pools_say_where_a_job_could_start(server, capsys):
    url, token = server
    assert zs("--url", url, "login", "--token", token)[0] == 0
    code, out = zs("pools")
    assert code == 0, capsys.readouterr().err
    header, row = out.splitlines()
    assert header.split() == ["ID", "CLUSTER", "POOL", "GPUS", "FREE", "WHOLE-NODES", "STRANDED",
                              "LARGEST-NOW(LEAF/SU/POOL)", "QUEUED(GPUS)"]  # fmt: skip
    pool = ResourcePool.objects.get(name="train")
    # one idle 8-GPU server: all of it free, and an 8-GPU job fits in every tier
    assert row.split() == [str(pool.pk), pool.cluster.name, "train", "8", "8", "1", "0", "A800",
                           "8/8/8", "0", "(0)"]  # fmt: skip


def test_login_submit_list_describe_events_logs_cancel(server, tmp_path, capsys):
    url, token = server
    code, out = zs("--url", url, "login", "--token", token)
    assert code == 0 and "tenant tenant-a" in out
    stored = json.loads(_config.config_path().read_text())
    assert stored == {"url": url, "token": token, "tenant": "tenant-a"}
    assert _config.config_path().stat().st_mode & 0o777 == 0o600

    job_file = tmp_path / "job.yaml"
    job_file.write_text(JOB_YAML)
    code, out = zs("submit", "-f", str(job_file))
    assert code == 0, capsys.readouterr().err
    job = Job.objects.get()
    assert out.strip() == f"Submitted job {job.pk} (llama-sft): queued"
    assert job.spec["command"] == ["torchrun", "--nproc_per_node=8", "train.py"]

    code, out = zs("list")
    assert code == 0
    header, row = out.splitlines()
    assert header.split() == ["ID", "NAME", "KIND", "STATE", "PRIO", "DEVICES", "OWNER",
                              "SUBMITTED"]  # fmt: skip
    assert row.split()[:6] == [str(job.pk), "llama-sft", "training", "queued", "P4", "8"]

    code, out = zs("describe", str(job.pk))
    assert code == 0 and "State:          queued" in out and "Submitted" in out

    code, out = zs("events", str(job.pk))
    assert code == 0 and "Submitted" in out and "submitted -> queued" in out

    # no lines collected yet: the job's events instead, as the README says
    code, out = zs("logs", str(job.pk))
    assert code == 0 and "submitted -> queued" in out
    assert "no log lines are collected yet; the job's events so far" in capsys.readouterr().err
    for i, text in enumerate(["starting", "step 50 loss 2.1", "step 100 loss 1.9"]):
        JobLogLine.objects.create(job=job, ts=datetime(2026, 11, 30, 3, 0, i, tzinfo=UTC),
                                  replica="zs-train-1-worker-0", text=text)  # fmt: skip
    code, out = zs("logs", str(job.pk), "--tail", "2")
    assert code == 0
    assert out.splitlines() == [
        "2026-11-30T03:00:01Z zs-train-1-worker-0  step 50 loss 2.1",
        "2026-11-30T03:00:02Z zs-train-1-worker-0  step 100 loss 1.9",
    ]
    assert "showing the last 2 lines" in capsys.readouterr().err

    code, out = zs("cancel", str(job.pk))
    assert code == 0 and out.strip() == f"Job {job.pk} (llama-sft): cancelled"
    assert Job.objects.get().state == JobState.CANCELLED
    code, out = zs("cancel", str(job.pk))
    assert code == 0
    assert out.strip() == (f"Job {job.pk} (llama-sft) had already finished (cancelled); "
                           "nothing to cancel.")  # fmt: skip

    # --follow on a finished job: prints what there is once, reads once more, and ends with
    # the job's outcome as its exit status
    code, out = zs("logs", str(job.pk), "--follow", "--interval", "0")
    assert code == 1 and len(out.splitlines()) == 3
    assert f"job {job.pk} ended cancelled" in capsys.readouterr().err
    Job.objects.filter(pk=job.pk).update(state=JobState.SUCCEEDED)
    code, out = zs("logs", str(job.pk), "--follow", "--interval", "0")
    assert code == 0 and len(out.splitlines()) == 3


def test_list_finds_by_name_and_owner_and_walks_pages_to_the_limit(
    server, tmp_path, capsys, monkeypatch
):
    from zhisuan.client import ApiClient

    url, token = server
    assert zs("--url", url, "login", "--token", token)[0] == 0
    job_file = tmp_path / "job.yaml"
    job_file.write_text(JOB_YAML)
    for name in ("sweep-a", "sweep-b", "baseline", "sweep-c", "other"):
        assert zs("submit", "-f", str(job_file), "--set", f"name={name}")[0] == 0
    monkeypatch.setattr(ApiClient, "MAX_PAGE", 2)  # so that 4 rows take two pages

    def names(*argv: str) -> list[str]:
        code, out = zs("list", *argv)
        assert code == 0, capsys.readouterr().err
        return [line.split()[1] for line in out.splitlines()[1:]]

    assert names("--limit", "4") == ["other", "sweep-c", "baseline", "sweep-b"]
    assert names("--name", "SWEEP") == ["sweep-c", "sweep-b", "sweep-a"]
    assert names("--owner", "a-member", "--name", "base") == ["baseline"]
    assert names("--owner", "someone-else") == []
    with pytest.raises(SystemExit) as usage:
        zs("list", "--limit", "0")
    assert usage.value.code == 2 and "must be at least 1" in capsys.readouterr().err
    with pytest.raises(SystemExit) as usage:
        zs("logs", "1", "--tail", "9000")  # the server's bound, said before asking it
    assert usage.value.code == 2 and "at most 5000, not 9000" in capsys.readouterr().err


def test_field_errors_are_printed_per_field_with_exit_code_2(server, tmp_path, capsys):
    url, token = server
    assert zs("--url", url, "login", "--token", token)[0] == 0
    bad = tmp_path / "bad.yaml"
    text = JOB_YAML.replace("name: llama-sft", "name: Not_Valid")
    bad.write_text(text.replace("registry.example.com/ml/pytorch:2.5-cuda12", "UPPER CASE"))
    code, _ = zs("submit", "-f", str(bad))
    err = capsys.readouterr().err
    assert code == 2
    assert "zs: error: Invalid input. (HTTP 400)" in err
    assert "  name: " in err and "  image: 'UPPER CASE' is not a valid image reference." in err
    assert Job.objects.count() == 0


def test_exit_codes_for_missing_login_unknown_job_and_bad_file(
    server, tmp_path, capsys, monkeypatch
):
    url, token = server
    assert zs("list")[0] == 3  # not logged in
    assert "not logged in" in capsys.readouterr().err
    assert zs("--url", url, "login", "--token", "zs_bad_token")[0] == 3
    assert zs("--url", url, "login", "--token", token)[0] == 0
    assert zs("describe", "999999")[0] == 4
    assert zs("submit", "-f", str(tmp_path / "missing.yaml"))[0] == 2
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: [unclosed\n")
    assert zs("submit", "-f", str(broken))[0] == 2
    nopool = tmp_path / "nopool.yaml"
    nopool.write_text(JOB_YAML.replace("pool: train", "pool: nowhere"))
    assert zs("submit", "-f", str(nopool))[0] == 2
    assert "no pool named 'nowhere'" in capsys.readouterr().err
    # the stored token is for the server it was stored with: never sent to another one
    assert zs("--url", "http://127.0.0.1:9", "list")[0] == 3
    err = capsys.readouterr().err
    assert f"not logged in to http://127.0.0.1:9: the stored token is for {url}" in err
    monkeypatch.setenv("ZS_TOKEN", token)  # a token given for it is
    assert zs("--url", "http://127.0.0.1:9", "list")[0] == 1
    assert "cannot reach the server" in capsys.readouterr().err


def test_yaml_subset_matches_pyyaml_on_job_files():
    doc = (
        JOB_YAML
        + """
args:
- --lr
- "3e-4"
volumes:
- name: data
  claim: shared-data
  mount_path: /data
  read_only: true
notes: 'it''s fine'   # comment
url: "http://x/#not-a-comment"
empty:
nested:
  - - a
    - b
  - k: {a: 1, b: [x, "y z"]}
"""
    )
    assert parse(doc) == yaml.safe_load(doc)
    for bad in ("a: |\n  text\n", "a: b\n  c: d\n", "a: 1\na: 2\n", "x: 'open\n"):
        with pytest.raises(YamlError):
            parse(bad)
