"""The Kubernetes slow-node probe runner over HTTP against kmock (official client, no mocks).

A small "kubelet" coroutine plays the nodes: it gives worker pods an IP and moves launcher
pods to the phase a test chooses; kmock serves the launchers' logs (nccl-tests output).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from apps.health.probe_kube import (
    LABEL_ROLE,
    KubernetesProbeRunner,
    ProbeConfig,
    render_probe_pods,
    render_service,
    render_ssh_secret,
    ssh_keypair,
)

from .conftest import (
    POD_RESOURCE,
    SECRET_RESOURCE,
    SERVICE_RESOURCE,
    Cluster,
    restricted_violations,
    status_body,
    validate_manifest,
)
from .test_backend_http import run

NS = "zhisuan-nodes"
FAST = ProbeConfig(deadline_s=1.5, cleanup_s=2.0, poll_s=0.02, request_timeout=(2.0, 5.0))
PAIRS = [("n0", "n1"), ("n2", "n3"), ("n4", "n5"), ("n6", "n7")]
SAMPLE = Path(__file__).resolve().parents[1] / "health" / "fixtures" / "sendrecv_perf.txt"


def nccl_log(busbw: float) -> str:
    """The sample run's text with its summary set to ``busbw``."""
    text = SAMPLE.read_text()
    return re.sub(r"# Avg bus bandwidth\s*:\s*\S+", f"# Avg bus bandwidth    : {busbw}", text)


@contextlib.asynccontextmanager
async def kubelet(cluster: Cluster, phases: Mapping[int, str]) -> AsyncIterator[None]:
    """Until the block ends: workers get an IP and run; the launcher of pair ``i`` goes to
    ``phases[i]`` (default Succeeded)."""

    async def loop() -> None:
        while True:
            for key, obj in list(cluster.kmock.objects.items()):
                if key[0].plural != "pods" or obj.deleted or obj.raw.get("status"):
                    continue
                raw = obj.raw
                if raw.get("kind") != "Pod":
                    continue
                labels = raw["metadata"].get("labels") or {}
                if labels.get(LABEL_ROLE) == "worker":
                    obj.patch({"status": {"phase": "Running", "podIP": "10.0.0.9"}})
                elif labels.get(LABEL_ROLE) == "launcher":
                    pair = int(labels["zhisuan.io/probe-pair"])
                    obj.patch({"status": {"phase": phases.get(pair, "Succeeded")}})
            await asyncio.sleep(0.01)

    task = asyncio.create_task(loop())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def serve_logs(cluster: Cluster, values: Mapping[int, str], round_no: int = 1) -> list[str]:
    """Log bodies for the round's launchers, by pair index; the names read are recorded."""
    read: list[str] = []
    for index, text in values.items():
        name = f"zs-probe-7-r{round_no}-p{index}-launcher"

        def answer(request: Any, name: str = name, text: str = text) -> bytes:
            read.append(name)
            assert request.params.get("container") == "probe"
            return text.encode()

        cluster.kmock["get", re.compile(rf".*/pods/{name}/log")] << 200 << answer
    return read


def pod_names(cluster: Cluster) -> list[str]:
    return sorted(key[2] for key in cluster.kmock.objects if key[0].plural == "pods")


def live_pods(cluster: Cluster) -> list[str]:
    return [name for name in pod_names(cluster) if cluster.has(POD_RESOURCE, NS, name)]


# -- manifests --------------------------------------------------------------------------------


def test_probe_manifests_validate_and_break_restricted_only_for_ipc_lock() -> None:
    worker, launcher = render_probe_pods(7, 2, 3, ("gpu-a", "gpu-b"), ProbeConfig())
    for manifest in (
        worker,
        launcher,
        render_service(7, ProbeConfig()),
        render_ssh_secret(7, ProbeConfig(), ssh_keypair()),
    ):
        validate_manifest(manifest)
    for pod in (worker, launcher):
        assert restricted_violations(pod["spec"]) == ["probe: adds capability IPC_LOCK"]
    assert worker["spec"]["nodeName"] == "gpu-b"
    assert launcher["spec"]["nodeName"] == "gpu-a"
    assert worker["spec"]["hostname"] == "w-r2-p3"
    assert worker["spec"]["subdomain"] == "zs-probe-7"
    env = {e["name"]: e["value"] for e in launcher["spec"]["containers"][0]["env"]}
    assert env["ZS_PROBE_PEER"] == "w-r2-p3.zs-probe-7.zhisuan-nodes.svc"
    assert "sendrecv_perf -b 1G -e 1G -g 8" in launcher["spec"]["containers"][0]["args"][0]
    limits = worker["spec"]["containers"][0]["resources"]["limits"]
    assert limits == {"nvidia.com/gpu": "8", "rdma/hca": "4"}


def test_the_service_selects_only_the_runs_workers() -> None:
    service = render_service(7, ProbeConfig())
    worker, launcher = render_probe_pods(7, 1, 0, ("a", "b"), ProbeConfig())
    selector = service["spec"]["selector"].items()
    assert selector <= worker["metadata"]["labels"].items()
    assert not selector <= launcher["metadata"]["labels"].items()


