"""platform/k8s: valid manifests, in step with the code, and RBAC that is exactly what we use."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from apps.clusters.backends.kubernetes.manifests import render_priority_classes
from apps.clusters.backends.spec import LeafSwitch, NetworkTopology, ScalableUnit, Spine

from .conftest import (
    EVICTION_PATH,
    NETPOL_RESOURCE,
    NODE_RESOURCE,
    POD_RESOURCE,
    REPO_ROOT,
    Cluster,
    inference_spec,
    notebook_spec,
    training_spec,
    validate_manifest,
)

PLATFORM = REPO_ROOT / "platform"
K8S_DIR = PLATFORM / "k8s"
SERVICE_ACCOUNT = "system:serviceaccount:zhisuan-system:zhisuan-controller"


def _documents(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def _all_documents() -> list[tuple[str, dict[str, Any]]]:
    return [
        (f"{path.name}:{doc['kind']}:{doc['metadata']['name']}", doc)
        for path in sorted(K8S_DIR.glob("*.yaml"))
        for doc in _documents(path)
    ]


ALL_DOCUMENTS = _all_documents()


@pytest.mark.parametrize(("label", "doc"), ALL_DOCUMENTS, ids=[d[0] for d in ALL_DOCUMENTS])
def test_platform_manifest_is_valid(label: str, doc: dict[str, Any]) -> None:
    validate_manifest(doc)


def test_platform_holds_every_expected_kind() -> None:
    kinds = sorted({doc["kind"] for _, doc in ALL_DOCUMENTS})
    assert kinds == [
        "ClusterRole",
        "ClusterRoleBinding",
        "Namespace",
        "PriorityClass",
        "ServiceAccount",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
    ]


def test_platform_has_no_python_files() -> None:
    # A platform/__init__.py (or any module) would shadow the standard `platform` module.
    assert [str(p) for p in PLATFORM.rglob("*.py")] == []


def test_priority_classes_file_matches_the_renderer() -> None:
    assert _documents(K8S_DIR / "30-priorityclasses.yaml") == render_priority_classes()


def test_readme_lists_every_manifest() -> None:
    readme = (K8S_DIR / "README.md").read_text()
    for path in K8S_DIR.glob("*.yaml"):
        assert path.name in readme


def test_the_service_account_is_the_one_bound_and_policed() -> None:
    docs = {doc["kind"]: doc for _, doc in ALL_DOCUMENTS}
    account = docs["ServiceAccount"]["metadata"]
    assert f"system:serviceaccount:{account['namespace']}:{account['name']}" == SERVICE_ACCOUNT
    subject = docs["ClusterRoleBinding"]["subjects"][0]
    assert (subject["namespace"], subject["name"]) == (account["namespace"], account["name"])
    assert docs["ClusterRoleBinding"]["roleRef"]["name"] == docs["ClusterRole"]["metadata"]["name"]
    condition = docs["ValidatingAdmissionPolicy"]["spec"]["matchConditions"][0]["expression"]
    assert f"'{SERVICE_ACCOUNT}'" in condition
    binding = docs["ValidatingAdmissionPolicyBinding"]["spec"]
    assert binding["policyName"] == docs["ValidatingAdmissionPolicy"]["metadata"]["name"]


def _granted() -> set[tuple[str, str, str]]:
    role = next(doc for _, doc in ALL_DOCUMENTS if doc["kind"] == "ClusterRole")
    granted: set[tuple[str, str, str]] = set()
    for rule in role["rules"]:
        assert "*" not in rule["verbs"] and "*" not in rule["resources"]
        assert "resourceNames" not in rule
        for group in rule["apiGroups"]:
            for resource in rule["resources"]:
                for verb in rule["verbs"]:
                    granted.add((group, resource, verb))
    return granted


def _rbac_of(request: Any) -> tuple[str, str, str]:
    assert request.resource is not None, request.url
    resource = request.resource.plural
    if request.subresource:
        resource = f"{resource}/{request.subresource}"
    if request.method == "GET":
        verb = (
            "watch"
            if request.params.get("watch") == "true"
            else ("get" if request.name else "list")
        )
    else:
        verb = {"POST": "create", "PATCH": "patch", "DELETE": "delete", "PUT": "update"}[
            request.method
        ]
    return request.resource.group, resource, verb


@pytest.mark.asyncio
async def test_rbac_grants_exactly_what_the_backend_uses(cluster: Cluster) -> None:
    """Replay every backend method (first and repeated calls) and compare the requests made
    with the ClusterRole, both ways: nothing missing, nothing unused."""
    backend = cluster.backend
    cluster.seed(NODE_RESOURCE, None, {"metadata": {"name": "n1"}, "spec": {}, "status": {}})
    cluster.seed(
        POD_RESOURCE,
        "zs-acme",
        {"metadata": {"name": "p1", "namespace": "zs-acme"}, "spec": {"nodeName": "n1"}},
    )
    cluster.seed(
        POD_RESOURCE,
        "zs-acme",
        {
            "metadata": {
                "name": "zs-inf-303-5d8f9c7b6-abcde",
                "namespace": "zs-acme",
                "labels": {"zhisuan.io/job-id": "303"},
            },
            "spec": {"nodeName": "n1", "containers": [{"name": "server"}]},
        },
    )
    # A NetworkPolicy of ours that drifted: ensure_tenant patches it back.
    cluster.seed(
        NETPOL_RESOURCE,
        "zs-acme",
        {
            "metadata": {
                "name": "zs-allow-dns",
                "namespace": "zs-acme",
                "labels": {"app.kubernetes.io/managed-by": "zhisuan"},
            },
            "spec": {"podSelector": {}, "policyTypes": ["Egress"], "egress": [{}]},
        },
    )
    cluster.kmock["post", EVICTION_PATH] << 201 << (lambda request: request.data)
    topology = NetworkTopology(
        spines=(Spine("s", (ScalableUnit("u", (LeafSwitch("l1", ("n1",)),)),)),)
    )
    smaller = NetworkTopology(
        spines=(Spine("s", (ScalableUnit("u2", (LeafSwitch("l1", ("n1",)),)),)),)
    )

    def scenario() -> None:
        for _ in range(2):  # the second round takes the "already exists" paths
            backend.ensure_tenant("acme", {"nvidia.com/gpu": 8})
            backend.ensure_queue("acme-a800", {"nvidia.com/gpu": 8}, {"nvidia.com/gpu": 16})
            backend.ensure_topology(topology)
            for spec in (training_spec(), notebook_spec(), inference_spec()):
                backend.apply(spec)
        backend.ensure_tenant("acme", {"nvidia.com/gpu": 16}, allow_ipc_lock=True)  # patches
        backend.ensure_queue("acme-a800", {"nvidia.com/gpu": 4}, {"nvidia.com/gpu": 16})
        backend.ensure_topology(smaller)  # patches and prunes
        backend.list_status()
        backend.list_status("zs-acme")
        with backend.watch("", 0.3) as stream:
            list(stream)
        backend.list_nodes()
        backend.missing_priority_classes()
        backend.cordon("n1", "test")
        backend.uncordon("n1")
        backend.drain("n1")
        backend.scale(303, "acme", 2, ["n1"])  # labels the node, scales
        backend.scale(303, "acme", 1, [])  # marks the pod leaving n1, scales, unlabels
        backend.read_logs(303, "acme", "inference", since=None, limit=10)
        for job_id, kind in ((101, "training"), (202, "notebook"), (303, "inference")):
            backend.delete(job_id, "acme", kind)  # type: ignore[arg-type]
        backend.delete_notebook_home(202, "acme")

    await asyncio.to_thread(scenario)

    used = {_rbac_of(request) for request in cluster.kmock}
    granted = _granted()
    assert used - granted == set(), "requests the ClusterRole does not allow"
    assert granted - used == set(), "grants no backend method uses"


def test_admission_policy_covers_every_namespaced_kind_we_write() -> None:
    policy = next(doc for _, doc in ALL_DOCUMENTS if doc["kind"] == "ValidatingAdmissionPolicy")
    covered = {
        (group, resource)
        for rule in policy["spec"]["matchConstraints"]["resourceRules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
    }
    written = {
        (group, resource)
        for group, resource, verb in _granted()
        if verb in ("create", "patch", "delete")
        and resource not in ("pods/eviction", "nodes", "queues", "hypernodes")
    }
    assert written <= covered
    assert re.search(r"startsWith\('zs-'\)", policy["spec"]["validations"][0]["expression"])
