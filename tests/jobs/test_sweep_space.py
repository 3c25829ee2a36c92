"""A sweep's search space: parsing, the grid, seeded draws, and filling a job template."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from apps.clusters.backends.simcurves import env_learning_rate, training_point
from apps.sweeps.space import SpaceError, fill, parse_space, trials, unknown_placeholders


def test_a_grid_takes_every_combination_the_last_parameter_fastest() -> None:
    params = parse_space({"lr": [0.1, 0.01], "opt": {"values": ["adam", "sgd", "lion"]}})
    got = trials(params, "grid", None, seed=1)
    assert len(got) == 6
    assert got[:3] == [
        {"lr": 0.1, "opt": "adam"},
        {"lr": 0.1, "opt": "sgd"},
        {"lr": 0.1, "opt": "lion"},
    ]
    assert got[3] == {"lr": 0.01, "opt": "adam"}


def test_random_draws_depend_on_the_seed_alone_and_stay_in_range() -> None:
    params = parse_space({
        "lr": {"log_uniform": [1e-5, 1e-2]},
        "dropout": {"uniform": [0, 0.5]},
        "layers": {"int": [2, 4]},
        "opt": ["adam", "sgd"],
    })  # fmt: skip
    first = trials(params, "random", 50, seed=7)
    assert first == trials(params, "random", 50, seed=7)
    assert first != trials(params, "random", 50, seed=8)
    lrs = [float(t["lr"]) for t in first]
    assert all(isinstance(t["lr"], float) and isinstance(t["layers"], int) for t in first)
    assert all(1e-5 <= lr <= 1e-2 for lr in lrs)
    assert all(0 <= float(t["dropout"]) <= 0.5 for t in first)
    assert {t["layers"] for t in first} == {2, 3, 4}  # both ends included
    assert {t["opt"] for t in first} == {"adam", "sgd"}
    # Log-uniform: about as many draws per decade (3 decades, 50 draws).
    decades = [math.floor(math.log10(lr)) for lr in lrs]
    assert all(decades.count(d) >= 8 for d in (-5, -4, -3))
    # Floats keep 4 significant digits, so a command line reads well.
    assert all(float(f"{lr:.4g}") == lr for lr in lrs)


@pytest.mark.parametrize(
    ("spec", "field", "words"),
    [
        ({}, "parameters", "at least one"),
        ({"2lr": [1]}, "parameters.2lr", "parameter name"),
        ({"lr": []}, "parameters.lr", "1 to 64"),
        ({"lr": [[1]]}, "parameters.lr", "string"),
        ({"lr": {"normal": [0, 1]}}, "parameters.lr", "Unknown kind 'normal'"),
        ({"lr": {"uniform": [1]}}, "parameters.lr", "[low, high]"),
        ({"lr": {"uniform": [2, 1]}}, "parameters.lr", "below high"),
        ({"lr": {"log_uniform": [0, 1]}}, "parameters.lr", "above 0"),
        ({"n": {"int": [1.5, 3]}}, "parameters.n", "whole numbers"),
        ({"lr": {"values": [1], "uniform": [0, 1]}}, "parameters.lr", "Give a list"),
    ],
)
def test_a_bad_parameter_is_named_with_its_problem(spec: object, field: str, words: str) -> None:
    with pytest.raises(SpaceError) as caught:
        parse_space(spec)
    assert words in " ".join(caught.value.errors[field])


def test_what_a_grid_or_a_random_search_refuses() -> None:
    ranged = parse_space({"lr": {"uniform": [0, 1]}, "bs": [1, 2]})
    with pytest.raises(SpaceError) as caught:
        trials(ranged, "grid", None, 0)
    assert list(caught.value.errors) == ["parameters.lr"]
    big = parse_space({f"p{i}": [1, 2] for i in range(9)})  # 512 combinations
    with pytest.raises(SpaceError) as caught:
        trials(big, "grid", None, 0)
    assert "512 combinations" in caught.value.errors["parameters"][0]
    with pytest.raises(SpaceError) as caught:
        trials(parse_space({"bs": [1, 2]}), "grid", 5, 0)
    assert "every combination (2)" in caught.value.errors["trials"][0]
    with pytest.raises(SpaceError) as caught:
        trials(ranged, "random", None, 0)
    assert list(caught.value.errors) == ["trials"]


def test_a_template_is_filled_in_command_args_and_env_only() -> None:
    template: dict[str, Any] = {
        "image": "x/{{lr}}",
        "command": ["python", "train.py"],
        "args": ["--lr={{lr}}", "--fused", "--opt", "{{ opt }}", "${HOME}"],
        "env": {"DROPOUT": "{{drop}}", "AMP": "{{amp}}", "KEEP": "{{later}}"},
    }
    body = fill(template, {"lr": 3e-05, "opt": "adam", "drop": 0.1, "amp": True})
    assert body["args"] == ["--lr=3e-05", "--fused", "--opt", "adam", "${HOME}"]
    assert body["env"] == {"DROPOUT": "0.1", "AMP": "true", "KEEP": "{{later}}"}
    assert body["image"] == "x/{{lr}}"  # only command, args and env take values
    assert template["args"][0] == "--lr={{lr}}"  # the template itself is left as it was
    assert unknown_placeholders(template, {"lr", "opt", "drop", "amp"}) == {
        "env": ["No parameter named later."]
    }


def test_the_simulated_curve_settles_lowest_near_the_best_learning_rate() -> None:
    """The simulated cluster's made-up loss follows a trial's lr, so a demo sweep has a best
    trial; a job without one keeps the curve it always had."""
    late = 100_000
    for job_id in range(1, 21):
        losses = [training_point(job_id, 8, late, lr)["loss"] for lr in (3e-4, 1e-3, 1e-5, 3e-2)]
        assert losses == sorted(losses)
        assert training_point(job_id, 8, late, 1e-3)["lr"] < 1e-3  # its schedule peaks there
        plain = training_point(job_id, 8, late)["loss"]
        assert abs(plain - (1.6 + random.Random(job_id).random())) < 0.15
    assert env_learning_rate({"ZS_TRIAL_PARAMS": '{"lr": 0.001, "opt": "adam"}'}) == 0.001
    assert env_learning_rate({"ZS_TRIAL_PARAMS": '{"learning_rate": 2}'}) == 2.0
    assert env_learning_rate({"ZS_TRIAL_PARAMS": '{"lr": "fast"}'}) is None
    assert env_learning_rate({"ZS_TRIAL_PARAMS": "not json"}) is None
    assert env_learning_rate({}) is None
