"""Output of simulated workloads: plausible, deterministic lines, labelled as simulated.

The simulated cluster runs no containers, so there is no real output to read. These lines
follow the workload's simulated life (image pull, start, progress, exit) so the log views and
the log pipeline (collector, storage, API, CLI) are exercised end to end; every line says it
comes from the simulator. Pure: the same workload and times give the same lines.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from .simcurves import STEPS_PER_S, env_learning_rate, training_point
from .spec import LogLine, WorkloadSpec

PROGRESS_EVERY_S = 10.0  # one progress line per replica every ten (cluster) seconds


def _replicas(spec: WorkloadSpec) -> list[tuple[str, str]]:
    """(pod name, image) of every replica, in the order Volcano numbers them."""
    return [
        (f"{spec.object_name}-{group.name}-{i}", group.image)
        for group in spec.replica_groups
        for i in range(group.replicas)
    ]


def _progress(spec: WorkloadSpec, rank: int, n: int, elapsed: float) -> str:
    if spec.kind == "notebook":
        return f"[I] kernel activity: {n % 3} busy kernel(s), {elapsed:.0f}s since start"
    if spec.kind == "inference":
        rate = 20 + 5 * math.sin(n / 6 + rank)
        return f"INFO serving: {rate:.1f} req/s, p95 {80 + 10 * (n % 4)} ms"
    # The same curve the platform stores for the job (simcurves): the log and the chart agree.
    step = int(elapsed * STEPS_PER_S)
    devices = sum(g.replicas * g.accelerators for g in spec.replica_groups)
    env = spec.replica_groups[0].env if spec.replica_groups else {}
    point = training_point(spec.job_id, devices, step, env_learning_rate(env))
    tokens = point["perf/tokens_per_s"] / max(1, spec.gang_size)
    return f"step {step} loss {point['loss']:.4f} tokens/s {tokens:.0f} rank {rank}"


def _start_line(spec: WorkloadSpec) -> str:
    if spec.kind == "notebook":
        return "[I] Jupyter Server is running (simulated; reached through the platform)"
    if spec.kind == "inference":
        return "INFO model loaded; listening on :8000"
    return f"starting training (world size {spec.gang_size})"


def _lines(
    spec: WorkloadSpec,
    created_at: float,
    startup_s: float,
    end_at: float | None,
    exit_code: int,
    now: float,
    since: float | None,
    limit: int,
) -> Iterator[tuple[float, int, str, str]]:
    """(time, order, replica, text) of everything written up to ``now``, unsorted."""
    started = created_at + startup_s
    stop = now if end_at is None else min(now, end_at)
    for rank, (pod, image) in enumerate(_replicas(spec)):
        yield created_at, 0, pod, f"[simulated] pulling image {image}"
        if started > now:
            continue
        yield started, 1, pod, f"[simulated] {_start_line(spec)}"
        # only the progress lines that can be returned: after ``since``, newest ``limit``
        last = math.floor((stop - started) / PROGRESS_EVERY_S)
        first = max(1, last - limit + 1)
        if since is not None:
            first = max(first, math.floor((since - started) / PROGRESS_EVERY_S) + 1)
        for n in range(first, last + 1):
            t = started + n * PROGRESS_EVERY_S
            yield t, 2, pod, f"[simulated] {_progress(spec, rank, n, t - started)}"
        if end_at is not None and end_at <= now:
            yield end_at, 3, pod, f"[simulated] process exited with code {exit_code}"


def simulated_logs(
    spec: WorkloadSpec,
    *,
    created_at: float,
    startup_s: float,
    end_at: float | None,
    exit_code: int,
    now: float,
    since: float | None,
    limit: int,
) -> list[tuple[float, str, str]]:
    """(cluster time, replica, text) written after ``since`` up to ``now``, oldest first,
    the newest ``limit`` of them."""
    rows = sorted(
        (t, order, pod, text)
        for t, order, pod, text in _lines(
            spec, created_at, startup_s, end_at, exit_code, now, since, limit
        )
        if since is None or t > since
    )
    return [(t, pod, text) for t, _, pod, text in rows[-limit:]] if limit > 0 else []


__all__ = ["LogLine", "simulated_logs"]
