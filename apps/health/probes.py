"""Slow-node probe runs over a pool. The runner is an interface (``slownode.ProbeRunner``),
chosen by the pool's cluster kind: the simulated one models per-link bandwidth from node
labels (``zhisuan.io/sim-speed``, 1.0 = healthy); on Kubernetes, ``probe_kube`` runs
nccl-tests between each pair's nodes as pods and reads the bus bandwidth from their logs
(see docs/health.md)."""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterator

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.accounts.models import User
from apps.clusters.backends.base import BackendError, PermanentError
from apps.clusters.models import ClusterKind, Node, ResourcePool
from apps.health import services
from apps.health.models import ProbeRun, ProbeRunState
from apps.health.slownode import ProbeRunner, SimulatedProbeRunner, locate_slow_nodes

SPEED_LABEL = "zhisuan.io/sim-speed"


def simulated_runner(nodes: list[Node], seed: int | None = None) -> SimulatedProbeRunner:
    speed = {n.name: float(n.labels.get(SPEED_LABEL, 1.0)) for n in nodes}
    return SimulatedProbeRunner(speed=speed, rng=random.Random(seed))


@contextlib.contextmanager
def runner_for(run: ProbeRun, nodes: list[Node], seed: int | None) -> Iterator[ProbeRunner]:
    """The runner for the pool's cluster kind; a Kubernetes runner's objects are removed at
    the end, whatever happened."""
    if run.pool.cluster.kind != ClusterKind.KUBERNETES:
        yield simulated_runner(nodes, seed)
        return
    from apps.clusters.backends.kubernetes.backend import api_client_from_environment
    from apps.health.probe_kube import KubernetesProbeRunner, config_from

    config = config_from(
        {k: getattr(settings, k) for k in dir(settings) if k.startswith("HEALTH_PROBE_")},
        gpus=min((n.accelerator_count for n in nodes), default=0),
        rdma_nics=min((n.rdma_nics for n in nodes), default=0),
    )
    try:
        api_client = api_client_from_environment()
    except Exception as exc:  # no service account, no kubeconfig: a failed run, not a crash
        raise PermanentError(f"no Kubernetes client: {exc}") from exc
    try:
        with KubernetesProbeRunner(api_client, run.pk, config) as runner:
            yield runner
    finally:
        api_client.close()


class ProbeRunBusyError(Exception):
    """The pool already has a probe run waiting or running."""


@transaction.atomic
def request_probe_run(*, pool: ResourcePool, actor: User) -> ProbeRun:
    """Start a run, one per pool at a time: two runs would pin probe pods to the same GPUs
    and spoil each other's bandwidths (and a double click would start two)."""
    ResourcePool.objects.select_for_update().filter(pk=pool.pk).first()  # serialise requests
    busy = (
        ProbeRun.objects.filter(pool=pool, state__in=(ProbeRunState.PENDING, ProbeRunState.RUNNING))
        .order_by("id")
        .first()
    )
    if busy is not None:
        raise ProbeRunBusyError(
            _("Pool {pool} already has probe run {run} {state}: wait for it to end").format(
                pool=pool.name, run=busy.pk, state=busy.state
            )
        )
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
    kind = "kubernetes" if run.pool.cluster.kind == ClusterKind.KUBERNETES else "simulated"
    ProbeRun.objects.filter(pk=run.pk).update(
        state=ProbeRunState.RUNNING, nodes=len(nodes), runner=kind
    )
    failures: list[str] = []
    try:
        with contextlib.ExitStack() as stack:
            chosen = runner or stack.enter_context(runner_for(run, nodes, seed))
            search = locate_slow_nodes([n.name for n in nodes], chosen, rng=random.Random(seed))
            failures = list(getattr(chosen, "failures", []))
    except BackendError as exc:  # the run's own objects could not be set up: nothing measured
        ProbeRun.objects.filter(pk=run.pk).update(
            state=ProbeRunState.FAILED, message=str(exc)[:500], finished_at=timezone.now()
        )
        run.refresh_from_db()
        return run
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
        if failures:
            run.message += f"; {len(failures)} failed probe(s), first: {failures[0]}"
        run.message = run.message[:500]
        run.finished_at = timezone.now()
        run.save()
    return run
