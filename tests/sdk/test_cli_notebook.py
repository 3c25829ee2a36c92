"""`zs notebook open`, `zs inference deploy/list` and `zs submit` of an inference workload,
against the real API on a live server."""

from __future__ import annotations

import io
import webbrowser
from typing import Any

import pytest
from zhisuan.cli import main

from apps.accounts.services import create_token
from apps.inference.models import InferenceService
from apps.jobs.models import Job, JobState
from apps.quotas.models import Quota
from apps.tenancy.models import Role
from tests.factories import make_node, make_pool

pytestmark = pytest.mark.django_db(transaction=True)

INFERENCE_YAML = """
name: llama-chat
kind: inference
pool: serve
image: registry.example.com/serve/vllm:0.6
args: [--model, /models/llama-3-8b]
replica_groups:
  - name: server
    replicas: 2
    accelerators: 1
accelerator_model: A800
inference: {port: 8000}
"""


def zs(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(argv), out=out)
    return code, out.getvalue()


@pytest.fixture
def logged_in(world: Any, live_server: Any, sdk_env: Any) -> str:
    pool = make_pool(name="serve")
    make_node(pool=pool, name="n0")
    Quota.objects.create(tenant=world.tenant_a, pool=pool, accelerator_model="A800",
                         guarantee=8, borrow_limit=0)  # fmt: skip
    _, token = create_token(user=world.user("a", Role.MEMBER), name="cli")
    assert zs("--url", live_server.url, "login", "--token", token)[0] == 0
    return str(live_server.url)


def notebook(world: Any, state: str, role: Role = Role.MEMBER) -> Job:
    return Job.objects.create(
        tenant=world.tenant_a, owner=world.user("a", role), name="explore", kind="notebook",
        pool=make_pool(name=f"nb-{state}-{role.value}"), state=state,
        spec={"image": "quay.io/jupyter/base-notebook:latest",
              "replica_groups": [{"name": "notebook", "replicas": 1, "accelerators": 0}],
              "notebook": {"flavor": "jupyter"}},
    )  # fmt: skip


def test_notebook_open_prints_the_platform_address_and_opens_a_browser(
    world: Any, logged_in: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = notebook(world, JobState.RUNNING)
    code, out = zs("notebook", "open", str(job.pk), "--print-only")
    assert code == 0 and out.strip() == f"{logged_in}/notebooks/{job.pk}/"

    opened: list[str] = []

    def fake_open(url: str, new: int = 0) -> bool:  # no browser on a test machine
        opened.append(url)
        return True

    monkeypatch.setattr(webbrowser, "open", fake_open)
    code, out = zs("notebook", "open", str(job.pk))
    assert code == 0 and opened == [f"{logged_in}/notebooks/{job.pk}/"]


def test_notebook_open_refuses_what_cannot_be_opened(
    world: Any, logged_in: str, capsys: pytest.CaptureFixture[str]
) -> None:
    queued = notebook(world, JobState.QUEUED)
    assert zs("notebook", "open", str(queued.pk), "--print-only") == (2, "")
    assert "is queued, not running" in capsys.readouterr().err

    someone_elses = notebook(world, JobState.RUNNING, role=Role.TENANT_ADMIN)
    assert zs("notebook", "open", str(someone_elses.pk), "--print-only") == (3, "")
    assert "only its owner or a tenant admin" in capsys.readouterr().err

    assert zs("notebook", "open", "999999", "--print-only")[0] == 4


def test_notebook_restart_and_delete_files(
    world: Any, logged_in: str, capsys: pytest.CaptureFixture[str]
) -> None:
    stopped = notebook(world, JobState.CANCELLED)
    Job.objects.filter(pk=stopped.pk).update(started_at=stopped.submitted_at)
    code, out = zs("notebook", "restart", str(stopped.pk))
    again = Job.objects.exclude(pk=stopped.pk).get(kind="notebook")
    assert code == 0 and out == (
        f"Restarted notebook {stopped.pk} as job {again.pk} (explore) with the files of "
        f"notebook {stopped.pk}: queued\n"
    )
    assert again.spec["notebook"]["home_job"] == stopped.pk and again.owner == stopped.owner

    assert zs("notebook", "restart", str(stopped.pk)) == (2, "")  # the restart holds the files
    assert f"Notebook #{again.pk} (queued) already uses this home volume" in (
        capsys.readouterr().err
    )
    assert zs("notebook", "delete-files", str(stopped.pk)) == (2, "")  # needs --yes
    assert "add --yes" in capsys.readouterr().err
    assert zs("notebook", "delete-files", str(stopped.pk), "--yes")[0] == 2  # still in use
    Job.objects.filter(pk=again.pk).update(state=JobState.CANCELLED)
    code, out = zs("notebook", "delete-files", str(again.pk), "--yes")
    assert code == 0 and f"Deleted the home volume of notebook {stopped.pk}" in out
    assert Job.objects.filter(home_deleted_at__isnull=False).count() == 2


SERVICE_YAML = """
name: qwen-chat
pool: serve              # by name; the CLI finds its id
runtime_image: vllm/vllm-openai:v0.6.3
model_uri: s3://models/qwen2-7b
accelerators: 1
min_replicas: 1
max_replicas: 4
"""


def test_inference_deploy_creates_an_autoscaled_service(
    world: Any, logged_in: str, tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    service_file = tmp_path / "service.yaml"
    service_file.write_text(SERVICE_YAML)
    code, out = zs("inference", "deploy", "-f", str(service_file), "--set", "max_replicas=6")
    assert code == 0, capsys.readouterr().err
    service = InferenceService.objects.select_related("job").get()
    assert service.job.kind == "inference" and service.job.name == "qwen-chat"
    assert (service.min_replicas, service.max_replicas) == (1, 6)
    assert out.strip() == (
        f"Deployed inference service {service.pk} (qwen-chat): job {service.job.pk} queued, "
        "replicas 1..6"
    )
    code, out = zs("inference", "list")
    header, row = out.splitlines()
    assert header.split() == ["ID", "NAME", "STATE", "REV", "MODEL", "READY", "DESIRED", "RANGE"]
    assert row.split()[:5] == [str(service.pk), "qwen-chat", "queued", "1", "s3://models/qwen2-7b"]

    # Bad input: the server's field errors, exit code 2.
    code, _ = zs("inference", "deploy", "-f", str(service_file), "--set", "min_replicas=9")
    assert code == 2 and "min_replicas" in capsys.readouterr().err


def test_submit_runs_a_bare_inference_workload_from_yaml(
    world: Any, logged_in: str, tmp_path: Any
) -> None:
    service_file = tmp_path / "workload.yaml"
    service_file.write_text(INFERENCE_YAML)
    code, out = zs("submit", "-f", str(service_file))
    assert code == 0
    job = Job.objects.get(kind="inference")
    assert out.strip() == f"Submitted job {job.pk} (llama-chat): queued"
    assert job.spec["inference"] == {"port": 8000}
    assert job.spec["replica_groups"][0]["replicas"] == 2
    code, out = zs("list", "--kind", "inference")
    assert code == 0 and "llama-chat" in out and "inference" in out
