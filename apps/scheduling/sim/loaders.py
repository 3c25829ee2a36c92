"""Loaders of the public Alibaba traces in ``<repo>/../shared/traces`` (read-only inputs).

* ``openb`` (cluster-trace-gpu-v2023; Weng et al., "Beware of Fragmentation", USENIX ATC
  2023): 1,213 GPU nodes and 8,152 tasks with fractional ``gpu_milli``, ``gpu_spec`` model
  constraints, 0..8 GPUs, CPU and memory. ``openb_workload`` rebuilds the paper's
  experiment: the tasks in a seeded random order, inflated by tasks sampled (with
  replacement) from the trace until the arrived GPU demand reaches ``tune`` x capacity, one
  scheduling attempt each, nothing ever leaves.
* ``spot`` (cluster-trace-v2026-spot-gpu; GFS, ASPLOS 2026): the shape of a 4,278-node
  cluster of six GPU models, laid out on the reference topology (32 nodes per leaf, 4 leaves
  per Scalable Unit, one Scalable Unit never mixes models).
"""

from __future__ import annotations

import csv
import os
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from apps.scheduling.core import FULL_DEVICE_MILLI, Node, Pool, Quota, ReplicaGroup

from .workload import SimJob, Workload

REPO_ROOT = Path(__file__).resolve().parents[3]
OPENB = "alibaba-openb-2023"
SPOT = "alibaba-spot-gpu-2026"


def traces_dir() -> Path:
    """``$ZHISUAN_TRACES`` if set, else ``shared/traces`` beside the repository."""
    env = os.environ.get("ZHISUAN_TRACES")
    return Path(env) if env else REPO_ROOT.parent / "shared" / "traces"


def _rows(path: Path) -> Iterator[dict[str, str]]:
    with path.open(newline="") as fh:
        yield from csv.DictReader(fh)


# --------------------------------------------------------------------------- openb


def openb_nodes(path: Path | None = None, *, pool: str = "openb") -> list[Node]:
    """GPU nodes of the openb cluster (no network topology is published: none is set)."""
    path = path or traces_dir() / OPENB / "openb_node_list_gpu_node.csv"
    nodes = []
    for row in _rows(path):
        gpus = int(row["gpu"])
        nodes.append(
            Node(
                node_id=row["sn"],
                pool=pool,
                accelerator_model=row["model"] if gpus else "",
                accelerator_vendor="nvidia" if gpus else "",
                accelerator_count=gpus,
                cpu_milli=int(row["cpu_milli"]),
                memory_mib=int(row["memory_mib"]),
            )
        )
    return nodes


@dataclass(frozen=True, slots=True)
class OpenbTask:
    name: str
    cpu_milli: int
    memory_mib: int
    num_gpu: int
    gpu_milli: int
    gpu_spec: frozenset[str]
    creation_time: int
    deletion_time: int | None

    @property
    def milli(self) -> int:
        """GPU demand in milli-GPUs: a share of one GPU, or whole GPUs."""
        if self.num_gpu == 1 and 0 < self.gpu_milli < FULL_DEVICE_MILLI:
            return self.gpu_milli
        return self.num_gpu * FULL_DEVICE_MILLI

    def group(self) -> ReplicaGroup:
        share = self.num_gpu == 1 and 0 < self.gpu_milli < FULL_DEVICE_MILLI
        return ReplicaGroup(
            name="task",
            replicas=1,
            accelerators=0 if share else self.num_gpu,
            accelerator_milli=self.gpu_milli if share else 0,
            models=self.gpu_spec,
            cpu_milli=self.cpu_milli,
            memory_mib=self.memory_mib,
        )


def _int(value: str | None) -> int | None:
    if value is None or value.strip() == "":
        return None
    return int(float(value))


def openb_tasks(path: Path | None = None) -> list[OpenbTask]:
    path = path or traces_dir() / OPENB / "openb_pod_list_default.csv"
    tasks = []
    for row in _rows(path):
        spec = row.get("gpu_spec") or ""
        tasks.append(
            OpenbTask(
                name=row["name"],
                cpu_milli=int(row["cpu_milli"]),
                memory_mib=int(row["memory_mib"]),
                num_gpu=int(row["num_gpu"]),
                gpu_milli=int(row["gpu_milli"]),
                gpu_spec=frozenset(m for m in spec.split("|") if m),
                creation_time=_int(row.get("creation_time")) or 0,
                deletion_time=_int(row.get("deletion_time")),
            )
        )
    return tasks


