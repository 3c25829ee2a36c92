"""Adaptive search: each later trial of a ``tpe`` sweep is chosen, when it starts, from the
results of the trials before it, by the Tree-structured Parzen Estimator (Bergstra et al.,
"Algorithms for Hyper-Parameter Optimization", NeurIPS 2011) as Optuna implements it.

Pure: no Django, no database. ``apps/sweeps/services.py`` feeds it a sweep's results when a
trial's slot frees; ``bench/sweep_bench.py`` feeds it simulated curves. Optuna is used as a
library only (an in-memory study rebuilt from the results each time, its TPE sampler asked
for one trial), so nothing of it is stored and a sweep stays reproducible: the same seed and
the same results give the same values.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from apps.sweeps.space import SIGNIFICANT, Parameter, Value

if TYPE_CHECKING:
    from optuna.distributions import BaseDistribution


COMPLETE, PRUNED, RUNNING = "complete", "pruned", "running"


@dataclass(frozen=True)
class Result:
    """A trial the sampler knows of: ``complete`` (it ran to its end; ``value`` the value of
    the metric that ranks it, by the sweep's ``rank_by``), ``pruned`` (stopped early, with
    ``value`` at ``step``) or ``running`` (started, no result yet: the sampler steers away
    from its values, so trials chosen while others run do not all land in one place)."""

    params: dict[str, Value]
    state: str  # COMPLETE, PRUNED or RUNNING
    value: float = math.nan
    step: int = 0


def _distribution(param: Parameter) -> BaseDistribution:
    from optuna.distributions import (
        CategoricalDistribution,
        FloatDistribution,
        IntDistribution,
    )

    if param.kind == "values":
        return CategoricalDistribution(param.values)
    if param.kind == "int":
        return IntDistribution(int(param.low), int(param.high))
    return FloatDistribution(param.low, param.high, log=param.kind == "log_uniform")


def _inside(param: Parameter, value: Value) -> Value:
    """A float as the random draws write it (four significant digits), kept in its range."""
    if param.kind not in ("uniform", "log_uniform") or isinstance(value, bool):
        return value
    assert isinstance(value, (int, float))
    return min(param.high, max(param.low, float(f"{value:.{SIGNIFICANT}g}")))


def suggest(
    params: list[Parameter], results: list[Result], *, maximize: bool, seed: int
) -> dict[str, Value]:
    """The values of the next trial, given the results so far."""
    import optuna
    from optuna.trial import TrialState, create_trial

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    space = {p.name: _distribution(p) for p in params}
    states = {
        COMPLETE: TrialState.COMPLETE,
        PRUNED: TrialState.PRUNED,
        RUNNING: TrialState.RUNNING,
    }
    study = optuna.create_study(
        direction="maximize" if maximize else "minimize",
        # Startup is the sweep's own (its first trials are drawn as a random sweep's), so the
        # sampler models whatever results there are; with none it samples the prior.
        # constant_liar: a running trial counts as a poor one, so the next choice looks elsewhere.
        sampler=optuna.samplers.TPESampler(seed=seed, n_startup_trials=0, constant_liar=True),
    )
    for result in results:
        usable = result.state == RUNNING or math.isfinite(result.value)
        if not usable or set(result.params) != set(space):
            continue  # a trial of an older space, or a value the model cannot use
        values = {p.name: _inside(p, result.params[p.name]) for p in params}
        study.add_trial(
            create_trial(
                params=values,
                distributions=space,
                state=states[result.state],
                value=result.value if result.state == COMPLETE else None,
                intermediate_values={result.step: result.value} if result.state == PRUNED else None,
            )
        )
    chosen = study.ask(space).params
    return {p.name: _inside(p, chosen[p.name]) for p in params}
