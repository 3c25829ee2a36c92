"""platform/agent: valid manifests, and a Role that grants exactly what the probe runner and
the token distribution use in zhisuan-nodes (replayed against kmock, compared both ways)."""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Any

import pytest
import yaml

from apps.health import token_distribution as dist
from apps.health.probe_kube import KubernetesProbeRunner

from .conftest import REPO_ROOT, Cluster, validate_manifest
from .test_backend_http import run
from .test_node_tokens_http import _pool_nodes
from .test_node_tokens_http import run as run_db
from .test_platform_manifests import _rbac_of
from .test_probe_runner_http import FAST, kubelet, nccl_log, serve_logs

AGENT_DIR = REPO_ROOT / "platform" / "agent"
NAMESPACE = "zhisuan-nodes"


def _docs(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


@pytest.mark.parametrize("name", ["namespace.yaml", "rbac.yaml", "daemonset.yaml"])
def test_agent_manifests_are_valid(name: str) -> None:
    for doc in _docs(AGENT_DIR / name):
        validate_manifest(doc)


def test_everything_node_level_lives_in_one_privileged_namespace() -> None:
    [namespace] = _docs(AGENT_DIR / "namespace.yaml")
    labels = namespace["metadata"]["labels"]
    assert namespace["metadata"]["name"] == NAMESPACE
    assert labels["pod-security.kubernetes.io/enforce"] == "privileged"
    assert labels["pod-security.kubernetes.io/audit"] == "restricted"
    assert labels["pod-security.kubernetes.io/warn"] == "restricted"
    assert dist.NAMESPACE == NAMESPACE == FAST.namespace
    [daemonset] = _docs(AGENT_DIR / "daemonset.yaml")
    assert daemonset["metadata"]["namespace"] == NAMESPACE


def _role_grants() -> set[tuple[str, str, str]]:
    role = next(d for d in _docs(AGENT_DIR / "rbac.yaml") if d["kind"] == "Role")
    assert role["metadata"]["namespace"] == NAMESPACE
    return {
        (group, resource, verb)
        for rule in role["rules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_the_role_grants_exactly_what_probes_and_token_distribution_use(
    cluster: Cluster,
) -> None:
    serve_logs(cluster, {0: nccl_log(180.0)})
    runner = KubernetesProbeRunner(cluster.api_client, 7, FAST)
    async with kubelet(cluster, {}):
        await run(runner.run_round, [("a", "b")])
    await run(runner.close)
    store = dist.SecretStore(cluster.api_client)
    nodes = await run_db(_pool_nodes, 2)
    await run_db(dist.distribute, store, nodes[:1])
    await run_db(dist.distribute, store, nodes)  # the second run patches

    assert {r.namespace for r in cluster.kmock} == {NAMESPACE}
    used = {_rbac_of(r) for r in cluster.kmock}
    granted = _role_grants()
    assert used - granted == set(), "requests the Role does not allow"
    assert granted - used == set(), "grants nothing uses"


def test_the_agent_reads_the_hosts_own_files_and_disks() -> None:
    """Every host path the agent reads under ``--root`` (its /proc, /sys, /dev/kmsg and each
    ``--disk``) is that same path of the host, through a read-only hostPath mount: a disk
    under ``--root`` that no mount covers is the container's own layer, whose free space says
    nothing about the host's."""
    [daemonset] = _docs(AGENT_DIR / "daemonset.yaml")
    pod = daemonset["spec"]["template"]["spec"]
    [agent] = pod["containers"]
    args = agent["args"]
    root = PurePosixPath(args[args.index("--root") + 1])
    disks = [args[i + 1] for i, a in enumerate(args) if a == "--disk"]
    host_paths = {v["name"]: v["hostPath"]["path"] for v in pod["volumes"] if "hostPath" in v}
    mounts = [m for m in agent["volumeMounts"] if m["name"] in host_paths]
    assert all(m.get("readOnly") for m in mounts)
    assert disks
    for wanted in ["/proc", "/sys", "/dev/kmsg", *disks]:
        inside = root / wanted.lstrip("/")
        covering = [m for m in mounts if inside.is_relative_to(m["mountPath"])]
        assert covering, wanted
        mount = max(covering, key=lambda m: len(m["mountPath"]))
        on_host = PurePosixPath(host_paths[mount["name"]]) / inside.relative_to(mount["mountPath"])
        assert on_host == PurePosixPath(wanted), (wanted, mount)
