"""Idle-GPU governance in the simulator: an activity model of tasks and the idle rule on it.

The openb pod list gives each task its GPU request (whole GPUs, or ``gpu_milli`` of one
shared GPU) and its lifetime (``creation_time`` .. ``deletion_time``), but no utilization
series. So each task gets an *activity profile* drawn from an explicit model
(``IdleModel``, parameters in ``bench/governance_idle.toml``): the intervals of its life in
which its GPUs are idle; the rest is busy. Classes:

* ``never``: idle from start to deletion (a reserved pod or notebook nobody uses);
* ``tail``: busy, then idle for the last ``tail_frac`` of its life (finished work, or a
  notebook left open, that nobody deletes);
* ``pause``: busy, one idle gap, then busy again until the end (the case where a stop is a
  *false stop*: the task would have worked again);
* ``active``: busy all its life.

The rule (``apps.governance.rules``, the one production applies) sees the *measured*
utilization: a busy task reads ``busy_util`` % (drawn per task). For a GPU-sharing task the
measure is either normalized by its share (``measure = "share"``: it reads ``busy_util``)
or raw (``"raw"``: ``busy_util * gpu_milli / 1000`` % of the device, so a busy task on a
small share can read below the threshold and be taken for idle).

Since a task's profile is relative to its start, the rule's outcome is too: ``first_stop``
gives the time after start at which the sweep would stop it, or ``None``. "With
governance" a task then simply ends at that time, so the simulator needs no new hook: its
``duration`` is shortened and the freed GPUs go to the queue like at any completion.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from apps.governance.rules import (
    BUILTIN_RULE,
    IdleRule,
    extended_stop_s,
    may_extend,
    reads_idle,
)
from apps.scheduling.core import FULL_DEVICE_MILLI

Interval = tuple[float, float]

CLASSES = ("never", "tail", "pause", "active")


# ------------------------------------------------------------------------- the model


@dataclass(frozen=True, slots=True)
class IdleModel:
    """Parameters of the activity model (see the module docstring and the TOML file)."""

    p_never: float = 0.15
    p_tail: float = 0.30
    p_pause: float = 0.15
    tail_frac: tuple[float, float] = (0.2, 0.8)  # uniform range of the idle tail's share
    pause_median_h: float = 1.5  # log-normal idle gap of ``pause`` tasks
    pause_sigma: float = 1.0
    busy_util: tuple[float, float] = (30.0, 90.0)  # uniform range of busy utilization (%)
    measure: str = "share"  # "share" | "raw" (see the module docstring)
    keep_running: float = 0.2  # share of warned owners who click every extension allowed
    notebook: bool = False  # judge every task with the notebook idle period
    sweep_s: float = 60.0  # the governance pass runs every minute

    def __post_init__(self) -> None:
        if min(self.p_never, self.p_tail, self.p_pause) < 0 or (
            self.p_never + self.p_tail + self.p_pause > 1 + 1e-9
        ):
            raise ValueError("class probabilities must be >= 0 and sum to at most 1")
        if self.measure not in ("share", "raw"):
            raise ValueError("measure must be 'share' or 'raw'")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> IdleModel:
        kw: dict[str, Any] = {}
        for name in cls.__dataclass_fields__:
            if name in data:
                value = data[name]
                kw[name] = tuple(value) if isinstance(value, list) else value
        return cls(**kw)


def rule_from_dict(data: dict[str, Any]) -> IdleRule:
    return replace(BUILTIN_RULE, **{k: v for k, v in data.items() if hasattr(BUILTIN_RULE, k)})


@dataclass(frozen=True, slots=True)
class Profile:
    """One task's activity: ``idle`` intervals (seconds after its start, sorted, disjoint)
    within ``[0, lifetime)``; busy elsewhere. ``reads_idle_when_busy``: the measured
    utilization of its busy phases is below the threshold too (raw share measure)."""

    lifetime: float
    milli: int
    kind: str
    idle: tuple[Interval, ...]
    busy_util: float
    keeps_running: bool = False
    reads_idle_when_busy: bool = False
    exempt: bool = False  # never judged (e.g. an inference service)

    @property
    def gpus(self) -> float:
        return self.milli / FULL_DEVICE_MILLI

    def idle_time(self, until: float | None = None) -> float:
        end = self.lifetime if until is None else min(until, self.lifetime)
        return sum(max(0.0, min(b, end) - a) for a, b in self.idle)

    def busy_after(self, t: float) -> float:
        """Busy seconds of the task's life after ``t``."""
        if t >= self.lifetime:
            return 0.0
        return (self.lifetime - t) - (self.idle_time() - self.idle_time(t))

    def observed_idle(self) -> tuple[Interval, ...]:
        """The intervals the rule sees as idle."""
        return ((0.0, self.lifetime),) if self.reads_idle_when_busy else self.idle


