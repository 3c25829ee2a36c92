"""Sweeps: a template run as trials on the simulated cluster, at most `parallel` at a time,
each trial's values in its job and run, the best trial by the metric; the API's checks and
tenant isolation."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest

from apps.audit.models import AuditEntry
from apps.jobs.models import Job, JobState
from apps.runs import simulate
from apps.runs.models import Run
from apps.runs.services import ingest_metrics
from apps.runs.workload_env import job_env
from apps.sweeps import services, stopping
from apps.sweeps.models import Sweep, Trial
from apps.tenancy.models import Membership, Role
from tests.conftest import World
from tests.factories import make_membership, make_user
from tests.jobs.conftest import Cluster, tick, training_body

pytestmark = pytest.mark.django_db
URL = "/api/v1/tenants/tenant-a/sweeps/"
ONE_GPU = [{"name": "worker", "replicas": 1, "accelerators": 1}]


def _template(cluster: Cluster, **overrides: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "replica_groups": ONE_GPU,
        "topology": {"mode": "none"},
        "command": ["python", "train.py"],
        "args": ["--lr={{lr}}", "--opt={{opt}}"],
        "env": {"ZS_SIM_DURATION_S": "60"},
    }
    body = training_body(cluster.pool, **{**fields, **overrides})
    del body["name"], body["kind"]
    return body


def _sweep(cluster: Cluster, **overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "name": "lr-search",
        "method": "grid",
        "parameters": {"lr": [1e-4, 3e-4, 1e-3], "opt": ["adam"]},
        "parallel": 2,
        "metric": "loss",
        "goal": "min",
        "template": _template(cluster),
    }
    body.update(overrides)
    return body


def _jobs(sweep_id: int) -> list[Job]:
    return list(Job.objects.filter(trial__sweep_id=sweep_id).order_by("trial__index"))


def test_a_grid_sweep_runs_its_trials_two_at_a_time_and_ranks_them(
    world: World, cluster: Cluster, client_for
) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    response = client.post(URL, _sweep(cluster), format="json")
    assert response.status_code == 201, response.json()
    made = response.json()
    assert (made["trials"], made["state"], made["method"]) == (3, "running", "grid")
    assert made["counts"] == {"waiting": 1, "active": 2, "succeeded": 0, "failed": 0,
                              "cancelled": 0, "stopped_early": 0}  # fmt: skip
    jobs = _jobs(made["id"])
    assert [j.name for j in jobs] == ["lr-search-1", "lr-search-2"]
    assert jobs[0].spec["args"] == ["--lr=0.0001", "--opt=adam"]
    assert jobs[1].spec["args"] == ["--lr=0.0003", "--opt=adam"]
    assert {j.state for j in jobs} == {JobState.QUEUED}
    assert AuditEntry.objects.filter(object_type="jobs.job", action="create").count() == 2
    assert AuditEntry.objects.filter(object_type="sweeps.sweep", action="create").count() == 1

    tick(cluster)
    tick(cluster, 10)  # past the simulated start-up
    assert {Job.objects.get(pk=j.pk).state for j in jobs} == {JobState.RUNNING}
    assert len(_jobs(made["id"])) == 2  # the third waits for room
    env = job_env(jobs[0])
    assert env["ZS_TRIAL"] == "1" and env["ZS_SWEEP_ID"] == str(made["id"])
    assert env["ZS_TRIAL_PARAMS"] == '{"lr": 0.0001, "opt": "adam"}'
    assert Run.objects.get(job=jobs[0]).config == {"lr": 0.0001, "opt": "adam"}
    simulate.simulate_training_metrics(force=True)

    listed = client.get(f"/api/v1/tenants/tenant-a/jobs/?sweep={made['id']}").json()["results"]
    assert [j["name"] for j in listed] == ["lr-search-2", "lr-search-1"]
    job = client.get(f"/api/v1/tenants/tenant-a/jobs/{jobs[1].pk}/").json()
    assert job["trial"] == {"sweep": made["id"], "sweep_name": "lr-search", "index": 2}

    cluster.clock.advance(120)
    tick(cluster)  # both end; the next cycle starts trial 3
    tick(cluster)
    jobs = _jobs(made["id"])
    assert [j.name for j in jobs] == ["lr-search-1", "lr-search-2", "lr-search-3"]
    assert [j.state for j in jobs[:2]] == [JobState.SUCCEEDED] * 2
    tick(cluster, 10)
    simulate.simulate_training_metrics(force=True)
    cluster.clock.advance(120)
    tick(cluster)
    tick(cluster)  # trial 3 ended: nothing left, the sweep is finished
    detail = client.get(f"{URL}{made['id']}/").json()
    assert detail["state"] == "finished" and detail["finished_at"]
    assert detail["counts"]["succeeded"] == 3
    outcomes = detail["outcomes"]
    assert [r["index"] for r in outcomes] == [1, 2, 3]
    assert all(r["value"] is not None and r["run"] for r in outcomes)
    # Ranked by the newest value each run reported: the lowest loss first.
    for job, loss in zip(jobs, (2.0, 1.5, 2.5), strict=True):
        run = Run.objects.get(job=job)
        ingest_metrics(run=run, points=[("loss", 100_000, loss)])
    detail = client.get(f"{URL}{made['id']}/").json()
    assert [(r["value"], r["step"], r["rank"]) for r in detail["outcomes"]] == [
        (2.0, 100_000, 2), (1.5, 100_000, 1), (2.5, 100_000, 3),
    ]  # fmt: skip
    assert detail["best"]["index"] == 2 and detail["best"]["params"]["lr"] == 0.0003
    Sweep.objects.filter(pk=made["id"]).update(goal="max")
    assert client.get(f"{URL}{made['id']}/").json()["best"]["index"] == 3
    listed = client.get(URL).json()["results"]
    assert [(s["id"], s["best"]["index"]) for s in listed] == [(made["id"], 3)]


def test_rank_by_best_ranks_each_trial_by_its_best_value_over_its_steps(
    world: World, cluster: Cluster, client_for
) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    made = client.post(URL, _sweep(cluster, parallel=3, rank_by="best"), format="json").json()
    assert made["rank_by"] == "best"
    tick(cluster)
    tick(cluster, 10)
    curves = (
        [(10, 3.0), (20, 1.0), (30, 2.5)],  # best 1.0 at 20, newest 2.5
        [(10, 2.0), (20, 1.8), (30, 1.6), (300_000, 1.7)],  # best in the first top-level bucket
        [(10, 1.2), (20, 1.2), (30, 2.0)],  # a tie: the earlier step
    )
    for job, curve in zip(_jobs(made["id"]), curves, strict=True):
        run = Run.objects.get(job=job)
        ingest_metrics(run=run, points=[("loss", step, v) for step, v in curve])

    def seen() -> list[tuple[Any, ...]]:
        rows = client.get(f"{URL}{made['id']}/").json()["outcomes"]
        return [(r["value"], r["step"], r["rank"], r["last_value"], r["last_step"]) for r in rows]

    assert seen() == [
        (1.0, 20, 1, 2.5, 30), (1.6, 30, 3, 1.7, 300_000), (1.2, 10, 2, 2.0, 30),
    ]  # fmt: skip
    Sweep.objects.filter(pk=made["id"]).update(goal="max")
    assert seen() == [
        (3.0, 10, 1, 2.5, 30), (2.0, 10, 2, 1.7, 300_000), (2.0, 30, 3, 2.0, 30),
    ]  # fmt: skip
    Sweep.objects.filter(pk=made["id"]).update(goal="min", rank_by="last")
    assert seen() == [
        (2.5, 30, 3, 2.5, 30), (1.7, 300_000, 1, 1.7, 300_000), (2.0, 30, 2, 2.0, 30),
    ]  # fmt: skip
    assert client.post(URL, _sweep(cluster, name="x", rank_by="mean"), format="json").json()[
        "errors"
    ] == {"rank_by": ['"mean" is not a valid choice.']}


def test_the_results_as_csv(world: World, cluster: Cluster, client_for) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    body = _sweep(cluster, parameters={"lr": [1e-4, 3e-4, 1e-3], "opt": ["=cmd|x", "adam"]},
                  parallel=2)  # fmt: skip
    made = client.post(URL, body, format="json").json()
    tick(cluster)
    tick(cluster, 10)
    jobs = _jobs(made["id"])
    ingest_metrics(run=Run.objects.get(job=jobs[0]), points=[("loss", 5, 2.5), ("loss", 9, 2.0)])
    ingest_metrics(run=Run.objects.get(job=jobs[1]), points=[("loss", 7, 1.5)])
    response = client.get(f"{URL}{made['id']}/csv/")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert f'filename="sweep-{made["id"]}.csv"' in response["Content-Disposition"]
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert rows[0] == ["trial", "lr", "opt", "job", "job_name", "state", "stopped_step", "rank",
                       "loss", "step", "last_loss", "last_step", "run"]  # fmt: skip
    runs = [str(Run.objects.get(job=j).pk) for j in jobs]
    assert rows[1:4] == [
        ["1", "0.0001", "'=cmd|x", str(jobs[0].pk), "lr-search-1", "running", "", "2", "2.0", "9",
         "2.0", "9", runs[0]],
        ["2", "0.0001", "adam", str(jobs[1].pk), "lr-search-2", "running", "", "1", "1.5", "7",
         "1.5", "7", runs[1]],
        ["3", "0.0003", "'=cmd|x", "", "", "waiting", "", "", "", "", "", "", ""],
    ]  # fmt: skip
    assert len(rows) == 7  # six trials: 3 x 2
    outsider = client_for(world.user("b", Role.TENANT_ADMIN))
    assert outsider.get(f"{URL}{made['id']}/csv/").status_code == 404
    assert (
        client_for(world.user("a", Role.VIEWER)).get(f"{URL}{made['id']}/csv/").status_code == 200
    )


def test_a_random_sweep_draws_the_same_trials_from_the_same_seed(
    world: World, cluster: Cluster, client_for
) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    space = {"lr": {"log_uniform": [1e-5, 1e-2]}, "opt": ["adam", "sgd"]}
    first = client.post(URL, _sweep(cluster, name="r1", method="random", trials=5, seed=11,
                                    parameters=space, parallel=64), format="json")  # fmt: skip
    second = client.post(URL, _sweep(cluster, name="r2", method="random", trials=5, seed=11,
                                     parameters=space, parallel=64), format="json")  # fmt: skip
    assert first.status_code == second.status_code == 201, (first.json(), second.json())
    params = [
        [t.params for t in Trial.objects.filter(sweep_id=r.json()["id"])] for r in (first, second)
    ]
    assert params[0] == params[1] and len(params[0]) == 5
    assert len(_jobs(first.json()["id"])) == 5  # parallel 64: every trial at once
    assert first.json()["seed"] == 11


def test_a_parameter_sets_a_replica_groups_size(world: World, cluster: Cluster, client_for):
    client = client_for(world.user("a", Role.MEMBER))
    groups = [{"name": "worker", "replicas": "{{nodes}}", "accelerators": " {{ gpus }} "}]
    body = _sweep(
        cluster, name="scale", parameters={"gpus": [1, 2], "nodes": [1], "lr": [1e-4],
                                           "opt": ["adam"]},
        template=_template(cluster, replica_groups=groups), parallel=4,
    )  # fmt: skip
    response = client.post(URL, body, format="json")
    assert response.status_code == 201, response.json()
    jobs = _jobs(response.json()["id"])
    assert [(g["replicas"], g["accelerators"]) for j in jobs for g in j.spec["replica_groups"]] == [
        (1, 1), (1, 2),
    ]  # fmt: skip
    assert '"gpus": 2' in job_env(jobs[1])["ZS_TRIAL_PARAMS"]

    def errors(parameters: dict[str, Any], group: dict[str, Any]) -> dict[str, Any]:
        refused = client.post(URL, _sweep(cluster, name="bad", parameters=parameters,
                                          template=_template(cluster, replica_groups=[group])),
                              format="json")  # fmt: skip
        assert refused.status_code == 400, refused.json()
        return refused.json()["errors"]

    one = {"lr": [1e-4], "opt": ["adam"]}
    assert errors(one, {"name": "w", "accelerators": "{{gpus}}"})["template"] == {
        "replica_groups": ["No parameter named gpus."]
    }
    # Each trial's size is checked as a job's: the second is too large for a node.
    found = errors({**one, "gpus": [8, 32]}, {"name": "w", "accelerators": "{{gpus}}"})
    assert found["parameters"] == ["Trial 2 (lr=0.0001, opt=adam, gpus=32) makes a job that is "
                                   "refused."]  # fmt: skip
    assert "replica_groups" in found["template"]
    assert not Sweep.objects.filter(name="bad").exists()


def test_what_a_sweep_is_refused_for(world: World, cluster: Cluster, client_for) -> None:
    client = client_for(world.user("a", Role.MEMBER))

    def errors(**overrides: Any) -> dict[str, Any]:
        response = client.post(URL, _sweep(cluster, **overrides), format="json")
        assert response.status_code == 400, response.json()
        return response.json()["errors"]

    assert "parameters.lr" in errors(parameters={"lr": {"uniform": [1, 0]}, "opt": ["adam"]})
    assert "trials" in errors(method="random")
    assert errors(template={**_template(cluster), "name": "x"})["template"] == {
        "name": ["Set by the sweep for each trial; leave it out of the template."]
    }
    assert errors(template=_template(cluster, args=["--wd={{wd}}"]))["template"] == {
        "args": ["No parameter named wd."]
    }
    assert "image" in errors(template=_template(cluster, image="Not An Image"))["template"]
    assert "priority" in errors(template=_template(cluster, priority=0))["template"]
    assert "name" in errors(name="x" * 35)
    # A value that makes one trial's job refused is named with its trial.
    long = "x" * 200
    found = errors(
        parameters={"opt": ["adam", long]}, template=_template(cluster, args=["{{opt}}" * 6])
    )
    assert list(found["template"]) == ["args"]  # an item over 1,000 characters
    assert found["parameters"] == [f"Trial 2 (opt={long}) makes a job that is refused."]
    assert not Sweep.objects.exists() and not Job.objects.exists()


def test_cancel_stops_the_sweep_and_its_trials(world: World, cluster: Cluster, client_for) -> None:
    owner = world.user("a", Role.MEMBER)
    client = client_for(owner)
    made = client.post(URL, _sweep(cluster), format="json").json()
    mallory = make_user("mallory")
    make_membership(tenant=world.tenant_a, user=mallory, role=Role.MEMBER)
    other = client_for(mallory)
    assert other.post(f"{URL}{made['id']}/cancel/").status_code == 403
    response = client.post(f"{URL}{made['id']}/cancel/")
    assert response.status_code == 200
    assert response.json()["state"] == "cancelled"
    assert [j.state for j in _jobs(made["id"])] == [JobState.CANCELLED] * 2
    tick(cluster)
    assert len(_jobs(made["id"])) == 2  # no further trial starts
    again = client.post(f"{URL}{made['id']}/cancel/")
    assert again.json()["state"] == "cancelled"
    updates = AuditEntry.objects.filter(object_type="sweeps.sweep", action="update")
    assert updates.count() == 1


def test_a_sweep_stops_when_its_owner_can_no_longer_submit(
    world: World, cluster: Cluster, client_for
) -> None:
    owner = world.user("a", Role.MEMBER)
    made = client_for(owner).post(URL, _sweep(cluster, parallel=1), format="json").json()
    Membership.objects.filter(user=owner).update(role=Role.VIEWER)
    Job.objects.filter(trial__sweep_id=made["id"]).update(state=JobState.SUCCEEDED)
    services.advance()
    sweep = Sweep.objects.get(pk=made["id"])
    assert sweep.state == "stopped"
    assert "can no longer submit" in sweep.note
    assert len(_jobs(made["id"])) == 1


def test_sweeps_are_the_tenants_own(world: World, cluster: Cluster, client_for) -> None:
    made = client_for(world.user("a", Role.MEMBER)).post(URL, _sweep(cluster), format="json")
    sweep_id = made.json()["id"]
    outsider = client_for(world.user("b", Role.TENANT_ADMIN))
    assert outsider.get(f"{URL}{sweep_id}/").status_code == 404
    assert outsider.post(f"{URL}{sweep_id}/cancel/").status_code == 404
    theirs = "/api/v1/tenants/tenant-b/sweeps/"
    assert outsider.get(theirs).json()["results"] == []
    viewer = client_for(world.user("a", Role.VIEWER))
    assert viewer.get(f"{URL}{sweep_id}/").status_code == 200
    assert viewer.post(URL, _sweep(cluster, name="v"), format="json").status_code == 403


def test_a_sweep_stops_when_a_later_trial_is_refused(
    world: World, cluster: Cluster, client_for
) -> None:
    made = client_for(world.user("a", Role.MEMBER)).post(
        URL, _sweep(cluster, parallel=1), format="json"
    )
    sweep_id = made.json()["id"]
    # The pool shrinks below what a trial asks for: the next trial is refused at its start.
    cluster.pool.nodes.update(accelerator_count=0)
    Job.objects.filter(trial__sweep_id=sweep_id).update(state=JobState.SUCCEEDED)
    assert services.advance() == 0
    sweep = Sweep.objects.get(pk=sweep_id)
    assert sweep.state == "stopped" and sweep.finished_at is not None
    assert sweep.note == (
        "Trial 2 was refused: replica_groups: A replica asks for 1 accelerators; the largest "
        "node in train has 0."
    )
    assert len(_jobs(sweep_id)) == 1


def test_one_sweeps_fault_does_not_stop_the_others(
    world: World, cluster: Cluster, client_for, monkeypatch: pytest.MonkeyPatch, caplog
) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    first = client.post(URL, _sweep(cluster, name="first", parallel=1), format="json").json()
    second = client.post(URL, _sweep(cluster, name="second", parallel=1), format="json").json()
    Job.objects.filter(trial__sweep_id__in=[first["id"], second["id"]]).update(
        state=JobState.SUCCEEDED
    )
    real_check = stopping.check

    def broken(sweep: Sweep, now: Any) -> int:
        if sweep.pk == first["id"]:
            raise RuntimeError("a bug in one sweep")
        return real_check(sweep, now)

    monkeypatch.setattr(stopping, "check", broken)
    assert services.advance() == 1  # the second sweep's next trial starts
    assert len(_jobs(second["id"])) == 2 and len(_jobs(first["id"])) == 1
    assert f"sweep {first['id']}: advancing failed" in caplog.text


def test_the_list_reads_a_page_of_sweeps_in_a_fixed_number_of_queries(
    world: World, cluster: Cluster, client_for
) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client = client_for(world.user("a", Role.MEMBER))

    def add(n: int, **overrides: Any) -> None:
        for i in range(n):
            body = _sweep(cluster, name=f"s{Sweep.objects.count()}-{i}", **overrides)
            made = client.post(URL, body, format="json").json()
            for job, loss in zip(_jobs(made["id"]), (2.0, 1.5), strict=True):
                run, _ = Run.objects.get_or_create(
                    job=job, defaults={"tenant": job.tenant, "owner": job.owner, "name": job.name}
                )
                ingest_metrics(run=run, points=[("loss", 10, loss + 1), ("loss", 20, loss)])

    def list_queries() -> tuple[int, list[dict[str, Any]]]:
        with CaptureQueriesContext(connection) as seen:
            listed = client.get(URL).json()["results"]
        return len(seen.captured_queries), listed

    add(1)
    add(1, rank_by="best", goal="max")
    few, listed = list_queries()
    add(3)
    add(2, rank_by="best", goal="max")
    many, listed = list_queries()
    assert len(listed) == 7
    assert many == few  # not a few more per sweep
    # What the list says is what each sweep's own page says.
    for row in listed:
        detail = client.get(f"{URL}{row['id']}/").json()
        assert (row["trials"], row["counts"], row["best"]) == (
            detail["trials"], detail["counts"], detail["best"]
        )  # fmt: skip
    best = {(r["rank_by"], r["goal"]): r["best"] for r in listed}
    assert best[("last", "min")]["index"] == 2 and best[("last", "min")]["value"] == 1.5
    assert best[("best", "max")]["index"] == 1 and best[("best", "max")]["value"] == 3.0
