"""Generator of LLM-era workloads on the reference topology, from a TOML file.

The parameters and where their shapes come from are documented in the file itself
(``bench/llm_workload.toml``). Everything is drawn from one ``random.Random(seed)``: the
same file and seed give the same workload.
"""

from __future__ import annotations

import math
import random
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from apps.scheduling.core import (
    Pool,
    Quota,
    ReplicaGroup,
    Tier,
    TopologyMode,
    TopologyRequirement,
)
from apps.scheduling.core.synthetic import reference_nodes

from .workload import NodeFailure, SimJob, Workload

HOUR = 3600.0
DAY = 24 * HOUR
WEEK = 7 * DAY
RUNTIMES = ("exact", "declared")


@dataclass(frozen=True, slots=True)
class JobClass:
    name: str
    kind: str
    share: float
    gpus: tuple[int, ...]
    gpus_weights: tuple[float, ...]
    median_h: float
    sigma: float
    max_h: float
    priority: tuple[int, ...]
    priority_weights: tuple[float, ...]
    tenants: tuple[str, ...]
    tenant_weights: tuple[float, ...]
    milli: tuple[int, ...] = (0,)
    milli_weights: tuple[float, ...] = (1.0,)
    topology: str = "none"
    checkpoint_min: float = 0.0
    restart_min: float = 0.0
    max_wait_h: float | None = None
    long_running: bool = False


def _tuple(value: Any) -> tuple[Any, ...]:
    return tuple(value) if isinstance(value, list) else (value,)


def load_config(path: Path) -> dict[str, Any]:
    with path.open("rb") as fh:
        return tomllib.load(fh)


def job_classes(config: dict[str, Any]) -> list[JobClass]:
    out = []
    for raw in config["classes"]:
        out.append(
            JobClass(
                name=raw["name"],
                kind=raw.get("kind", "train"),
                share=float(raw["share"]),
                gpus=_tuple(raw["gpus"]),
                gpus_weights=_tuple(raw.get("gpus_weights", [1.0] * len(_tuple(raw["gpus"])))),
                median_h=float(raw["median_h"]),
                sigma=float(raw["sigma"]),
                max_h=float(raw.get("max_h", 1e9)),
                priority=_tuple(raw["priority"]),
                priority_weights=_tuple(raw["priority_weights"]),
                tenants=_tuple(raw["tenants"]),
                tenant_weights=_tuple(raw["tenant_weights"]),
                milli=_tuple(raw.get("milli", [0])),
                milli_weights=_tuple(raw.get("milli_weights", [1.0])),
                topology=raw.get("topology", "none"),
                checkpoint_min=float(raw.get("checkpoint_min", 0)),
                restart_min=float(raw.get("restart_min", 0)),
                max_wait_h=raw.get("max_wait_h"),
                long_running=bool(raw.get("long_running", False)),
            )
        )
    return out


def _job(
    cls: JobClass, job_id: str, rng: random.Random, pool: str, model: str, per_node: int
) -> SimJob:
    gpus = rng.choices(cls.gpus, cls.gpus_weights)[0]
    milli = rng.choices(cls.milli, cls.milli_weights)[0] if gpus == 1 else 0
    if milli:
        groups = (ReplicaGroup("worker", 1, accelerator_milli=milli, models=frozenset({model})),)
    elif gpus <= per_node:
        groups = (ReplicaGroup("worker", 1, accelerators=gpus, models=frozenset({model})),)
    else:
        groups = (
            ReplicaGroup(
                "worker", gpus // per_node, accelerators=per_node, models=frozenset({model})
            ),
        )
    hours = min(cls.max_h, cls.median_h * math.exp(cls.sigma * rng.gauss(0.0, 1.0)))
    topo = TopologyRequirement()
    if groups[0].replicas > 1 and cls.topology != "none":
        mode = TopologyMode.HARD if cls.topology == "hard" else TopologyMode.SOFT
        topo = TopologyRequirement(mode, Tier.SPINE)
    return SimJob(
        job_id=job_id,
        submit=0.0,
        tenant=rng.choices(cls.tenants, cls.tenant_weights)[0],
        pool=pool,
        priority=rng.choices(cls.priority, cls.priority_weights)[0],
        groups=groups,
        duration=None if cls.long_running else max(hours * HOUR, 60.0),
        topology=topo,
        kind=cls.kind,
        max_wait=None if cls.max_wait_h is None else float(cls.max_wait_h) * HOUR,
        checkpoint_interval=cls.checkpoint_min * 60 or None,
        restart_cost=cls.restart_min * 60,
    )


def declared_limit(needed: float, factor: float, round_hours: tuple[float, ...]) -> float:
    """The runtime limit a user declares for a run that needs ``needed`` seconds: ``factor``
    times that, rounded up to the first of ``round_hours`` (then to whole days)."""
    want = needed * factor
    for hours in sorted(round_hours):
        if hours * HOUR >= want:
            return hours * HOUR
    return math.ceil(want / DAY) * DAY


