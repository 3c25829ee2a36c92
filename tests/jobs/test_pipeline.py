"""A pipeline in one request (POST jobs/pipeline/: all steps queued or none) and the
pipeline a job belongs to (GET jobs/{id}/pipeline/)."""

from __future__ import annotations

from typing import Any

import pytest

from apps.audit.models import AuditEntry
from apps.jobs import after
from apps.jobs.models import Job
from apps.tenancy.models import Role
from tests.conftest import World
from tests.jobs.conftest import Cluster, notebook_body, training_body

pytestmark = pytest.mark.django_db
URL = "/api/v1/tenants/tenant-a/jobs/"
ONE_NODE = [{"name": "worker", "replicas": 1, "accelerators": 8}]


def _step(cluster: Cluster, name: str, **overrides: Any) -> dict[str, Any]:
    body = training_body(cluster.pool, name=name, replica_groups=ONE_NODE, **overrides)
    del body["kind"]  # a step is a training job unless it says otherwise
    return body


def _post(client: Any, steps: list[dict[str, Any]]) -> Any:
    return client.post(f"{URL}pipeline/", {"steps": steps}, format="json")


def _befores(job_id: int) -> list[int]:
    return sorted(Job.objects.get(pk=job_id).after.values_list("pk", flat=True))


def test_every_step_is_queued_after_the_steps_it_names(
    world: World, cluster: Cluster, client_for
) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    done = client.post(URL, training_body(cluster.pool, name="data"), format="json").json()
    response = _post(client, [
        _step(cluster, "prep", after=[done["id"]]),
        _step(cluster, "train", after=["prep"]),
        _step(cluster, "eval", after=["train", "prep"]),
        _step(cluster, "report"),
    ])  # fmt: skip
    assert response.status_code == 201, response.json()
    jobs = response.json()["jobs"]
    assert [j["name"] for j in jobs] == ["prep", "train", "eval", "report"]
    assert all(j["kind"] == "training" and j["state"] == "queued" for j in jobs)
    prep, train, evaluate, report = (j["id"] for j in jobs)
    assert _befores(prep) == [done["id"]]
    assert _befores(train) == [prep]
    assert _befores(evaluate) == sorted([prep, train])
    assert _befores(report) == []
    assert [j["waiting_for_jobs"] for j in jobs] == [True, True, True, False]
    assert jobs[1]["after_jobs"] == [{"id": prep, "name": "prep", "state": "queued"}]
    assert [j["id"] for j in jobs[0]["next_jobs"]] == [train, evaluate]
    created = AuditEntry.objects.filter(action="create", object_type="jobs.job")
    assert sorted(int(e.object_id) for e in created) == [done["id"], *(j["id"] for j in jobs)]


def test_a_refused_step_queues_nothing(world: World, cluster: Cluster, client_for) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    response = _post(client, [
        _step(cluster, "prep"),
        _step(cluster, "train", after=["prep"], image="Not An Image"),
        _step(cluster, "eval", after=["train"], priority=0),  # P0: tenant admins only
    ])  # fmt: skip
    assert response.status_code == 400
    steps = response.json()["errors"]["steps"]
    assert sorted(steps) == ["1", "2"]
    assert list(steps["1"]) == ["image"]
    assert list(steps["2"]) == ["priority"]
    assert not Job.objects.exists()


def test_what_a_step_may_start_after(world: World, cluster: Cluster, client_for) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    other = client_for(world.user("b", Role.MEMBER)).post(
        "/api/v1/tenants/tenant-b/jobs/", training_body(cluster.pool, name="theirs"), format="json"
    )
    assert other.status_code == 201
    response = _post(client, [
        _step(cluster, "prep", after=["eval"]),  # a later step
        notebook_body(cluster, name="look"),
        _step(cluster, "train", after=["look", "nope"]),  # a notebook never succeeds
        _step(cluster, "prep"),  # a name used twice
        _step(cluster, "eval", after=[other.json()["id"]]),  # another tenant's job
    ])  # fmt: skip
    assert response.status_code == 400
    steps = response.json()["errors"]["steps"]
    # Another tenant's job is refused with the step's own checks, which run first.
    assert steps == {"4": {"after": [f"No job #{other.json()['id']} in this tenant."]}}
    assert not Job.objects.filter(tenant=world.tenant_a).exists()

    del steps  # the pipeline-wide checks run once every step is right on its own
    response = _post(client, [
        _step(cluster, "prep", after=["eval"]),
        notebook_body(cluster, name="look"),
        _step(cluster, "train", after=["look", "nope"]),
        _step(cluster, "prep"),
        _step(cluster, "eval"),
    ])  # fmt: skip
    assert response.status_code == 400
    steps = response.json()["errors"]["steps"]
    assert sorted(steps) == ["0", "2", "3"]
    assert steps["0"] == {"after": ["'eval' is not an earlier step of this pipeline."]}
    assert steps["2"] == {"after": [
        "Step 'look' is not a training job: only a training job ends by succeeding, so nothing "
        "can start after it.",
        "'nope' is not an earlier step of this pipeline.",
    ]}  # fmt: skip
    assert steps["3"] == {"name": ["Another step is named 'prep': step names must be unique."]}
    assert not Job.objects.filter(tenant=world.tenant_a).exists()


