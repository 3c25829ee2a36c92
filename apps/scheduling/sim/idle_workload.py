"""openb tasks with activity profiles: the real timeline, and a loaded replay for the simulator.

* ``openb_profiles``: every GPU task of the pod list with its real lifetime
  (``deletion_time - creation_time``) and request (whole GPUs or its ``gpu_milli`` share),
  and a profile drawn from the ``IdleModel``. On the real timeline the trace's 8,152 tasks
  never contend (they hold about 14 GPUs of 6,212 on average over the 149 days), so the
  GPU-hours an idle stop returns are exactly ``gpus x (deletion - stop)``.
* ``load_workload``: the same task population under contention: tasks drawn (with
  replacement) from the trace, with their own lifetimes, arriving as a Poisson process whose
  offered GPU time over the window is ``load`` x the capacity of a random share of the
  openb nodes. ``governed=True`` shortens each task to its idle stop; the draws are the same
  either way, so the two runs differ only by the rule.
"""

from __future__ import annotations

import csv
import random
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from apps.governance.rules import IdleRule
from apps.scheduling.core import FULL_DEVICE_MILLI, Pool

from .idle import IdleModel, Profile, draw_profile, governed_duration
from .loaders import OPENB, OpenbTask, openb_nodes, openb_tasks, traces_dir
from .workload import SimJob, Workload


def gpu_tasks(base: Path | None = None) -> list[OpenbTask]:
    """The trace's tasks that hold GPUs (CPU-only tasks are not governed), in name order."""
    base = base or traces_dir() / OPENB
    tasks = openb_tasks(base / "openb_pod_list_default.csv")
    kept = [t for t in tasks if t.num_gpu > 0 and t.deletion_time is not None]
    return sorted(kept, key=lambda t: t.name)


def qos_of(base: Path | None = None) -> dict[str, str]:
    """Task name -> QoS class of the pod list (``LS`` latency-sensitive, ``BE`` best-effort,
    ``Burstable``, ``Guaranteed``); the loader does not keep it."""
    base = base or traces_dir() / OPENB
    with (base / "openb_pod_list_default.csv").open(newline="") as fh:
        return {row["name"]: row["qos"] for row in csv.DictReader(fh)}


def lifetime(task: OpenbTask) -> float:
    assert task.deletion_time is not None
    return float(max(task.deletion_time - task.creation_time, 0))


def _profile(
    task: OpenbTask, model: IdleModel, rule: IdleRule, rng: random.Random, exempt: bool
) -> Profile:
    profile = draw_profile(lifetime(task), task.milli, model, rule, rng)
    return replace(profile, exempt=True) if exempt else profile


def openb_profiles(
    tasks: Sequence[OpenbTask],
    model: IdleModel,
    rule: IdleRule,
    seed: int,
    *,
    exempt: Collection[str] = (),
) -> list[Profile]:
    """One profile per task; tasks whose name is in ``exempt`` are never judged."""
    rng = random.Random(seed)
    return [_profile(t, model, rule, rng, t.name in exempt) for t in tasks]


@dataclass(frozen=True, slots=True)
class LoadRun:
    workload: Workload
    profiles: dict[str, Profile]  # job id -> profile
    stops: dict[str, float]  # job id -> stop time after start (governed runs only)


def load_workload(
    tasks: Sequence[OpenbTask],
    model: IdleModel,
    rule: IdleRule,
    *,
    seed: int,
    load: float,
    window_h: float,
    node_share: float,
    governed: bool,
    warmup_h: float = 0.0,
    exempt: Collection[str] = (),
) -> LoadRun:
    rng = random.Random(seed)
    nodes = openb_nodes(traces_dir() / OPENB / "openb_node_list_gpu_node.csv")
    nodes.sort(key=lambda n: n.node_id)
    rng.shuffle(nodes)
    nodes = nodes[: max(1, round(len(nodes) * node_share))]
    models = {n.accelerator_model for n in nodes}
    most = max(n.accelerator_count for n in nodes)
    pool = [t for t in tasks if (not t.gpu_spec or t.gpu_spec & models) and t.num_gpu <= most]
    window = window_h * 3600
    capacity = sum(n.accelerator_count for n in nodes)
    mean_gpu_s = sum(t.milli / FULL_DEVICE_MILLI * min(lifetime(t), window) for t in pool) / len(
        pool
    )
    rate = load * capacity / mean_gpu_s  # tasks per second
    jobs: list[SimJob] = []
    profiles: dict[str, Profile] = {}
    stops: dict[str, float] = {}
    t = rng.expovariate(rate)
    i = 0
    while t < window:
        task = pool[rng.randrange(len(pool))]
        profile = _profile(task, model, rule, rng, task.name in exempt)
        job_id = f"{task.name}#{i}"
        duration = profile.lifetime
        if governed:
            duration, stop = governed_duration(profile, rule, model)
            if stop is not None:
                stops[job_id] = stop.at
        jobs.append(
            SimJob(
                job_id=job_id,
                submit=t,
                tenant="openb",
                pool="openb",
                priority=3,
                groups=(task.group(),),
                duration=max(duration, 1.0),
                kind="task",
            )
        )
        profiles[job_id] = profile
        i += 1
        t += rng.expovariate(rate)
    workload = Workload(
        name=f"openb-idle-x{load:g}-{'gov' if governed else 'nogov'}",
        nodes=tuple(nodes),
        jobs=tuple(jobs),
        pools=(Pool("openb"),),
        horizon=window,
        warmup=warmup_h * 3600,
        meta={"seed": seed, "load": load, "gpus": capacity, "tasks": len(jobs)},
    )
    return LoadRun(workload, profiles, stops)