def draw_profile(
    lifetime: float, milli: int, model: IdleModel, rule: IdleRule, rng: random.Random
) -> Profile:
    """One task's profile. Always the same number of draws, whatever the class, so that
    changing one parameter does not reshuffle the other tasks' profiles."""
    u_class, u_frac, u_pos, gap_z = rng.random(), rng.random(), rng.random(), rng.gauss(0, 1)
    u_busy, u_keep = rng.random(), rng.random()
    lo, hi = model.busy_util
    busy = lo + (hi - lo) * u_busy
    share = milli / FULL_DEVICE_MILLI if milli < FULL_DEVICE_MILLI else 1.0
    measured = busy * share if model.measure == "raw" else busy
    idle: tuple[Interval, ...]
    if u_class < model.p_never:
        kind, idle = "never", ((0.0, lifetime),)
    elif u_class < model.p_never + model.p_tail:
        f_lo, f_hi = model.tail_frac
        frac = f_lo + (f_hi - f_lo) * u_frac
        kind, idle = "tail", ((lifetime * (1 - frac), lifetime),)
    elif u_class < model.p_never + model.p_tail + model.p_pause:
        gap = min(model.pause_median_h * 3600 * math.exp(model.pause_sigma * gap_z), 0.8 * lifetime)
        start = (lifetime - gap) * (0.1 + 0.8 * u_pos)  # busy on both sides
        kind, idle = "pause", ((start, start + gap),)
    else:
        kind, idle = "active", ()
    idle = tuple((a, b) for a, b in idle if b > a)
    return Profile(
        lifetime=lifetime,
        milli=milli,
        kind=kind,
        idle=idle,
        busy_util=busy,
        keeps_running=u_keep < model.keep_running,
        reads_idle_when_busy=reads_idle(measured, rule.util_threshold_pct),
    )


# ------------------------------------------------------------------------- the rule


def _on_sweep(t: float, sweep_s: float) -> float:
    """The first governance pass at or after ``t`` (passes at multiples of ``sweep_s``)."""
    return math.ceil(t / sweep_s - 1e-9) * sweep_s if sweep_s > 0 else t


@dataclass(frozen=True, slots=True)
class Stop:
    at: float  # seconds after the task's start
    warnings: int  # warnings issued, including the one that led to the stop
    extensions: int  # keep-running clicks on the final warning


def first_stop(
    observed_idle: Sequence[Interval],
    lifetime: float,
    rule: IdleRule,
    *,
    keeps_running: bool = False,
    notebook: bool = False,
    sweep_s: float = 60.0,
) -> Stop | None:
    """When the idle rule stops a task whose measured utilization is below the threshold
    exactly in ``observed_idle`` (else at or above it), or ``None`` if it ends first.

    As in ``services._idle_pass``: a pass warns when the whole last idle period read idle
    (so the task has run that long); the stop falls ``grace_s`` later, pushed out by
    ``extension_s`` per keep-running click (up to ``max_extensions``; an owner who keeps
    running clicks them all); any busy reading before the stop clears the warning, and a
    new full idle period is needed to warn again.
    """
    idle_s = rule.idle_s(notebook)
    warnings = 0
    for a, b in observed_idle:
        warn = _on_sweep(a + idle_s, sweep_s)
        if warn >= b or warn >= lifetime:
            continue  # busy again (or gone) before a full idle period
        warnings += 1
        stop_at = warn + rule.grace_s
        used = 0
        while keeps_running and may_extend(used, rule.max_extensions):
            stop_at = extended_stop_s(stop_at, warn, rule.extension_s)
            used += 1
        stop = _on_sweep(stop_at, sweep_s)
        if stop >= lifetime:
            return None  # it ends on its own first
        if stop < b:  # every reading from the warning to the stop was idle (0 %)
            return Stop(at=stop, warnings=warnings, extensions=used)
        # busy before the stop: the warning is cleared
    return None


# ------------------------------------------------------------------------- accounting


@dataclass
class Reclaim:
    """GPU-hours of a set of tasks, with and without the idle rule (no queueing)."""

    tasks: int = 0
    allocated_gpu_h: float = 0.0
    idle_gpu_h: float = 0.0
    reclaimed_gpu_h: float = 0.0  # allocation the stops returned (stop .. deletion)
    idle_reclaimed_gpu_h: float = 0.0  # the part of it that was really idle
    false_stop_busy_gpu_h: float = 0.0  # busy work cut off by false stops
    stopped: int = 0
    false_stops: int = 0  # stopped tasks that would have been busy again
    warnings: int = 0
    extended: int = 0
    exempt: int = 0  # tasks never judged
    by_class: dict[str, int] = field(default_factory=dict)

    def pct(self, value: float) -> float:
        return 100 * value / self.allocated_gpu_h if self.allocated_gpu_h else 0.0


def reclaim(profiles: Sequence[Profile], rule: IdleRule, model: IdleModel) -> Reclaim:
    out = Reclaim()
    for p in profiles:
        out.tasks += 1
        out.by_class[p.kind] = out.by_class.get(p.kind, 0) + 1
        out.allocated_gpu_h += p.gpus * p.lifetime / 3600
        out.idle_gpu_h += p.gpus * p.idle_time() / 3600
        out.exempt += p.exempt
        stop = decide(p, rule, model)
        if stop is None:
            continue
        out.warnings += stop.warnings
        out.stopped += 1
        out.extended += stop.extensions > 0
        freed = p.lifetime - stop.at
        busy_lost = p.busy_after(stop.at)
        out.reclaimed_gpu_h += p.gpus * freed / 3600
        out.idle_reclaimed_gpu_h += p.gpus * (freed - busy_lost) / 3600
        if busy_lost > 0:
            out.false_stops += 1
            out.false_stop_busy_gpu_h += p.gpus * busy_lost / 3600
    return out


def decide(p: Profile, rule: IdleRule, model: IdleModel) -> Stop | None:
    if p.exempt:
        return None
    return first_stop(
        p.observed_idle(),
        p.lifetime,
        rule,
        keeps_running=p.keeps_running,
        notebook=model.notebook,
        sweep_s=model.sweep_s,
    )


def governed_duration(p: Profile, rule: IdleRule, model: IdleModel) -> tuple[float, Stop | None]:
    """How long the task holds its GPUs under the rule: until its stop, else its lifetime."""
    stop = decide(p, rule, model)
    return (p.lifetime if stop is None else stop.at), stop
