"""Slow-node probe runs over a pool. The runner is an interface (``slownode.ProbeRunner``):
the simulated one models per-link bandwidth from node labels (``zhisuan.io/sim-speed``, 1.0 =
healthy); on Kubernetes, a runner would start one probe pod pair per node pair from
``platform/agent/probe-pod-template.yaml`` (nccl-tests sendrecv over RDMA) and read the bus
bandwidth from their logs (see docs/health.md)."""

from __future__ import annotations

import random

from django.db import transaction
from django.utils import timezone

from apps.accounts.models import User
from apps.clusters.models import Node, ResourcePool
from apps.health import services
from apps.health.models import ProbeRun, ProbeRunState
from apps.health.slownode import ProbeRunner, SimulatedProbeRunner, locate_slow_nodes

SPEED_LABEL = "zhisuan.io/sim-speed"


def simulated_runner(nodes: list[Node], seed: int | None = None) -> SimulatedProbeRunner:
    speed = {n.name: float(n.labels.get(SPEED_LABEL, 1.0)) for n in nodes}
    return SimulatedProbeRunner(speed=speed, rng=random.Random(seed))


@transaction.atomic
def request_probe_run(*, pool: ResourcePool, actor: User) -> ProbeRun:
    run = ProbeRun.objects.create(pool=pool, requested_by=actor)

    def start() -> None:
        from apps.health.tasks import run_probe

        run_probe.delay(run.pk)

    transaction.on_commit(start)
    return run


def execute(run_id: int, runner: ProbeRunner | None = None, seed: int | None = None) -> ProbeRun:
    """Probe every schedulable node of the pool; open a ``slow_node`` fault for each found."""
    run = ProbeRun.objects.get(pk=run_id)
    if run.state in (ProbeRunState.DONE, ProbeRunState.FAILED):
        return run
    nodes = list(
        Node.objects.filter(pool=run.pool, cordoned=False, is_spare=False, accelerator_count__gt=0)
    )
    ProbeRun.objects.filter(pk=run.pk).update(state=ProbeRunState.RUNNING, nodes=len(nodes))
    search = locate_slow_nodes(
        [n.name for n in nodes], runner or simulated_runner(nodes, seed), rng=random.Random(seed)
    )
    by_name = {n.name: n for n in nodes}
    with transaction.atomic():
        for name in search.slow:
            node = Node.objects.select_for_update().get(pk=by_name[name].pk)
            services.open_fault(
                node=node,
                fault="slow_node",
                detail=f"probe run {run.pk}: bandwidth below the pool median",
            )
        run.state = ProbeRunState.DONE
        run.nodes = len(nodes)
        run.rounds = [r.as_dict() for r in search.rounds]
        run.slow_nodes = search.slow
        run.message = f"{len(search.rounds)} round(s); slow: {', '.join(search.slow) or 'none'}" + (
            f"; unresolved: {', '.join(search.unresolved)}" if search.unresolved else ""
        )
        run.finished_at = timezone.now()
        run.save()
    return run
