"""Locating slow nodes with light pairwise probes (NCCL-tests style send/recv), in few rounds.

Pure Python, no Django: the product, the simulated probe runner and the benchmark share it.

A pair's bandwidth is bounded by its slower node, so:

1. **Screen**: pair every node at random and probe all pairs in parallel (one round). The
   round's median is the healthy reference (most nodes are healthy). A pair below
   ``reference * (1 - threshold)`` makes both its nodes suspects; everyone else is known good
   (noise only ever lowers a measurement much, never lifts a slow node to normal).
2. **Re-pair**: each suspect is probed with a distinct known-good node. A normal result clears
   it (a slow node cannot measure normal); a low one is a vote.
3. **Confirm**: suspects with a vote are probed again with a *different* good node. Two low
   votes with two good partners mark a node slow; one outlier (congestion, a hiccup) cannot.

Three rounds when there is a slow node, one when there is none; more only when the suspects
outnumber the good nodes that can be lent to them in one round (capped at ``max_rounds``).
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

Pair = tuple[str, str]


class ProbeRunner(Protocol):
    """Runs one round of probes in parallel; answers bus bandwidth (GB/s) per pair. A pair
    whose probe failed or timed out is absent from the answer."""

    def run_round(self, pairs: Sequence[Pair]) -> dict[Pair, float]: ...


@dataclass
class RoundRecord:
    purpose: str
    results: list[tuple[str, str, float | None]]  # None: the probe failed or timed out
    reference_gbps: float

    def as_dict(self) -> dict[str, object]:
        return {
            "purpose": self.purpose,
            "reference_gbps": round(self.reference_gbps, 2),
            "pairs": [[a, b, None if v is None else round(v, 2)] for a, b, v in self.results],
        }


@dataclass
class Search:
    slow: list[str] = field(default_factory=list)
    rounds: list[RoundRecord] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)  # still suspect at max_rounds


def locate_slow_nodes(
    nodes: Sequence[str],
    runner: ProbeRunner,
    *,
    rng: random.Random | None = None,
    threshold: float = 0.10,
    votes_needed: int = 2,
    max_rounds: int = 6,
) -> Search:
    rng = rng or random.Random()
    search = Search()
    if len(nodes) < 2:
        return search
    order = list(nodes)
    rng.shuffle(order)
    pairs = [(order[i], order[i + 1]) for i in range(0, len(order) - 1, 2)]
    asked = set(pairs)
    screen = {p: v for p, v in runner.run_round(pairs).items() if p in asked}
    if not screen:  # no probe finished (the cluster refused them all): nothing to compare
        search.rounds.append(RoundRecord("screen", [(a, b, None) for a, b in pairs], 0.0))
        search.unresolved = sorted(order)
        return search
    reference = statistics.median(screen.values())
    floor = reference * (1 - threshold)
    search.rounds.append(
        RoundRecord("screen", [(a, b, screen.get((a, b))) for a, b in pairs], reference)
    )
    # A pair whose probe failed (no result) makes both its nodes suspects, like a slow one.
    suspects: list[str] = [n for p in pairs if screen.get(p, 0.0) < floor for n in p]
    good = [n for pair, v in screen.items() if v >= floor for n in pair]
    if len(order) % 2:
        suspects.append(order[-1])  # the odd one out was not probed: treat it as a suspect
    votes: dict[str, int] = dict.fromkeys(suspects, 0)
    partners: dict[str, set[str]] = {s: set() for s in suspects}
    while votes and len(search.rounds) < max_rounds and good:
        batch: list[Pair] = []
        lenders = list(good)
        rng.shuffle(lenders)
        for s in list(votes):
            helper = next((g for g in lenders if g not in partners[s]), None)
            if helper is None:
                continue
            lenders.remove(helper)
            partners[s].add(helper)
            batch.append((s, helper))
        if not batch:
            break
        measured = runner.run_round(batch)
        purpose = "re-pair" if len(search.rounds) == 1 else "confirm"
        search.rounds.append(
            RoundRecord(purpose, [(a, b, measured.get((a, b))) for a, b in batch], reference)
        )
        for s, helper in batch:
            if (s, helper) not in measured:
                continue  # a failed probe is no evidence either way: try another partner
            if measured[(s, helper)] >= floor:
                del votes[s]  # a slow node cannot measure normal: cleared
                good.append(s)
                continue
            votes[s] += 1
            if votes[s] >= votes_needed:
                search.slow.append(s)
                del votes[s]
    search.unresolved = sorted(votes)
    search.slow.sort()
    return search


def bisect_slow_nodes(
    nodes: Sequence[str],
    runner: GroupRunner,
    *,
    expected_gbps: float,
    threshold: float = 0.10,
    max_rounds: int = 20,
) -> Search:
    """The baseline: submit a job on each half of every slow group and keep the slow halves
    (adaptive group testing). Each round is a real job in production: tens of minutes."""
    search = Search()
    floor = expected_gbps * (1 - threshold)
    groups = [list(nodes)]
    while groups and len(search.rounds) < max_rounds:
        halves = [h for g in groups for h in (g[: len(g) // 2], g[len(g) // 2 :]) if h]
        measured = runner.run_groups(halves)
        search.rounds.append(
            RoundRecord(
                "bisect",
                [(h[0], h[-1], v) for h, v in zip(halves, measured, strict=True)],
                expected_gbps,
            )
        )
        groups = []
        for half, value in zip(halves, measured, strict=True):
            if value >= floor:
                continue
            if len(half) == 1:
                search.slow.append(half[0])
            else:
                groups.append(half)
    search.unresolved = sorted(n for g in groups for n in g)
    search.slow.sort()
    return search


class GroupRunner(Protocol):
    def run_groups(self, groups: Sequence[Sequence[str]]) -> list[float]: ...


@dataclass
class SimulatedProbeRunner:
    """Per-link bandwidth with noise and slow nodes, clearly a model, not a measurement.

    A probe between two nodes measures ``base_gbps * min(speed) * link * noise``: ``speed`` is
    1.0 for a healthy node (0.6-0.8 for one slow by 20-40%), ``link`` a fixed per-pair factor
    (cables and switch ports differ a little), ``noise`` log-normal run-to-run jitter, and with
    probability ``outlier_rate`` a probe is disturbed by other traffic and loses 5-30%.
    """

    speed: dict[str, float]
    base_gbps: float = 185.0
    noise_sigma: float = 0.02
    link_sigma: float = 0.015
    outlier_rate: float = 0.02
    rng: random.Random = field(default_factory=random.Random)

    def __post_init__(self) -> None:
        self._links: dict[frozenset[str], float] = {}
        self.probes = 0

    def _link(self, a: str, b: str) -> float:
        key = frozenset((a, b))
        if key not in self._links:
            self._links[key] = math.exp(self.rng.gauss(0.0, self.link_sigma))
        return self._links[key]

    def _jitter(self) -> float:
        value = math.exp(self.rng.gauss(0.0, self.noise_sigma))
        if self.rng.random() < self.outlier_rate:
            value *= 1.0 - self.rng.uniform(0.05, 0.30)
        return value

    def run_round(self, pairs: Sequence[Pair]) -> dict[Pair, float]:
        self.probes += len(pairs)
        return {
            (a, b): self.base_gbps
            * min(self.speed.get(a, 1.0), self.speed.get(b, 1.0))
            * self._link(a, b)
            * self._jitter()
            for a, b in pairs
        }

    def run_groups(self, groups: Sequence[Sequence[str]]) -> list[float]:
        """A job on each group (bisection): bounded by the slowest node of the group."""
        return [
            self.base_gbps * min(self.speed.get(n, 1.0) for n in g) * self._jitter() for g in groups
        ]
