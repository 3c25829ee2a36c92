"""`zs inference update|revisions|rollback` and the REV column of `zs inference list`: rolling
updates of inference services, against the real API on a live server (the services' simulated
replicas stepped by the control loop's own function)."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db import transaction
from zhisuan.cli import main

from apps.accounts.services import create_token
from apps.clusters.models import ResourcePool
from apps.inference import rollouts, services
from apps.inference.models import InferenceService, RolloutState, ServiceRevision
from apps.jobs.models import Job
from apps.quotas.models import Quota
from apps.tenancy.models import Role
from tests.conftest import World
from tests.factories import make_node, make_pool, make_running

pytestmark = pytest.mark.django_db(transaction=True)

SERVICE_YAML = """
name: chat
pool: serve
runtime_image: vllm/vllm-openai:v0.6.3
model_uri: hf://org/v1
accelerators: 1
min_replicas: 2
max_replicas: 2
target_value: 8
cold_start_s: 5
"""
IMAGE = "vllm/vllm-openai:v0.6.3"


def zs(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(argv), out=out)
    return code, out.getvalue()


@pytest.fixture
def logged_in(world: World, live_server: Any, sdk_env: Any) -> str:
    pool = make_pool(name="serve")
    make_node(pool=pool, name="n0")  # 8 x A800
    _, token = create_token(user=world.user("a", Role.MEMBER), name="cli")
    assert zs("--url", live_server.url, "login", "--token", token)[0] == 0
    return str(live_server.url)


def serve() -> ResourcePool:
    return ResourcePool.objects.get(name="serve")


def quota(world: World, guarantee: int) -> None:
    Quota.objects.create(tenant=world.tenant_a, pool=serve(), accelerator_model="A800",
                         guarantee=guarantee)  # fmt: skip


def deploy(tmp_path: Any, *, running: bool = True) -> InferenceService:
    """A service deployed with the CLI; ``running``: started, serving revision 1."""
    service_file = tmp_path / "service.yaml"
    service_file.write_text(SERVICE_YAML)
    code, _ = zs("inference", "deploy", "-f", str(service_file))
    assert code == 0
    service = InferenceService.objects.select_related("job").get()
    if running:
        make_running(service.job)
        tick(1)
        service.refresh_from_db()
        assert (service.revision, service.serving_revision) == (1, 1)
    return service


def tick(seconds: int) -> None:
    start = datetime.now(UTC)
    for second in range(seconds):
        services.autoscale_tick(now=start + timedelta(seconds=second))


def created(service: InferenceService, number: int) -> str:
    at = ServiceRevision.objects.get(service=service, number=number).created_at
    return at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def table(out: str) -> list[list[str]]:
    """The rows of a table, cut at its header's columns (cells may hold spaces)."""
    header, *rows = out.splitlines()
    starts = [i for i, c in enumerate(header) if c != " " and (i == 0 or header[i - 1] == " ")]
    ends = [*starts[1:], None]
    return [[line[a:b].strip() for a, b in zip(starts, ends, strict=True)]
            for line in [header, *rows]]  # fmt: skip


