"""Probe runs pick their runner from the cluster kind; failed probes never break a search."""

from __future__ import annotations

import random
import socket
from collections.abc import Sequence
from pathlib import Path

import pytest
from kubernetes.config import kube_config

from apps.clusters.models import ClusterKind
from apps.health import probes
from apps.health.models import ProbeRun
from apps.health.probe_kube import KubernetesProbeRunner
from apps.health.slownode import Pair, SimulatedProbeRunner, locate_slow_nodes
from tests.factories import make_cluster, make_node, make_pool


class DroppingRunner:
    """The simulated model, except that probes touching ``lost`` never finish."""

    def __init__(self, speed: dict[str, float], lost: set[str]) -> None:
        self.model = SimulatedProbeRunner(speed=speed, rng=random.Random(1), outlier_rate=0.0)
        self.lost = lost

    def run_round(self, pairs: Sequence[Pair]) -> dict[Pair, float]:
        measured = self.model.run_round(pairs)
        return {p: v for p, v in measured.items() if not set(p) & self.lost}


def test_a_node_whose_probes_fail_is_unresolved_not_slow_and_not_a_crash() -> None:
    nodes = [f"n{i}" for i in range(16)]
    speed = dict.fromkeys(nodes, 1.0) | {"n5": 0.7}
    search = locate_slow_nodes(nodes, DroppingRunner(speed, {"n9"}), rng=random.Random(2))
    assert search.slow == ["n5"]
    assert search.unresolved == ["n9"]
    screen = search.rounds[0].as_dict()
    assert any(None in pair for pair in screen["pairs"])  # type: ignore[attr-defined]


def test_no_finished_probe_at_all_leaves_everyone_unresolved() -> None:
    nodes = ["a", "b", "c", "d"]
    search = locate_slow_nodes(nodes, DroppingRunner({}, set(nodes)), rng=random.Random(0))
    assert search.slow == [] and search.unresolved == nodes


@pytest.fixture
def unreachable_kubeconfig(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    config = tmp_path / "kubeconfig"
    config.write_text(
        f"""apiVersion: v1
kind: Config
clusters: [{{name: c, cluster: {{server: "http://127.0.0.1:{port}"}}}}]
users: [{{name: u, user: {{token: t}}}}]
contexts: [{{name: x, context: {{cluster: c, user: u}}}}]
current-context: x
"""
    )
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    # The client reads $KUBECONFIG at import: point its default location at the file.
    monkeypatch.setattr(kube_config, "KUBE_CONFIG_DEFAULT_LOCATION", str(config))


@pytest.mark.django_db
def test_a_kubernetes_pool_gets_the_kubernetes_runner(unreachable_kubeconfig: None) -> None:
    cluster = make_cluster()
    cluster.kind = ClusterKind.KUBERNETES
    cluster.save()
    pool = make_pool(cluster=cluster)
    nodes = [make_node(pool=pool, rdma_nics=2) for _ in range(2)]
    run = ProbeRun.objects.create(pool=pool)
    with probes.runner_for(run, nodes, seed=0) as runner:
        assert isinstance(runner, KubernetesProbeRunner)
        assert runner.run_id == run.pk
        assert (runner.config.gpus, runner.config.rdma_nics) == (8, 2)
    # The API server cannot be reached: the run fails with the reason, it does not hang.
    run = probes.execute(run.pk)
    assert run.state == "failed" and run.runner == "kubernetes"
    assert "create secret" in run.message


@pytest.mark.django_db
def test_a_kubernetes_pool_without_client_configuration_fails_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setattr(kube_config, "KUBE_CONFIG_DEFAULT_LOCATION", str(tmp_path / "none"))
    cluster = make_cluster()
    cluster.kind = ClusterKind.KUBERNETES
    cluster.save()
    pool = make_pool(cluster=cluster)
    make_node(pool=pool)
    make_node(pool=pool)
    run = probes.execute(ProbeRun.objects.create(pool=pool).pk)
    assert run.state == "failed" and "no Kubernetes client" in run.message


@pytest.mark.django_db
def test_a_simulated_pool_gets_the_simulated_runner() -> None:
    pool = make_pool()
    nodes = [make_node(pool=pool) for _ in range(2)]
    run = ProbeRun.objects.create(pool=pool)
    with probes.runner_for(run, nodes, seed=0) as runner:
        assert isinstance(runner, SimulatedProbeRunner)