@pytest.mark.parametrize("ref", [True, 0, "Not A Name", 1.5])
def test_a_reference_is_an_id_or_a_step_name(
    world: World, cluster: Cluster, client_for, ref: Any
) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    response = _post(client, [_step(cluster, "prep"), _step(cluster, "train", after=[ref])])
    assert response.status_code == 400
    assert response.json()["errors"]["steps"]["1"]["after"] == {
        "0": ["Give a job id (a number) or the name of an earlier step."]
    }


def test_the_request_itself_is_checked(world: World, cluster: Cluster, client_for) -> None:
    member = client_for(world.user("a", Role.MEMBER))
    assert _post(member, []).status_code == 400
    too_many = [_step(cluster, f"s{n}") for n in range(33)]
    assert _post(member, too_many).status_code == 400
    refused = member.post(f"{URL}pipeline/", {"steps": "prep"}, format="json")
    assert refused.status_code == 400 and "steps" in refused.json()["errors"]
    viewer = client_for(world.user("a", Role.VIEWER))
    assert _post(viewer, [_step(cluster, "prep")]).status_code == 403
    assert not Job.objects.exists()


def test_a_job_s_pipeline_both_ways(world: World, cluster: Cluster, client_for) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    first = _post(client, [
        _step(cluster, "prep"),
        _step(cluster, "train", after=["prep"]),
    ]).json()["jobs"]  # fmt: skip
    prep, train = (j["id"] for j in first)
    # Steps submitted later, after the middle of the first pipeline, belong to it too.
    later = _post(client, [
        _step(cluster, "eval", after=[train]),
        _step(cluster, "deploy", after=["eval"]),
    ]).json()["jobs"]  # fmt: skip
    evaluate, deploy = (j["id"] for j in later)
    alone = client.post(URL, training_body(cluster.pool, name="alone"), format="json").json()

    for asked in (prep, deploy, evaluate):
        answer = client.get(f"{URL}{asked}/pipeline/").json()
        assert answer["truncated"] is False
        assert [(j["id"], j["name"], j["after"]) for j in answer["jobs"]] == [
            (prep, "prep", []),
            (train, "train", [prep]),
            (evaluate, "eval", [train]),
            (deploy, "deploy", [evaluate]),
        ]
    only = client.get(f"{URL}{alone['id']}/pipeline/").json()["jobs"]
    assert [(j["id"], j["after"], j["state"]) for j in only] == [(alone["id"], [], "queued")]
    # Another tenant sees nothing of it.
    outsider = client_for(world.user("b", Role.TENANT_ADMIN))
    assert outsider.get(f"/api/v1/tenants/tenant-b/jobs/{prep}/pipeline/").status_code == 404


def test_a_long_pipeline_keeps_the_nearest_jobs(world: World, cluster: Cluster, client_for) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    steps = [_step(cluster, "s0")]
    steps += [_step(cluster, f"s{n}", after=[f"s{n - 1}"]) for n in range(1, 6)]
    ids = [j["id"] for j in _post(client, steps).json()["jobs"]]
    middle = Job.objects.get(pk=ids[3])
    jobs, truncated = after.pipeline_of(middle, limit=3)
    assert truncated is True
    assert [j.pk for j in jobs] == [ids[2], ids[3], ids[4]]
    jobs, truncated = after.pipeline_of(middle, limit=6)
    assert truncated is False and [j.pk for j in jobs] == ids