def test_update_rolls_out_a_new_model_and_rollback_restores_the_old_one(
    world: World, logged_in: str, tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    service = deploy(tmp_path)
    quota(world, 4)  # room for a surge replica
    pk = service.pk

    code, out = zs("inference", "update", str(pk), "--model", "hf://org/v2")
    assert code == 0, capsys.readouterr().err
    assert out == (
        f"Service {pk} (chat): rolling out revision 2 (serving revision 1): image {IMAGE}, "
        "model hf://org/v2\n"
    )
    code, out = zs("inference", "list")
    rows = table(out)
    assert rows[0] == ["ID", "NAME", "STATE", "REV", "MODEL", "READY", "DESIRED", "RANGE"]
    assert rows[1][:5] == [str(pk), "chat", "running", "2*", "hf://org/v2"]

    tick(1)  # the surge replica starts on the new model
    code, out = zs("inference", "revisions", str(pk))
    assert code == 0
    first, *rest = out.splitlines()
    assert first == "Serving revision 1; rolling out revision 2: 1 of 2 replicas updated"
    assert table("\n".join(rest)) == [
        ["REVISION", "STATE", "IMAGE", "MODEL", "BY", "CREATED", "NOTE"],
        ["2", "rolling", IMAGE, "hf://org/v2", "a-member", created(service, 2), ""],
        ["1", "complete", IMAGE, "hf://org/v1", "a-member", created(service, 1), ""],
    ]

    tick(30)
    service.refresh_from_db()
    assert (service.rollout_state, service.serving_revision) == (RolloutState.IDLE, 2)
    code, out = zs("inference", "list")
    assert table(out)[1][3] == "2"  # no rollout runs
    code, out = zs("inference", "revisions", str(pk))
    assert out.splitlines()[0].startswith("REVISION")  # no rollout line

    code, out = zs("inference", "rollback", str(pk), "1")
    assert code == 0, capsys.readouterr().err
    assert out == f"Service {pk} (chat): rolling back to revision 1 as revision 3\n"
    service.refresh_from_db()
    assert (service.revision, service.model_uri) == (3, "hf://org/v1")
    code, out = zs("inference", "revisions", str(pk), "--limit", "1")
    assert out.splitlines()[0] == (
        "Serving revision 2; rolling out revision 3: 0 of 2 replicas updated"
    )
    assert table("\n".join(out.splitlines()[1:]))[1] == [
        "3", "rolling", IMAGE, "hf://org/v1", "a-member", created(service, 3), "rollback of 1"
    ]  # fmt: skip
    assert "showing the newest 1 revisions; there are more" in capsys.readouterr().err

    # Rolling back to the current revision: the server's field error, exit 2, nothing made.
    assert zs("inference", "rollback", str(pk), "3") == (2, "")
    err = capsys.readouterr().err
    assert "(HTTP 400)" in err
    assert "  revision: Roll back to an earlier revision than the current one (3).\n" in err
    assert ServiceRevision.objects.filter(service=service).count() == 3


def test_revisions_say_why_a_rollout_waits_and_show_an_automatic_rollback(
    world: World, logged_in: str, tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    service = deploy(tmp_path)
    quota(world, 2)  # exactly what the service runs: no room for a surge replica
    pk = service.pk
    code, out = zs("inference", "update", str(pk), "--image", "vllm/vllm-openai:v0.7.0")
    assert code == 0, capsys.readouterr().err
    assert out == (
        f"Service {pk} (chat): rolling out revision 2 (serving revision 1): image "
        "vllm/vllm-openai:v0.7.0, model hf://org/v1\n"
    )
    tick(3)
    service.refresh_from_db()
    assert service.rollout_state == RolloutState.WAITING and service.rollout_reason
    code, out = zs("inference", "revisions", str(pk))
    assert code == 0 and out.splitlines()[0] == (
        "Serving revision 1; rolling out revision 2: waiting for room for a surge replica: "
        f"{service.rollout_reason}"
    )

    # The new revision never becomes ready: it fails and the service rolls back by itself.
    with transaction.atomic():
        locked = InferenceService.objects.select_for_update().get(pk=pk)
        rollouts.fail(locked, Job.objects.get(pk=locked.job_id), "image pull failed")
    code, out = zs("inference", "revisions", str(pk))
    rows = table("\n".join(out.splitlines()[1:]))
    assert [r[:2] + r[4:5] + r[6:] for r in rows[1:]] == [
        ["3", "rolling", "automatic",
         "rollback of 1; automatic rollback: revision 2 did not roll out"],
        ["2", "failed", "a-member", "image pull failed"],
        ["1", "complete", "a-member", ""],
    ]  # fmt: skip
    # The automatic rollback fails too: nothing more is tried, and the CLI says so.
    with transaction.atomic():
        locked = InferenceService.objects.select_for_update().get(pk=pk)
        rollouts.fail(locked, Job.objects.get(pk=locked.job_id), "image pull failed")
    code, out = zs("inference", "revisions", str(pk))
    assert code == 0 and out.splitlines()[0] == (
        "Serving revision 1; revision 3 did not roll out and was not rolled back: update the "
        "model or roll back"
    )
    code, out = zs("inference", "list")
    assert code == 0 and table(out)[1][3] == "3!"


def test_a_revision_of_a_service_not_running_takes_effect_when_it_starts(
    world: World, logged_in: str, tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    service = deploy(tmp_path, running=False)
    pk = service.pk
    code, out = zs("inference", "update", str(pk), "--image", "vllm/vllm-openai:v0.7.0",
                   "--model", "hf://org/v2")  # fmt: skip
    assert code == 0, capsys.readouterr().err
    assert out == (
        f"Service {pk} (chat): revision 2 takes effect when the service starts: image "
        "vllm/vllm-openai:v0.7.0, model hf://org/v2\n"
    )
    code, out = zs("inference", "revisions", str(pk))
    assert out.splitlines()[0] == "Revision 2 takes effect when the service starts"
    assert [r[:2] for r in table("\n".join(out.splitlines()[1:]))[1:]] == [
        ["2", "pending"], ["1", "superseded"]
    ]  # fmt: skip
    code, out = zs("inference", "list")
    assert table(out)[1][3] == "2"

    # The same image and model again: nothing to change, no new revision.
    code, out = zs("inference", "update", str(pk), "--model", "hf://org/v2")
    assert code == 0 and out == (
        f"Service {pk} (chat): already runs that (revision 2); nothing changed\n"
    )
    code, out = zs("inference", "rollback", str(pk), "1")
    assert code == 0 and out == (
        f"Service {pk} (chat): revision 3, a rollback to revision 1, takes effect when the "
        "service starts\n"
    )
    assert ServiceRevision.objects.filter(service=service).count() == 3


def test_update_rolls_out_a_new_port_and_probe(
    world: World, logged_in: str, tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    service = deploy(tmp_path)
    quota(world, 4)
    pk = service.pk
    code, out = zs("inference", "update", str(pk), "--port", "9000", "--readiness-path", "/ready")
    assert code == 0, capsys.readouterr().err
    assert out == (
        f"Service {pk} (chat): rolling out revision 2 (serving revision 1): image {IMAGE}, "
        "model hf://org/v1, port 9000, readiness_path /ready\n"
    )
    code, out = zs("inference", "revisions", str(pk))
    assert table("\n".join(out.splitlines()[1:]))[1][6] == (
        "changed port 8000 → 9000, readiness_path /health → /ready"
    )
    # A bad path is the server's field error; nothing changes.
    assert zs("inference", "update", str(pk), "--liveness-path", "alive")[0] == 2
    assert "  liveness_path: An HTTP path" in capsys.readouterr().err
    assert ServiceRevision.objects.filter(service=service).count() == 2


def test_show_says_what_a_service_runs_and_how_its_rollout_goes(
    world: World, logged_in: str, tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    service = deploy(tmp_path)
    quota(world, 4)
    pk = service.pk
    code, out = zs("inference", "show", str(pk))
    assert code == 0, capsys.readouterr().err
    assert out.splitlines() == [
        f"Service {pk} (chat): running, revision 1, job {service.job_id} (simulated cluster: "
        "made-up traffic)",
        f"Image: {IMAGE}",
        "Model: hf://org/v1",
        "Port and probes: port 8000, readiness /health, liveness /health, probes from 30 s, "
        "every 10 s",
        "Replicas: 2 ready, 0 loading, 2 desired (range 2..2), 1 accelerator(s) each; target "
        "concurrency 8 per replica",
        "Rolling updates: up to 1 surge replica(s), at most 0 unavailable",
    ]
    assert zs("inference", "update", str(pk), "--port", "9000")[0] == 0
    tick(1)
    lines = zs("inference", "show", str(pk))[1].splitlines()
    assert lines[0].startswith(f"Service {pk} (chat): running, revision 2, job ")
    assert lines[1] == "Serving revision 1; rolling out revision 2: 1 of 2 replicas updated"
    assert lines[4].startswith("Port and probes: port 9000, ")
    # Another tenant's service, or none: not found, exit 4 as for any object.
    code, _ = zs("inference", "show", "99999")
    assert code != 0 and "not found" in capsys.readouterr().err.lower()


def test_update_needs_an_image_or_a_model(
    world: World, logged_in: str, tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    service = deploy(tmp_path, running=False)
    assert zs("inference", "update", str(service.pk)) == (2, "")
    assert "give --image, --model, --port or a probe option" in capsys.readouterr().err
    # A bad image is the server's field error.
    assert zs("inference", "update", str(service.pk), "--image", "not an image")[0] == 2
    assert "  runtime_image: 'not an image' is not a valid image reference." in (
        capsys.readouterr().err
    )
    assert ServiceRevision.objects.filter(service=service).count() == 1


def test_another_tenants_service_is_not_found(
    world: World, logged_in: str, capsys: pytest.CaptureFixture[str]
) -> None:
    theirs = services.create_service(
        tenant=world.tenant_b, owner=world.user("b", Role.MEMBER), name="theirs",
        pool=serve(), settings={"model_uri": "hf://b/model"},
    )  # fmt: skip
    for argv in (
        ("update", str(theirs.pk), "--model", "hf://a/model"),
        ("revisions", str(theirs.pk)),
        ("rollback", str(theirs.pk), "1"),
    ):
        assert zs("inference", *argv) == (4, "")
        assert "(HTTP 404)" in capsys.readouterr().err
    theirs.refresh_from_db()
    assert (theirs.revision, theirs.model_uri) == (1, "hf://b/model")
    code, out = zs("inference", "list")
    assert code == 0 and "theirs" not in out
