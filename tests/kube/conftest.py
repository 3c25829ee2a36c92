"""Fixtures for the Kubernetes backend: schema validators, sample specs, and an HTTP emulator.

Schemas: core kinds through ``kubernetes_validate`` (strict), Volcano kinds through the CRDs in
``<repo root>/../shared/schemas/volcano`` made strict (``additionalProperties: false`` wherever
``properties`` is given without ``x-kubernetes-preserve-unknown-fields``), so that a misspelt
field fails instead of being pruned silently.

HTTP: kmock's ``KubernetesEmulator`` served on a local port and the official client pointed at
it. The sync client runs in a worker thread (``asyncio.to_thread``) while the emulator serves on
the test's event loop. Two emulator gaps are bridged here, in the test harness only:
create answers 201 (the client decodes only 201), and ``/api/v1/namespaces[/name]`` is parsed as
the cluster-scoped Namespace resource (kmock 0.8 fails to parse that path).
"""

from __future__ import annotations

import copy
import functools
import re
import warnings
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import pytest_asyncio
import yaml
from kmock._internal import parsing as kmock_parsing
from kubernetes import client as k8s

from apps.clusters.backends.kubernetes.backend import KubernetesBackend
from apps.clusters.backends.spec import (
    InferenceSpec,
    NotebookSpec,
    ReplicaGroup,
    VolumeMount,
    WorkloadSpec,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED = REPO_ROOT.parent / "shared"
VOLCANO_SCHEMA_DIR = SHARED / "schemas" / "volcano"
KUBERNETES_VERSION = "1.31"

VOLCANO_CRDS: Mapping[tuple[str, str], str] = {
    ("batch.volcano.sh/v1alpha1", "Job"): "batch.volcano.sh_jobs.yaml",
    ("scheduling.volcano.sh/v1beta1", "Queue"): "scheduling.volcano.sh_queues.yaml",
    ("scheduling.volcano.sh/v1beta1", "PodGroup"): "scheduling.volcano.sh_podgroups.yaml",
    ("topology.volcano.sh/v1alpha1", "HyperNode"): "topology.volcano.sh_hypernodes.yaml",
}

# (group/version, plural, kind, namespaced) of the Volcano resources the emulator serves.
VOLCANO_RESOURCES = (
    ("batch.volcano.sh/v1alpha1", "jobs", "Job", True),
    ("scheduling.volcano.sh/v1beta1", "queues", "Queue", False),
    ("topology.volcano.sh/v1alpha1", "hypernodes", "HyperNode", False),
)


# ---------------------------------------------------------------------------------------------
# Schemas


def strictify(schema: Any) -> Any:
    """A copy of an OpenAPI v3 schema in which unknown fields are errors."""
    result = copy.deepcopy(schema)

    def visit(node: Any) -> None:
        if isinstance(node, dict):
            if (
                "properties" in node
                and not node.get("x-kubernetes-preserve-unknown-fields")
                and "additionalProperties" not in node
            ):
                node["additionalProperties"] = False
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for value in node:
                visit(value)

    visit(result)
    return result


@functools.cache
def volcano_validator(api_version: str, kind: str) -> jsonschema.Draft7Validator:
    path = VOLCANO_SCHEMA_DIR / VOLCANO_CRDS[api_version, kind]
    crd = yaml.safe_load(path.read_text())
    version = api_version.rpartition("/")[2]
    assert crd["spec"]["names"]["kind"] == kind
    for entry in crd["spec"]["versions"]:
        if entry["name"] == version:
            schema = strictify(entry["schema"]["openAPIV3Schema"])
            jsonschema.Draft7Validator.check_schema(schema)
            return jsonschema.Draft7Validator(schema)
    raise AssertionError(f"{path.name} has no version {version}")


def validate_manifest(obj: Mapping[str, Any]) -> None:
    """Raise if ``obj`` does not match its schema (Volcano CRD or core Kubernetes)."""
    key = (obj["apiVersion"], obj["kind"])
    if key in VOLCANO_CRDS:
        volcano_validator(*key).validate(obj)
        if obj["kind"] == "Job":
            # The CRD leaves template metadata open; check each task's pod template in full.
            for task in obj["spec"]["tasks"]:
                kubernetes_validate.validate(
                    {
                        "apiVersion": "v1",
                        "kind": "PodTemplate",
                        "metadata": {"name": task["name"]},
                        "template": task["template"],
                    },
                    KUBERNETES_VERSION,
                    strict=True,
                )
    else:
        kubernetes_validate.validate(dict(obj), KUBERNETES_VERSION, strict=True)


# Pod Security Standards, "restricted" profile (the rules that apply to what we render).
_ALLOWED_VOLUME_TYPES = {
    "configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim",
    "projected", "secret",
}  # fmt: skip


def restricted_violations(pod_spec: Mapping[str, Any]) -> list[str]:
    """Every way ``pod_spec`` breaks Pod Security "restricted"; empty when it complies."""
    problems: list[str] = []
    for host in ("hostNetwork", "hostPID", "hostIPC"):
        if pod_spec.get(host):
            problems.append(host)
    for volume in pod_spec.get("volumes", []):
        types = set(volume) - {"name"}
        if not types <= _ALLOWED_VOLUME_TYPES:
            problems.append(f"volume {volume['name']} of type {types}")
    pod_sc = pod_spec.get("securityContext", {})
    for container in pod_spec.get("initContainers", []) + pod_spec["containers"]:
        sc = container.get("securityContext", {})
        name = container["name"]
        if sc.get("privileged"):
            problems.append(f"{name}: privileged")
        if sc.get("allowPrivilegeEscalation") is not False:
            problems.append(f"{name}: allowPrivilegeEscalation not false")
        capabilities = sc.get("capabilities", {})
        if "ALL" not in capabilities.get("drop", []):
            problems.append(f"{name}: capabilities not dropping ALL")
        for added in capabilities.get("add", []):
            if added != "NET_BIND_SERVICE":
                problems.append(f"{name}: adds capability {added}")
        if not (sc.get("runAsNonRoot") or pod_sc.get("runAsNonRoot")):
            problems.append(f"{name}: runAsNonRoot not set")
        if sc.get("runAsUser", pod_sc.get("runAsUser")) == 0:
            problems.append(f"{name}: runs as uid 0")
        seccomp = sc.get("seccompProfile", pod_sc.get("seccompProfile", {}))
        if seccomp.get("type") not in ("RuntimeDefault", "Localhost"):
            problems.append(f"{name}: seccompProfile not RuntimeDefault")
    return problems


def pod_specs_of(manifest: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    if manifest["kind"] == "Job":
        return [task["template"]["spec"] for task in manifest["spec"]["tasks"]]
    if manifest["kind"] in ("StatefulSet", "Deployment"):
        return [manifest["spec"]["template"]["spec"]]
    return []


# ---------------------------------------------------------------------------------------------
# Sample specs


def training_spec(job_id: int = 101, **overrides: Any) -> WorkloadSpec:
    """Master + 3 workers, 8 GPUs and 4 RDMA NICs each, pinned to nodes, hard topology."""
    fields: dict[str, Any] = {
        "job_id": job_id,
        "name": "llama-7b pretrain",
        "tenant": "acme",
        "kind": "training",
        "priority": 2,
        "pool": "a800-train",
        "queue": "acme-a800",
        "replica_groups": (
            ReplicaGroup(
                name="master",
                replicas=1,
                image="registry.local/train/megatron:24.09",
                command=("torchrun",),
                args=("--nproc-per-node=8", "pretrain.py"),
                env={"NCCL_DEBUG": "WARN"},
                accelerators=8,
                cpu_milli=96000,
                memory_mib=1_600_000,
                rdma_nics=4,
                node_names=("gpu-a-001",),
            ),
            ReplicaGroup(
                name="worker",
                replicas=3,
                image="registry.local/train/megatron:24.09",
                command=("torchrun",),
                args=("--nproc-per-node=8", "pretrain.py"),
                accelerators=8,
                cpu_milli=96000,
                memory_mib=1_600_000,
                rdma_nics=4,
                node_names=("gpu-a-002", "gpu-a-003", "gpu-a-004"),
            ),
        ),
        "topology_mode": "hard",
        "topology_highest_tier": 1,
        "max_retry": 5,
        "volumes": (
            VolumeMount(
                name="data", claim_name="acme-datasets", mount_path="/data", read_only=True
            ),
            VolumeMount(
                name="ckpt", claim_name="acme-ckpt", mount_path="/ckpt", sub_path="run-101"
            ),
        ),
        "labels": {"team": "llm"},
    }
    fields.update(overrides)
    return WorkloadSpec(**fields)


def notebook_spec(job_id: int = 202, flavor: str = "jupyter", **overrides: Any) -> WorkloadSpec:
    fields: dict[str, Any] = {
        "job_id": job_id,
        "name": "explore",
        "tenant": "acme",
        "kind": "notebook",
        "priority": 4,
        "pool": "a800-dev",
        "queue": "acme-dev",
        "replica_groups": (
            ReplicaGroup(
                name="notebook",
                replicas=1,
                image="",
                accelerator_milli=250,
                cpu_milli=4000,
                memory_mib=16384,
            ),
        ),
        "notebook": NotebookSpec(
            flavor=flavor,  # type: ignore[arg-type]
            token="t0ken-" + "x" * 26,
            storage_gib=50,
            storage_class="fast-rwo",
        ),
    }
    fields.update(overrides)
    return WorkloadSpec(**fields)


def inference_spec(job_id: int = 303, **overrides: Any) -> WorkloadSpec:
    fields: dict[str, Any] = {
        "job_id": job_id,
        "name": "qwen-chat",
        "tenant": "acme",
        "kind": "inference",
        "priority": 1,
        "pool": "ascend-infer",
        "queue": "acme-infer",
        "replica_groups": (
            ReplicaGroup(
                name="server",
                replicas=1,
                image="registry.local/serve/vllm-ascend:0.9",
                args=("--model", "/models/qwen", "--port", "8000"),
                accelerators=2,
                accelerator_resource="huawei.com/Ascend910",
                cpu_milli=16000,
                memory_mib=65536,
            ),
        ),
        "inference": InferenceSpec(port=8000, replicas=3, readiness_path="/health"),
        "volumes": (
            VolumeMount(
                name="models", claim_name="acme-models", mount_path="/models", read_only=True
            ),
        ),
    }
    fields.update(overrides)
    return WorkloadSpec(**fields)


# ---------------------------------------------------------------------------------------------
# The emulator


def _parse_path(original: Callable[[str], Any]) -> Callable[[str], Any]:
    def parse(path: str) -> Any:
        parts = path.strip("/").split("/")
        if parts[:3] == ["api", "v1", "namespaces"] and (
            len(parts) <= 4 or (len(parts) == 5 and parts[4] in ("status", "finalize"))
        ):
            name = parts[3] if len(parts) > 3 else None
            sub = parts[4] if len(parts) > 4 else None
            return kmock_parsing.ParsedPath("", "v1", "namespaces", None, name, sub)
        return original(path)

    return parse


@dataclass
class Cluster:
    """The emulator, the backend under test, and the raw client for side channels."""

    kmock: Any
    backend: KubernetesBackend
    api_client: Any

    def obj(self, resource: str, namespace: str | None, name: str) -> dict[str, Any]:
        return dict(self.kmock.objects[resource, namespace, name].raw)

    def has(self, resource: str, namespace: str | None, name: str) -> bool:
        try:
            return not self.kmock.objects[resource, namespace, name].deleted
        except KeyError:
            return False

    def seed(self, resource: str, namespace: str | None, obj: dict[str, Any]) -> None:
        self.kmock.objects[resource, namespace, obj["metadata"]["name"]] = obj


@pytest.fixture
def _kmock_namespace_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kmock_parsing, "parse_path", _parse_path(kmock_parsing.parse_path))


def make_api_client(url: str) -> Any:
    configuration = k8s.Configuration(host=url.rstrip("/"))
    configuration.retries = False  # as in production: the caller retries, not urllib3
    return k8s.ApiClient(configuration)


@pytest_asyncio.fixture
async def cluster(kmock: Any, _kmock_namespace_paths: None) -> AsyncIterator[Cluster]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # kmock's own importlib use
        kmock.resources.load_bundled()
    for group_version, plural, kind, namespaced in VOLCANO_RESOURCES:
        kmock.resources[f"{group_version}/{plural}"] = kmock.ResourceInfo(
            kind=kind, namespaced=namespaced
        )
    # Below the tests' own reactions (priority 0), above the emulator's fallbacks.
    (kmock**-1)["create"] << 201 << (lambda request: kmock._serve_create(request))
    api_client = make_api_client(str(kmock.url))
    backend = KubernetesBackend(api_client, request_timeout=(5.0, 10.0))
    try:
        yield Cluster(kmock=kmock, backend=backend, api_client=api_client)
    finally:
        api_client.close()


def status_body(code: int, reason: str, message: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Status",
        "metadata": {},
        "status": "Failure",
        "code": code,
        "reason": reason,
        "message": message,
    }


JOB_RESOURCE = "batch.volcano.sh/v1alpha1/jobs"
STS_RESOURCE = "apps/v1/statefulsets"
DEPLOY_RESOURCE = "apps/v1/deployments"
SERVICE_RESOURCE = "v1/services"
SECRET_RESOURCE = "v1/secrets"
CLAIM_RESOURCE = "v1/persistentvolumeclaims"
NODE_RESOURCE = "v1/nodes"
POD_RESOURCE = "v1/pods"
NAMESPACE_RESOURCE = "v1/namespaces"
QUOTA_RESOURCE = "v1/resourcequotas"
NETPOL_RESOURCE = "networking.k8s.io/v1/networkpolicies"
QUEUE_RESOURCE = "scheduling.volcano.sh/v1beta1/queues"
HYPERNODE_RESOURCE = "topology.volcano.sh/v1alpha1/hypernodes"
EVICTION_PATH = re.compile(r".*/pods/[^/]+/eviction")
