"""Adaptive search (method tpe): the first trials drawn at random, each later one chosen from
the results when it starts (apps/sweeps/adaptive.py, through Optuna's TPE sampler)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from apps.jobs.models import Job, JobState
from apps.runs.services import ensure_run_for_job, ingest_metrics
from apps.sweeps import adaptive, services
from apps.sweeps.adaptive import COMPLETE, PRUNED, RUNNING, Result, suggest
from apps.sweeps.models import Trial
from apps.sweeps.space import Parameter, parse_space
from apps.tenancy.models import Role
from tests.conftest import World
from tests.jobs.conftest import Cluster
from tests.jobs.test_sweeps import URL, _sweep

LR = Parameter("lr", kind="log_uniform", low=1e-5, high=1e-2)
SPACE = [
    LR,
    Parameter("opt", values=("adam", "lion")),
    Parameter("warmup", kind="int", low=100, high=2000),
    Parameter("dropout", kind="uniform", low=0.0, high=0.5),
]


def _loss(lr: float) -> float:
    return 1.6 + 0.6 * math.log10(lr / 3e-4) ** 2  # the simulated curves' floor, best at 3e-4


def test_a_suggestion_is_in_the_space_and_the_same_for_the_same_seed_and_results() -> None:
    results = [
        Result({"lr": 1e-4, "opt": "adam", "warmup": 500, "dropout": 0.1}, COMPLETE, 2.0, 400),
        Result({"lr": 3e-3, "opt": "lion", "warmup": 900, "dropout": 0.3}, PRUNED, 2.5, 200),
        Result({"lr": 2e-3, "opt": "lion", "warmup": 700, "dropout": 0.2}, RUNNING),
        Result({"lr": 1e-4}, COMPLETE, 1.0, 400),  # another space's: left out
        Result({"lr": 1e-4, "opt": "adam", "warmup": 5, "dropout": 0.1}, COMPLETE, math.nan),
    ]
    one = suggest(SPACE, results, maximize=False, seed=7)
    assert one == suggest(SPACE, results, maximize=False, seed=7)
    assert one != suggest(SPACE, results, maximize=False, seed=8)
    assert 1e-5 <= float(one["lr"]) <= 1e-2 and float(one["lr"]) == float(f"{one['lr']:.4g}")
    assert one["opt"] in ("adam", "lion") and isinstance(one["warmup"], int)
    assert 100 <= one["warmup"] <= 2000 and 0.0 <= float(one["dropout"]) <= 0.5
    assert set(suggest(SPACE, [], maximize=True, seed=1)) == {"lr", "opt", "warmup", "dropout"}


def test_suggestions_close_in_on_the_best_learning_rate() -> None:
    # Twelve results spread over the range; then ten suggestions, each from its own seed,
    # against ten more random draws: the suggestions sit nearer 3e-4 (in decades).
    spread = [1e-5 * 10 ** (3 * k / 11) for k in range(12)]
    results = [Result({"lr": lr}, COMPLETE, _loss(lr), 1000) for lr in spread]
    chosen = [float(suggest([LR], results, maximize=False, seed=s)["lr"]) for s in range(10)]
    offset = [abs(math.log10(lr / 3e-4)) for lr in chosen]
    assert sum(offset) / 10 < 0.25  # random draws over the 3 decades: 0.75 on average
    # And the other way round for a metric to maximize.
    up = [Result({"lr": lr}, COMPLETE, -_loss(lr), 1000) for lr in spread]
    chosen = [float(suggest([LR], up, maximize=True, seed=s)["lr"]) for s in range(10)]
    assert sum(abs(math.log10(lr / 3e-4)) for lr in chosen) / 10 < 0.25


@pytest.mark.django_db
def test_a_tpe_sweep_chooses_its_later_trials_when_they_start(
    world: World, cluster: Cluster, client_for
) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    body = _sweep(
        cluster, method="tpe", trials=4, startup_trials=2, seed=3,
        parameters={"lr": {"log_uniform": [1e-5, 1e-2]}, "opt": ["adam"]},
    )  # fmt: skip
    response = client.post(URL, body, format="json")
    assert response.status_code == 201, response.json()
    made = response.json()
    assert (made["method"], made["startup_trials"]) == ("tpe", 2)
    detail = client.get(f"{URL}{made['id']}/").json()
    params = [o["params"] for o in detail["outcomes"]]
    assert all(params[:2]) and params[2:] == [{}, {}]  # not chosen before they start

    first = list(Job.objects.filter(trial__sweep_id=made["id"]).order_by("trial__index"))
    for job, value in zip(first, (2.0, 1.5), strict=True):
        ingest_metrics(run=ensure_run_for_job(job), points=[("loss", 100, value)])
    Job.objects.filter(pk__in=[j.pk for j in first]).update(state=JobState.SUCCEEDED)
    assert services.advance() == 2
    third = Trial.objects.get(sweep_id=made["id"], index=3)
    assert third.params["opt"] == "adam" and 1e-5 <= third.params["lr"] <= 1e-2
    assert third.job is not None and third.job.spec["args"][0] == f"--lr={third.params['lr']}"
    # Chosen from the two results: the same seed and results choose the same values.
    results = [Result(t.params, COMPLETE, v) for t, v in zip(
        Trial.objects.filter(sweep_id=made["id"], index__lte=2).order_by("index"), (2.0, 1.5),
        strict=True,
    )]  # fmt: skip
    space = parse_space(body["parameters"])
    assert third.params == suggest(space, results, maximize=False, seed=(3 * 1009 + 3) % 2**31)
    # Trial 4, chosen in the same cycle, knows trial 3 is running: it is steered elsewhere.
    fourth = Trial.objects.get(sweep_id=made["id"], index=4)
    running = [*results, Result(third.params, RUNNING)]
    assert fourth.params == suggest(space, running, maximize=False, seed=(3 * 1009 + 4) % 2**31)
    assert fourth.params != suggest(space, results, maximize=False, seed=(3 * 1009 + 4) % 2**31)


@pytest.mark.django_db
def test_the_sampler_learns_the_ranking_value_of_a_finished_trial_and_the_newest_of_a_stopped(
    world: World, cluster: Cluster, client_for, monkeypatch: pytest.MonkeyPatch
) -> None:
    told: list[list[Result]] = []

    def heard(params: list[Parameter], results: list[Result], **kw: Any) -> dict[str, Any]:
        told.append(results)  # what the sampler was told; it still chooses
        return suggest(params, results, **kw)

    monkeypatch.setattr(adaptive, "suggest", heard)
    client = client_for(world.user("a", Role.MEMBER))
    body = _sweep(
        cluster, method="tpe", trials=3, startup_trials=2, seed=5, rank_by="best",
        parameters={"lr": {"log_uniform": [1e-5, 1e-2]}, "opt": ["adam"]},
    )  # fmt: skip
    made = client.post(URL, body, format="json").json()
    done, stopped = Job.objects.filter(trial__sweep_id=made["id"]).order_by("trial__index")
    ingest_metrics(run=ensure_run_for_job(done), points=[("loss", 100, 1.0), ("loss", 200, 2.0)])
    ingest_metrics(run=ensure_run_for_job(stopped), points=[("loss", 100, 0.8), ("loss", 200, 1.9)])
    Job.objects.filter(pk=done.pk).update(state=JobState.SUCCEEDED)
    Job.objects.filter(pk=stopped.pk).update(state=JobState.CANCELLED)
    Trial.objects.filter(job=stopped).update(stopped_step=200)
    assert services.advance() == 1
    first, second, third = Trial.objects.filter(sweep_id=made["id"]).order_by("index")
    # The finished trial by its best value (rank_by best); the stopped one by its value where
    # it was stopped, as the pruning sampler expects of an intermediate value.
    results = [Result(first.params, COMPLETE, 1.0), Result(second.params, PRUNED, 1.9, 200)]
    assert told == [results]
    seed = (5 * 1009 + 3) % 2**31
    assert third.params == suggest(parse_space(body["parameters"]), results, maximize=False,
                                   seed=seed)  # fmt: skip


@pytest.mark.django_db
def test_a_tpe_sweep_needs_a_metric_and_trials_after_the_startup(
    world: World, cluster: Cluster, client_for
) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    tpe = {"method": "tpe", "parameters": {"lr": {"uniform": [0.1, 0.2]}, "opt": ["adam"]}}
    response = client.post(URL, _sweep(cluster, **tpe, trials=10, metric=""), format="json")
    assert response.status_code == 400
    assert response.json()["errors"] == {
        "metric": ["An adaptive search chooses trials by a metric: name one."],
        "trials": [
            "The first 10 trials (startup_trials) are drawn at random; ask for more trials "
            "than that, or lower startup_trials."
        ],
    }
    ok = client.post(URL, _sweep(cluster, **tpe, trials=3, startup_trials=1), format="json")
    assert ok.status_code == 201, ok.json()