def inflate(
    tasks: list[OpenbTask], capacity_milli: int, tune: float, rng: random.Random
) -> list[OpenbTask]:
    """The experiment's task sequence: the trace shuffled, then tasks sampled with
    replacement from it appended until the GPU demand would pass ``tune`` x capacity."""
    ordered = sorted(tasks, key=lambda t: t.name)
    rng.shuffle(ordered)
    total = sum(t.milli for t in ordered)
    target = tune * capacity_milli
    base = sorted(tasks, key=lambda t: t.name)
    while True:
        pick = base[rng.randrange(len(base))]
        if total + pick.milli > target:
            break
        ordered.append(pick)
        total += pick.milli
    return ordered


def openb_workload(
    seed: int = 42,
    *,
    tune: float = 1.3,
    pods: str = "openb_pod_list_default.csv",
    nodes_file: str = "openb_node_list_gpu_node.csv",
    base: Path | None = None,
    limit: int | None = None,
) -> Workload:
    """The "Beware of Fragmentation" experiment for one seed (see the module docstring).

    The node order is shuffled with the seed too: the paper's simulator breaks score ties at
    random, the core breaks them by node order. ``limit`` keeps only the first tasks.
    """
    base = base or traces_dir() / OPENB
    rng = random.Random(seed)
    nodes = openb_nodes(base / nodes_file)
    rng.shuffle(nodes)
    capacity = sum(n.accelerator_count for n in nodes) * FULL_DEVICE_MILLI
    tasks = openb_tasks(base / pods)
    sequence = inflate(tasks, capacity, tune, rng) if tune > 0 else tasks
    if limit is not None:
        sequence = sequence[:limit]
    jobs = tuple(
        SimJob(
            job_id=f"{t.name}#{i}",
            submit=float(i),
            tenant="openb",
            pool="openb",
            priority=3,
            groups=(t.group(),),
            kind="task",
        )
        for i, t in enumerate(sequence)
    )
    per_model: dict[str, int] = {}
    for n in nodes:
        if n.accelerator_model:
            per_model[n.accelerator_model] = (
                per_model.get(n.accelerator_model, 0) + n.accelerator_count
            )
    quotas = tuple(Quota("openb", "openb", m, g) for m, g in sorted(per_model.items()))
    return Workload(
        name=f"openb-{Path(pods).stem.removeprefix('openb_pod_list_')}-x{tune:g}",
        nodes=tuple(nodes),
        jobs=jobs,
        quotas=quotas,
        pools=(Pool("openb"),),
        one_shot=True,
        meta={"seed": seed, "tune": tune, "tasks": len(jobs)},
    )


# --------------------------------------------------------------------------- spot


def spot_nodes(
    path: Path | None = None,
    *,
    pool: str = "spot",
    nodes_per_leaf: int = 32,
    leaves_per_su: int = 4,
    memory_per_cpu_mib: int = 8192,
) -> list[Node]:
    """The 4,278 nodes of the spot GPU cluster on the reference topology.

    The trace gives model, GPU count and CPU count per node; memory is not published and is
    set per CPU. Nodes are grouped by model, then by GPU count, into leaves and SUs.
    """
    path = path or traces_dir() / SPOT / "node_info_df.csv"
    rows = list(_rows(path))
    rows.sort(key=lambda r: (r["gpu_model"], -int(r["gpu_capacity_num"]), int(r["node_name"])))
    nodes: list[Node] = []
    leaf = -1
    in_leaf = nodes_per_leaf
    model = None
    for row in rows:
        if row["gpu_model"] != model or in_leaf >= nodes_per_leaf:
            if row["gpu_model"] != model:
                # a new model starts a new Scalable Unit
                leaf = (leaf // leaves_per_su + 1) * leaves_per_su
            else:
                leaf += 1
            model = row["gpu_model"]
            in_leaf = 0
        in_leaf += 1
        cpus = int(row["cpu_num"])
        nodes.append(
            Node(
                node_id=f"spot-{int(row['node_name']):05d}",
                pool=pool,
                accelerator_model=row["gpu_model"],
                accelerator_vendor="nvidia",
                accelerator_count=int(row["gpu_capacity_num"]),
                cpu_milli=cpus * 1000,
                memory_mib=cpus * memory_per_cpu_mib,
                scalable_unit=f"su{leaf // leaves_per_su}",
                leaf_switch=f"leaf{leaf}",
                spine="spine-0",
            )
        )
    return nodes