def with_declared_limits(jobs: list[SimJob], config: dict[str, Any], seed: int) -> list[SimJob]:
    """Each finite job with the limit its owner would declare (``[runtime_estimates]``); a
    generator of its own, so the jobs drawn are the same whatever the runtimes."""
    cfg = config.get("runtime_estimates", {})
    low, high = (float(x) for x in cfg.get("overestimate", [1.0, 4.0]))
    rounds = tuple(float(h) for h in cfg.get("round_hours", [1, 2, 4, 8, 12, 24, 48, 72, 168]))
    rng = random.Random(f"runtime-estimates-{seed}")
    out = []
    for job in jobs:
        factor = math.exp(rng.uniform(math.log(low), math.log(high)))
        if job.duration is not None:
            limit = declared_limit(job.duration + job.restart_cost, factor, rounds)
            job = replace(job, runtime_limit=limit)
        out.append(job)
    return out


def llm_workload(
    path: Path,
    seed: int = 42,
    *,
    jobs: int | None = None,
    gpus: int | None = None,
    load: float | None = None,
    failures: bool = True,
    runtimes: str = "exact",
) -> Workload:
    """Draw a workload from the TOML file at ``path``; keyword arguments override it.
    ``runtimes``: "exact" tells the scheduler each job's real run time; "declared" gives
    each job the limit its owner would declare and tells the scheduler only that."""
    if runtimes not in RUNTIMES:
        raise ValueError(f"runtimes must be one of {', '.join(RUNTIMES)}, not {runtimes!r}")
    config = load_config(path)
    cl = config["cluster"]
    wl = config["workload"]
    rng = random.Random(seed)
    per_node = int(cl.get("gpus_per_node", 8))
    total_gpus = int(gpus or cl["gpus"])
    node_count = total_gpus // per_node
    pool, model = cl.get("pool", "train"), cl.get("model", "A800")
    nodes = reference_nodes(
        node_count,
        pool=pool,
        model=model,
        devices=per_node,
        nodes_per_leaf=int(cl.get("nodes_per_leaf", 32)),
        leaves_per_su=int(cl.get("leaves_per_su", 4)),
        cpu_milli=int(cl.get("cpu_milli", 128_000)),
        memory_mib=int(cl.get("memory_mib", 1_024_000)),
    )
    capacity = node_count * per_node
    classes = job_classes(config)
    count = int(jobs or wl["jobs"])
    target = float(load if load is not None else wl.get("load", 1.0))
    drawn = [
        _job(c, f"j{i:06d}", rng, pool, model, per_node)
        for i, c in enumerate(rng.choices(classes, [c.share for c in classes], k=count))
    ]
    # Spread the arrivals so that offered GPU time = target x capacity over the window.
    # Long-running jobs count with the window itself, which depends on the rest: solve for it.
    work = sum(j.gpus * j.duration for j in drawn if j.duration is not None)
    long_gpus = sum(j.gpus for j in drawn if j.duration is None)
    window = work / max(target * capacity - long_gpus / 2, 1e-9)
    rate = count / window
    t = 0.0
    timed = []
    for j in drawn:
        t += rng.expovariate(rate)
        timed.append(_with_submit(j, t))
    if runtimes == "declared":
        timed = with_declared_limits(timed, config, seed)
    horizon = t * (1 + float(wl.get("drain_fraction", 0.25)))
    tenants = config.get("tenants", [])
    quotas = tuple(
        Quota(
            tenant=tn["name"],
            pool=pool,
            accelerator_model=model,
            guarantee=round(float(tn["guarantee"]) * capacity),
            borrow_limit=round(float(tn.get("borrow", 0.0)) * capacity),
        )
        for tn in tenants
    )
    fail: list[NodeFailure] = []
    fcfg = config.get("failures", {})
    if failures and fcfg:
        per_week = float(fcfg.get("gpu_failures_per_1000_gpus_week", 0)) * capacity / 1000
        repair = float(fcfg.get("repair_hours", 4)) * HOUR
        ft = 0.0
        while per_week > 0:
            ft += rng.expovariate(per_week / WEEK)
            if ft >= horizon:
                break
            fail.append(NodeFailure(ft, nodes[rng.randrange(node_count)].node_id, repair))
    return Workload(
        name=f"llm-{capacity}gpu-{count}jobs-load{target:g}",
        nodes=tuple(nodes),
        jobs=tuple(timed),
        quotas=quotas,
        pools=(Pool(pool),),
        failures=tuple(fail),
        horizon=horizon,
        warmup=t * float(wl.get("warmup_fraction", 0.1)),
        exact_runtimes=runtimes == "exact",
        meta={
            "seed": seed,
            "runtimes": runtimes,
            "load": target,
            "nodes_per_leaf": int(cl.get("nodes_per_leaf", 32)),
            "nodes_per_su": int(cl.get("nodes_per_leaf", 32)) * int(cl.get("leaves_per_su", 4)),
            "window_h": t / HOUR,
        },
    )


def _with_submit(job: SimJob, t: float) -> SimJob:
    return replace(job, submit=t)
