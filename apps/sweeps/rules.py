"""The early-stopping rules of a sweep as pure functions: no Django, no database.

``apps/sweeps/stopping.py`` feeds them a sweep's metric series from the database and acts on
what they say; ``bench/sweep_bench.py`` feeds them simulated learning curves to measure
what each rule saves. Both call this same code. The rules themselves are described in
``stopping.py`` and docs/sweeps.md.
"""

from __future__ import annotations

import operator
import statistics
from dataclasses import dataclass, replace
from fractions import Fraction

MEDIAN = "median"
ASHA = "asha"


@dataclass(frozen=True)
class Rule:
    kind: str  # MEDIAN or ASHA
    first_step: int  # stop_after_step: no judging before it; asha's first rung
    min_trials: int  # stop_min_trials: the others that must be there to judge a trial
    factor: int = 3  # reduction_factor (asha)
    maximize: bool = False  # goal max


def bracket_shares(brackets: int, factor: int) -> list[Fraction]:
    """Hyperband's split of the trials between its brackets (Li et al., JMLR 2018, the budget
    of each bracket): bracket ``b`` (from 0, the first to stop trials) makes
    ``s = brackets - 1 - b`` more cuts than the last one and gets a share in proportion to
    ``factor**s / (s + 1)``, so the brackets that stop trials early take more of them and each
    bracket spends about the same GPU time. Factor 2 with 2 brackets is an even split."""
    count = max(brackets, 1)
    weights = [Fraction(factor ** (count - 1 - b), count - b) for b in range(count)]
    total = sum(weights)
    return [w / total for w in weights]


def assign_brackets(trials: int, brackets: int, factor: int) -> list[int]:
    """The bracket (from 0; users read ``b + 1``) of trials 1..``trials``, in that order: each
    trial goes to the bracket furthest behind its share (``bracket_shares``) so far, the
    earlier bracket on a tie. Deterministic, and any first n trials are split as near the
    shares as whole trials allow."""
    shares = bracket_shares(brackets, factor)
    counts = [0] * len(shares)
    out = []
    for n in range(1, trials + 1):
        behind = [n * share - have for share, have in zip(shares, counts, strict=True)]
        chosen = behind.index(max(behind))
        counts[chosen] += 1
        out.append(chosen)
    return out


def in_bracket(rule: Rule, bracket: int) -> Rule:
    """Successive halving's rule for one bracket (Hyperband's several brackets, run side by
    side): bracket ``b`` (from 0) starts at rung ``b``, ``first_step * factor**b``, so later
    brackets stop fewer trials, and later. A trial is judged against its bracket's alone."""
    if rule.kind != ASHA or bracket == 0:
        return rule
    return replace(rule, first_step=rule.first_step * rule.factor**bracket)


@dataclass(frozen=True)
class Stop:
    """Why a trial is stopped: the note's key and its numbers (the metric's name aside)."""

    key: str
    numbers: dict[str, float]


def rung(step: int, first: int, factor: int) -> int | None:
    """The highest rung at or below ``step``: ``first * factor**k``; None below the first."""
    if first < 1 or step < first:
        return None
    at = first
    while at * factor <= step:
        at *= factor
    return at


def step_to_judge(rule: Rule, newest: int, judged: int | None) -> int | None:
    """The step a trial whose newest report is at ``newest`` is judged at now, or None: the
    median rule judges every new step from the first, successive halving each rung once."""
    if rule.kind == ASHA:
        at = rung(newest, rule.first_step, rule.factor)
    else:
        at = newest if newest >= rule.first_step else None
    if at is None or (judged is not None and at <= judged):
        return None
    return at


def verdict(rule: Rule, step: int, mine: float, theirs: list[float]) -> Stop | None:
    """Whether a trial whose value read at ``step`` is ``mine`` stops, against the values the
    others that reached ``step`` had there; None: it goes on."""
    if len(theirs) < rule.min_trials:
        return None  # too few others to judge it on
    better = operator.gt if rule.maximize else operator.lt
    if rule.kind == ASHA:
        rank = 1 + sum(better(v, mine) for v in theirs)  # ties in its favour
        keep = max(1, (len(theirs) + 1) // rule.factor)
        if rank <= keep:
            return None
        numbers = {"step": step, "value": mine, "rank": rank, "count": len(theirs) + 1}
        return Stop("earlyStoppedRung", {**numbers, "keep": keep})
    median = statistics.median(theirs)
    if not better(median, mine):
        return None
    return Stop("earlyStopped", {"step": step, "value": mine, "median": median})