# -- rounds -----------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_a_round_of_four_pairs_with_one_hanging(cluster: Cluster) -> None:
    read = serve_logs(cluster, {0: nccl_log(181.5), 1: nccl_log(120.25), 2: nccl_log(179.0)})
    runner = KubernetesProbeRunner(cluster.api_client, 7, FAST)
    async with kubelet(cluster, {3: "Running"}):  # pair 3 never finishes
        result = await run(runner.run_round, PAIRS)

    assert result == {("n0", "n1"): 181.5, ("n2", "n3"): 120.25, ("n4", "n5"): 179.0}
    assert sorted(read) == [f"zs-probe-7-r1-p{i}-launcher" for i in range(3)]
    assert any("p3-launcher: Running at the deadline" in f for f in runner.failures)
    # Eight pods were created, each valid and pinned to its node, and all are gone again.
    assert len(pod_names(cluster)) == 8
    for name in pod_names(cluster):
        pod = cluster.kmock.objects[POD_RESOURCE, NS, name].history[0].raw
        validate_manifest({k: v for k, v in pod.items() if k != "status"})
    assert live_pods(cluster) == []
    assert cluster.has(SERVICE_RESOURCE, NS, "zs-probe-7")
    assert cluster.has(SECRET_RESOURCE, NS, "zs-probe-7-ssh")

    await run(runner.close)
    assert not cluster.has(SERVICE_RESOURCE, NS, "zs-probe-7")
    assert not cluster.has(SECRET_RESOURCE, NS, "zs-probe-7-ssh")


@pytest.mark.asyncio
async def test_failed_launchers_and_bad_logs_are_failed_probes(cluster: Cluster) -> None:
    broken = nccl_log(150.0).replace(
        "# Out of bounds values : 0 OK", "# Out of bounds values : 3 FAILED"
    )
    serve_logs(cluster, {0: nccl_log(180.0), 2: broken, 3: "mpirun: connection refused\n"})
    runner = KubernetesProbeRunner(cluster.api_client, 7, FAST)
    async with kubelet(cluster, {1: "Failed"}):
        result = await run(runner.run_round, PAIRS)
    assert result == {("n0", "n1"): 180.0}
    assert live_pods(cluster) == []


@pytest.mark.asyncio
async def test_a_leftover_pod_is_replaced_and_api_errors_fail_only_their_pair(
    cluster: Cluster,
) -> None:
    # A retried task left pair 0's worker behind: create answers 409, the runner replaces it.
    worker, _ = render_probe_pods(7, 1, 0, PAIRS[0], FAST)
    cluster.seed(POD_RESOURCE, NS, {**worker, "status": {"phase": "Running"}})
    pods = cluster.kmock.resource("", "v1", "pods")
    # The API server fails pair 1's launcher create, the first status lists and pair 2's log.

    def launcher_1(request: Any) -> bool:
        return bool(request.data.get("metadata", {}).get("name") == "zs-probe-7-r1-p1-launcher")

    (
        cluster.kmock["create", pods, launcher_1]
        << 503
        << status_body(503, "ServiceUnavailable", "etcd leader lost")
    )
    cluster.kmock["list", pods][:2] << 500 << status_body(500, "InternalError", "boom")
    (
        cluster.kmock["get", re.compile(r".*/pods/zs-probe-7-r1-p2-launcher/log")]
        << 502
        << status_body(502, "BadGateway", "kubelet unreachable")
    )
    serve_logs(cluster, {0: nccl_log(182.0), 3: nccl_log(183.0)})
    runner = KubernetesProbeRunner(cluster.api_client, 7, FAST)
    async with kubelet(cluster, {}):
        result = await run(runner.run_round, PAIRS)

    assert result == {("n0", "n1"): 182.0, ("n6", "n7"): 183.0}
    assert any("p1-launcher" in f and "503" in f for f in runner.failures)
    assert any("p2-launcher" in f and "502" in f for f in runner.failures)
    assert live_pods(cluster) == []  # pair 1's worker too, though its launcher never existed
    conflicts = [
        r for r in cluster.kmock if r.method == "DELETE" and r.url.path.endswith("-r1-p0-worker")
    ]
    assert len(conflicts) == 2  # the leftover, then the round's own pod


@pytest.mark.asyncio
async def test_rounds_number_their_pods_and_close_sweeps_leftovers(cluster: Cluster) -> None:
    serve_logs(cluster, {0: nccl_log(180.0)}, round_no=1)
    serve_logs(cluster, {0: nccl_log(90.0)}, round_no=2)
    runner = KubernetesProbeRunner(cluster.api_client, 7, FAST)
    async with kubelet(cluster, {}):
        first = await run(runner.run_round, [("a", "b")])
        second = await run(runner.run_round, [("a", "c")])
    assert first == {("a", "b"): 180.0}
    assert second == {("a", "c"): 90.0}
    # A pod a failed delete left behind is removed by close().
    stray, _ = render_probe_pods(7, 2, 5, ("x", "y"), FAST)
    cluster.seed(POD_RESOURCE, NS, stray)
    await run(runner.close)
    assert live_pods(cluster) == []


def test_the_example_file_is_what_the_runner_renders() -> None:
    path = Path(__file__).resolve().parents[2] / "platform" / "agent" / "probe-pods.example.yaml"
    docs = [doc for doc in yaml.safe_load_all(path.read_text()) if doc]
    worker, launcher = render_probe_pods(1, 1, 0, ("gpu-a-001", "gpu-a-002"), ProbeConfig())
    assert docs == [render_service(1, ProbeConfig()), worker, launcher]
    for doc in docs:
        validate_manifest(doc)
