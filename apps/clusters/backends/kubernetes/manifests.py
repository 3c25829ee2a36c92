"""Pure functions that render our plain specs into Kubernetes and Volcano manifests (dicts).

Nothing here talks to a cluster; every function is deterministic, so the output can be validated
against the API schemas offline (see ``tests/kube``). Conventions:

* Every object carries ``app.kubernetes.io/managed-by: zhisuan``; workload objects also carry
  ``zhisuan.io/job-id`` and ``zhisuan.io/tenant`` (how the backend tells a repeat from a foreign
  object on a 409).
* Every pod satisfies Pod Security "restricted" (non-root, no privilege escalation, all
  capabilities dropped, RuntimeDefault seccomp). The single exception is IPC_LOCK for RDMA
  replicas, only when ``WorkloadSpec.allow_ipc_lock`` is set by an operator.
* Training runs as a Volcano ``Job`` (gang of every replica: ``minAvailable`` = gang size).
  Notebooks and inference services are plain StatefulSets/Deployments whose pods are also
  scheduled by Volcano (queue annotation), so one scheduler enforces queues and priorities.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..base import Quantities
from ..spec import (
    ANNOTATION_NAME,
    LABEL_GROUP,
    LABEL_JOB_ID,
    LABEL_KIND,
    LABEL_MANAGED_BY,
    LABEL_POOL,
    LABEL_PRIORITY,
    LABEL_TENANT,
    MANAGED_BY_VALUE,
    PRIORITY_LEVELS,
    NetworkTopology,
    NotebookFlavor,
    ReplicaGroup,
    WorkloadSpec,
    is_dns_subdomain,
    label_safe,
    namespace_for,
    priority_class_name,
    workload_name,
)

Manifest = dict[str, Any]

VOLCANO_JOB_API = "batch.volcano.sh/v1alpha1"
VOLCANO_QUEUE_API = "scheduling.volcano.sh/v1beta1"
VOLCANO_HYPERNODE_API = "topology.volcano.sh/v1alpha1"

ANNOTATION_MULTUS = "k8s.v1.cni.cncf.io/networks"
ANNOTATION_VOLCANO_QUEUE = "scheduling.volcano.sh/queue-name"
ANNOTATION_PREEMPTABLE = "volcano.sh/preemptable"
# On an inference pod template: the service revision it runs. A new revision changes the
# template, which is what makes the Deployment roll its pods.
ANNOTATION_REVISION = "serve.zhisuan.io/revision"
# A rollout (or scale-up) may wait this long beyond a pod's model loading time
# (``startup_timeout_s``) before the Deployment reports ProgressDeadlineExceeded.
PROGRESS_DEADLINE_MARGIN_S = 300

PSA_PREFIX = "pod-security.kubernetes.io/"
QUOTA_NAME = "zs-quota"
NETWORK_POLICY_NAMES = (
    "zs-default-deny",
    "zs-allow-same-namespace",
    "zs-allow-dns",
    "zs-allow-platform",
)

# P0..P5. Higher value = more important. P0-P2 may preempt; P3 never preempts and is marked
# non-preemptable for Volcano; P4 and P5 never preempt and may be preempted.
PRIORITY_VALUES = (100000, 90000, 80000, 50000, 20000, 10000)
PREEMPTING_PRIORITIES = frozenset({0, 1, 2})
NON_PREEMPTABLE_PRIORITIES = frozenset({0, 1, 2, 3})

# Prefix of the per-service node labels (``serve_label``); outside ``zhisuan.io/`` on purpose,
# since those keys are reserved for workload objects.
SERVE_LABEL_PREFIX = "serve.zhisuan.io/"

_SHM_VOLUME = "dshm"
_HOME_VOLUME = "home"
_RESERVED_VOLUMES = frozenset({_SHM_VOLUME, _HOME_VOLUME})


@dataclass(frozen=True)
class NotebookImage:
    """How one notebook flavor starts: default image, port, user, home, health path."""

    image: str
    port: int
    run_as_user: int
    run_as_group: int
    home: str
    readiness_path: str


@dataclass(frozen=True)
class RenderOptions:
    """Cluster-wide rendering settings an operator may change (defaults fit the reference
    deployment: NVIDIA GPUs, InfiniBand through the RDMA shared device plugin and Multus)."""

    scheduler_name: str = "volcano"
    run_as_user: int = 1000
    run_as_group: int = 1000
    rdma_resource: str = "rdma/hca"
    # NetworkAttachmentDefinitions, one per NIC, in "namespace/name" form for Multus.
    rdma_networks: tuple[str, ...] = tuple(f"zhisuan-system/rdma-net-{i}" for i in range(8))
    nccl_socket_ifname: str = "eth0"
    nccl_ib_hca: str = "mlx5"
    # Volcano device sharing (HAMi vGPU) resources for fractional NVIDIA GPUs.
    fractional_gpu_number_resource: str = "volcano.sh/vgpu-number"
    fractional_gpu_cores_resource: str = "volcano.sh/vgpu-cores"
    pytorch_port: int = 23456
    platform_namespace: str = "zhisuan-system"
    # Where the Prometheus runs that scrapes inference replicas for the autoscaler
    # (platform/prometheus/prometheus.yml, ZS_PROMETHEUS_URL): the tenant's default-deny
    # policy lets it reach their `http` port only. Empty: no such rule.
    monitoring_namespace: str = "monitoring"
    # The path JupyterLab serves under: the platform's proxy prefix, so links it renders work
    # through the proxy unchanged. May use {job_id}, {namespace} and {name}.
    notebook_base_url: str = "/notebooks/{job_id}/"
    notebook_images: Mapping[str, NotebookImage] = field(
        default_factory=lambda: {
            "jupyter": NotebookImage(
                image="quay.io/jupyter/base-notebook:latest",
                port=8888,
                run_as_user=1000,
                run_as_group=100,
                home="/home/jovyan",
                readiness_path="api",
            ),
            "vscode": NotebookImage(
                image="docker.io/codercom/code-server:latest",
                port=8080,
                run_as_user=1000,
                run_as_group=1000,
                home="/home/coder",
                readiness_path="/healthz",
            ),
        }
    )
    tolerate_accelerator_taints: bool = True
    termination_grace_period_s: int = 60
    pod_security_version: str = "latest"


DEFAULT_OPTIONS = RenderOptions()


# ---------------------------------------------------------------------------------------------
# Labels


def managed_labels() -> dict[str, str]:
    return {LABEL_MANAGED_BY: MANAGED_BY_VALUE}


def workload_labels(spec: WorkloadSpec) -> dict[str, str]:
    """User labels first, ours last: ours always win."""
    labels = dict(spec.labels)
    labels.update(
        {
            LABEL_MANAGED_BY: MANAGED_BY_VALUE,
            LABEL_JOB_ID: str(spec.job_id),
            LABEL_TENANT: spec.tenant,
            LABEL_KIND: spec.kind,
            LABEL_PRIORITY: f"p{spec.priority}",
            LABEL_POOL: label_safe(spec.pool),
        }
    )
    return labels


def selector_labels(spec: WorkloadSpec) -> dict[str, str]:
    return {
        LABEL_MANAGED_BY: MANAGED_BY_VALUE,
        LABEL_JOB_ID: str(spec.job_id),
        LABEL_KIND: spec.kind,
    }


def _metadata(spec: WorkloadSpec, name: str) -> Manifest:
    return {
        "name": name,
        "namespace": spec.namespace,
        "labels": workload_labels(spec),
        "annotations": {ANNOTATION_NAME: spec.name},
    }


# ---------------------------------------------------------------------------------------------
# Pods


def _quantities(values: Quantities) -> dict[str, str]:
    return {key: str(value) for key, value in sorted(values.items())}


def _resources(group: ReplicaGroup, options: RenderOptions) -> Manifest:
    amounts: dict[str, str] = {
        "cpu": f"{group.cpu_milli}m",
        "memory": f"{group.memory_mib}Mi",
    }
    if group.accelerator_milli is not None:
        if group.accelerator_resource != "nvidia.com/gpu":
            raise ValueError(
                f"group {group.name}: fractional shares are supported for nvidia.com/gpu only, "
                f"not {group.accelerator_resource}"
            )
        amounts[options.fractional_gpu_number_resource] = "1"
        amounts[options.fractional_gpu_cores_resource] = str(max(1, group.accelerator_milli // 10))
    elif group.accelerators:
        amounts[group.accelerator_resource] = str(group.accelerators)
    if group.rdma_nics:
        amounts[options.rdma_resource] = str(group.rdma_nics)
    # requests == limits: Guaranteed QoS, and extended resources demand it anyway.
    return {"requests": dict(amounts), "limits": dict(amounts)}


def _uses_accelerator(group: ReplicaGroup) -> bool:
    return group.accelerators > 0 or group.accelerator_milli is not None


def _env(
    spec: WorkloadSpec,
    group: ReplicaGroup,
    options: RenderOptions,
    extra: list[Manifest] | None = None,
) -> list[Manifest]:
    # Network defaults first; the user may tune NCCL; our identity variables always win.
    values: dict[str, str] = {}
    if spec.kind == "training" and _uses_accelerator(group):
        if group.accelerator_resource.startswith("huawei.com/"):
            # Ascend collectives (HCCL) use the NPUs' own RoCE ports; only bootstrap is ours.
            values["HCCL_SOCKET_IFNAME"] = options.nccl_socket_ifname
        else:
            values["NCCL_SOCKET_IFNAME"] = options.nccl_socket_ifname
            if group.rdma_nics:
                values["NCCL_IB_HCA"] = options.nccl_ib_hca
                values["NCCL_IB_DISABLE"] = "0"
            else:
                values["NCCL_IB_DISABLE"] = "1"
    values.update(group.env)
    values.update(
        {
            "ZHISUAN_JOB_ID": str(spec.job_id),
            "ZHISUAN_TENANT": spec.tenant,
            "ZHISUAN_REPLICA_GROUP": group.name,
        }
    )
    env: list[Manifest] = [{"name": name, "value": value} for name, value in values.items()]
    return env + (extra or [])


def _container_security(spec: WorkloadSpec, group: ReplicaGroup) -> Manifest:
    capabilities: Manifest = {"drop": ["ALL"]}
    if spec.allow_ipc_lock and group.rdma_nics:
        capabilities["add"] = ["IPC_LOCK"]
    return {
        "allowPrivilegeEscalation": False,
        "capabilities": capabilities,
        "runAsNonRoot": True,
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def _pod_security(run_as_user: int, run_as_group: int) -> Manifest:
    return {
        "runAsNonRoot": True,
        "runAsUser": run_as_user,
        "runAsGroup": run_as_group,
        "fsGroup": run_as_group,
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def _volumes(spec: WorkloadSpec, group: ReplicaGroup) -> tuple[list[Manifest], list[Manifest]]:
    """Pod volumes and container mounts: a memory-backed /dev/shm (NCCL and data loaders need
    more than the runtime's 64 MiB) plus the tenant's claims."""
    volumes: list[Manifest] = [
        {
            "name": _SHM_VOLUME,
            "emptyDir": {"medium": "Memory", "sizeLimit": f"{max(64, group.memory_mib // 2)}Mi"},
        }
    ]
    # Not a temporary file: the shared-memory mount inside the container.
    mounts: list[Manifest] = [{"name": _SHM_VOLUME, "mountPath": "/dev/shm"}]  # noqa: S108
    for volume in spec.volumes:
        if volume.name in _RESERVED_VOLUMES:
            raise ValueError(f"volume name {volume.name!r} is reserved")
        volumes.append(
            {
                "name": volume.name,
                "persistentVolumeClaim": {
                    "claimName": volume.claim_name,
                    "readOnly": volume.read_only,
                },
            }
        )
        mount: Manifest = {
            "name": volume.name,
            "mountPath": volume.mount_path,
            "readOnly": volume.read_only,
        }
        if volume.sub_path:
            mount["subPath"] = volume.sub_path
        mounts.append(mount)
    return volumes, mounts


def _affinity(group: ReplicaGroup) -> Manifest | None:
    if not group.node_names:
        return None
    # matchFields on metadata.name pins to node names exactly (hostname labels may differ).
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchFields": [
                            {
                                "key": "metadata.name",
                                "operator": "In",
                                "values": sorted(set(group.node_names)),
                            }
                        ]
                    }
                ]
            }
        }
    }


def serve_label(job_id: int) -> str:
    """The node label that admits the replicas of inference service ``job_id``.

    Inference pods are pinned by this label, not by node names: the backend adds it to the
    nodes our scheduler chose and removes it from nodes it gives up, so the set of allowed nodes
    changes (extra replicas on other nodes) without touching the pod template, which would
    roll every pod. Example: ``serve.zhisuan.io/job-303``."""
    if job_id < 0:
        raise ValueError("job_id must be >= 0")
    return f"{SERVE_LABEL_PREFIX}job-{job_id}"


def _serve_affinity(job_id: int) -> Manifest:
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": serve_label(job_id), "operator": "Exists"}]}
                ]
            }
        }
    }


def _pod_annotations(spec: WorkloadSpec, group: ReplicaGroup, options: RenderOptions) -> Manifest:
    annotations: dict[str, str] = {
        ANNOTATION_PREEMPTABLE: "false" if spec.priority in NON_PREEMPTABLE_PRIORITIES else "true",
    }
    if spec.kind != "training":
        # Volcano Jobs carry their queue; plain pods need the annotation.
        annotations[ANNOTATION_VOLCANO_QUEUE] = spec.queue
    if group.rdma_nics:
        if group.rdma_nics > len(options.rdma_networks):
            raise ValueError(
                f"group {group.name}: {group.rdma_nics} RDMA NICs requested, only "
                f"{len(options.rdma_networks)} networks configured"
            )
        annotations[ANNOTATION_MULTUS] = ",".join(options.rdma_networks[: group.rdma_nics])
    return annotations


def pod_template(
    spec: WorkloadSpec,
    group: ReplicaGroup,
    options: RenderOptions,
    *,
    restart_policy: str,
    container_name: str,
    command: tuple[str, ...] | list[str] | None = None,
    args: tuple[str, ...] | list[str] | None = None,
    image: str | None = None,
    ports: list[Manifest] | None = None,
    readiness_probe: Manifest | None = None,
    liveness_probe: Manifest | None = None,
    startup_probe: Manifest | None = None,
    extra_env: list[Manifest] | None = None,
    extra_mounts: list[Manifest] | None = None,
    run_as: tuple[int, int] | None = None,
    affinity: Manifest | None = None,
) -> Manifest:
    """A PodTemplateSpec for one replica group. ``affinity`` replaces the default pinning to
    the group's node names (inference pins by a node label instead)."""
    volumes, mounts = _volumes(spec, group)
    container: Manifest = {
        "name": container_name,
        "image": image or group.image,
        "imagePullPolicy": "IfNotPresent",
        "env": _env(spec, group, options, extra_env),
        "resources": _resources(group, options),
        "securityContext": _container_security(spec, group),
        "volumeMounts": mounts + (extra_mounts or []),
    }
    chosen_command = list(command if command is not None else group.command)
    chosen_args = list(args if args is not None else group.args)
    if chosen_command:
        container["command"] = chosen_command
    if chosen_args:
        container["args"] = chosen_args
    if ports:
        container["ports"] = ports
    if readiness_probe:
        container["readinessProbe"] = readiness_probe
    if liveness_probe:
        container["livenessProbe"] = liveness_probe
    if startup_probe:
        container["startupProbe"] = startup_probe
    user, group_id = run_as or (options.run_as_user, options.run_as_group)
    pod_spec: Manifest = {
        "schedulerName": options.scheduler_name,
        "priorityClassName": spec.priority_class,
        "restartPolicy": restart_policy,
        "enableServiceLinks": False,
        "automountServiceAccountToken": False,
        "terminationGracePeriodSeconds": options.termination_grace_period_s,
        "securityContext": _pod_security(user, group_id),
        "containers": [container],
        "volumes": volumes,
    }
    if affinity is None:
        affinity = _affinity(group)
    if affinity:
        pod_spec["affinity"] = affinity
    if options.tolerate_accelerator_taints and _uses_accelerator(group):
        pod_spec["tolerations"] = [
            {"key": group.accelerator_resource, "operator": "Exists", "effect": "NoSchedule"}
        ]
    labels = workload_labels(spec)
    labels[LABEL_GROUP] = group.name
    return {
        "metadata": {"labels": labels, "annotations": _pod_annotations(spec, group, options)},
        "spec": pod_spec,
    }


# ---------------------------------------------------------------------------------------------
# Workloads


def render_volcano_job(spec: WorkloadSpec, options: RenderOptions = DEFAULT_OPTIONS) -> Manifest:
    """A training job as one Volcano Job: one task per replica group, gang of all replicas."""
    if spec.kind != "training":
        raise ValueError(f"a Volcano Job renders training workloads, not {spec.kind}")
    group_names = {group.name for group in spec.replica_groups}
    tasks: list[Manifest] = []
    for group in spec.replica_groups:
        task: Manifest = {
            "name": group.name,
            "replicas": group.replicas,
            "minAvailable": group.replicas,
            "template": pod_template(
                spec, group, options, restart_policy="Never", container_name=group.name
            ),
        }
        if group.name == "master":
            # The master's exit ends the job; workers would otherwise run forever.
            task["policies"] = [{"event": "TaskCompleted", "action": "CompleteJob"}]
        tasks.append(task)
    plugins: dict[str, list[str]] = {
        "svc": ["--disable-network-policy=true"],  # tenant NetworkPolicies already apply
        "env": [],
    }
    if "master" in group_names:
        plugins["pytorch"] = [
            "--master=master",
            "--worker=worker",
            f"--port={options.pytorch_port}",
        ]
    job_spec: Manifest = {
        "schedulerName": options.scheduler_name,
        "queue": spec.queue,
        "priorityClassName": spec.priority_class,
        "minAvailable": spec.gang_size,
        "maxRetry": spec.max_retry,
        "policies": [
            {"event": "PodEvicted", "action": "RestartJob"},
            {"event": "PodFailed", "action": "RestartJob"},
        ],
        "plugins": plugins,
        "tasks": tasks,
    }
    if spec.topology_mode != "none":
        topology: Manifest = {"mode": spec.topology_mode}
        if spec.topology_highest_tier is not None:
            topology["highestTierAllowed"] = spec.topology_highest_tier
        job_spec["networkTopology"] = topology
    return {
        "apiVersion": VOLCANO_JOB_API,
        "kind": "Job",
        "metadata": _metadata(spec, spec.object_name),
        "spec": job_spec,
    }


def notebook_secret_name(spec: WorkloadSpec) -> str:
    return f"{spec.object_name}-token"


def notebook_home_claim(job_id: int) -> str:
    """The claim the StatefulSet of notebook ``job_id`` made from its volume template
    (``<template>-<statefulset>-<ordinal>``): the home a restart of it mounts again."""
    return f"{_HOME_VOLUME}-{workload_name(job_id, 'notebook')}-0"


def notebook_base_path(spec: WorkloadSpec, options: RenderOptions = DEFAULT_OPTIONS) -> str:
    """The URL path JupyterLab is configured to serve under (``--ServerApp.base_url``)."""
    return options.notebook_base_url.format(
        job_id=spec.job_id, namespace=spec.namespace, name=spec.object_name
    )


def render_notebook(spec: WorkloadSpec, options: RenderOptions = DEFAULT_OPTIONS) -> list[Manifest]:
    """Secret (token), headless Service, StatefulSet with one replica and a home volume claim.

    The token reaches the container only through a secretKeyRef; the pod spec never holds it.
    """
    if spec.kind != "notebook" or spec.notebook is None:
        raise ValueError("render_notebook needs a notebook spec")
    notebook = spec.notebook
    flavor: NotebookFlavor = notebook.flavor
    image = options.notebook_images[flavor]
    group = spec.replica_groups[0]
    name = spec.object_name
    secret_name = notebook_secret_name(spec)
    base_url = notebook_base_path(spec, options)
    token_env: Manifest = {
        "name": "NOTEBOOK_TOKEN" if flavor == "jupyter" else "PASSWORD",
        "valueFrom": {"secretKeyRef": {"name": secret_name, "key": "token"}},
    }
    if flavor == "jupyter":
        command = ["jupyter", "lab"]
        args = [
            "--ip=0.0.0.0",
            f"--port={image.port}",
            "--no-browser",
            f"--ServerApp.base_url={base_url}",
            "--IdentityProvider.token=$(NOTEBOOK_TOKEN)",
        ]
        readiness_path = base_url + image.readiness_path
    else:
        command = ["code-server"]
        args = [f"--bind-addr=0.0.0.0:{image.port}", "--auth=password", "--disable-telemetry"]
        readiness_path = image.readiness_path
    template = pod_template(
        spec,
        group,
        options,
        restart_policy="Always",
        container_name="notebook",
        command=list(group.command) or command,
        args=list(group.args) or (args if not group.command else []),
        image=group.image or image.image,
        ports=[{"name": "http", "containerPort": image.port, "protocol": "TCP"}],
        readiness_probe={
            "httpGet": {"path": readiness_path, "port": "http"},
            "periodSeconds": 10,
            "failureThreshold": 3,
        },
        extra_env=[token_env],
        extra_mounts=[{"name": _HOME_VOLUME, "mountPath": image.home}],
        run_as=(image.run_as_user, image.run_as_group),
    )
    if notebook.home_job_id is not None:
        # A restart mounts the home its first notebook's template made, which the platform
        # keeps until it is deleted on purpose (by its owner or the retention task).
        template["spec"]["volumes"].append(
            {
                "name": _HOME_VOLUME,
                "persistentVolumeClaim": {"claimName": notebook_home_claim(notebook.home_job_id)},
            }
        )
    labels = workload_labels(spec)
    claim_spec: Manifest = {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": f"{notebook.storage_gib}Gi"}},
    }
    if notebook.storage_class:
        claim_spec["storageClassName"] = notebook.storage_class
    secret: Manifest = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": _metadata(spec, secret_name),
        "type": "Opaque",
        "stringData": {"token": notebook.token},
    }
    service: Manifest = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": _metadata(spec, name),
        "spec": {
            "clusterIP": "None",
            "selector": selector_labels(spec),
            "ports": [{"name": "http", "port": image.port, "targetPort": "http"}],
        },
    }
    statefulset: Manifest = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": _metadata(spec, name),
        "spec": {
            "serviceName": name,
            "replicas": 1,
            "selector": {"matchLabels": selector_labels(spec)},
            "template": template,
            # The home volume outlives the notebook; removing it is a separate, explicit act.
            "persistentVolumeClaimRetentionPolicy": {
                "whenDeleted": "Retain",
                "whenScaled": "Retain",
            },
        },
    }
    if notebook.home_job_id is None:
        statefulset["spec"]["volumeClaimTemplates"] = [
            {"metadata": {"name": _HOME_VOLUME, "labels": labels}, "spec": claim_spec}
        ]
    return [secret, service, statefulset]


def render_inference(
    spec: WorkloadSpec, options: RenderOptions = DEFAULT_OPTIONS
) -> list[Manifest]:
    """A ClusterIP Service and a Deployment that rolls without losing ready capacity.

    The pod template carries the service revision (``ANNOTATION_REVISION``), so a new
    revision rolls the pods; the progress deadline leaves room for a slow model load."""
    if spec.kind != "inference" or spec.inference is None:
        raise ValueError("render_inference needs an inference spec")
    inference = spec.inference
    group = spec.replica_groups[0]
    name = spec.object_name
    template = pod_template(
        spec,
        group,
        options,
        restart_policy="Always",
        container_name="server",
        ports=[{"name": "http", "containerPort": inference.port, "protocol": "TCP"}],
        readiness_probe={
            "httpGet": {"path": inference.readiness_path, "port": "http"},
            "initialDelaySeconds": inference.probe_initial_delay_s,
            "periodSeconds": inference.probe_period_s,
            "failureThreshold": 3,
        },
        liveness_probe={
            "httpGet": {"path": inference.liveness_path, "port": "http"},
            "initialDelaySeconds": inference.probe_initial_delay_s,
            "periodSeconds": inference.probe_period_s,
            "failureThreshold": 3,
        },
        # Liveness only starts once this succeeds, so a model that takes minutes to load is
        # not killed and restarted in a loop.
        startup_probe={
            "httpGet": {"path": inference.liveness_path, "port": "http"},
            "periodSeconds": inference.probe_period_s,
            "failureThreshold": -(-inference.startup_timeout_s // inference.probe_period_s),
        },
        # Pinned by the service's node label, which the backend moves between nodes as the
        # service scales; node names in the template would roll every pod on each change.
        affinity=_serve_affinity(spec.job_id) if group.node_names else None,
    )
    template["metadata"].setdefault("annotations", {})[ANNOTATION_REVISION] = str(
        inference.revision
    )
    service: Manifest = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": _metadata(spec, name),
        "spec": {
            "type": "ClusterIP",
            "selector": selector_labels(spec),
            "ports": [{"name": "http", "port": inference.port, "targetPort": "http"}],
        },
    }
    deployment: Manifest = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _metadata(spec, name),
        "spec": {
            "replicas": inference.replicas,
            "selector": {"matchLabels": selector_labels(spec)},
            "strategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {
                    "maxSurge": inference.max_surge,
                    "maxUnavailable": inference.max_unavailable,
                },
            },
            # The default (600 s) would call a first model load slower than that a failure.
            "progressDeadlineSeconds": inference.startup_timeout_s + PROGRESS_DEADLINE_MARGIN_S,
            "template": template,
        },
    }
    return [service, deployment]


def render_workload(spec: WorkloadSpec, options: RenderOptions = DEFAULT_OPTIONS) -> list[Manifest]:
    """Every object of a workload, dependencies first and the status-bearing object last."""
    if spec.kind == "training":
        return [render_volcano_job(spec, options)]
    if spec.kind == "notebook":
        return render_notebook(spec, options)
    return render_inference(spec, options)


# ---------------------------------------------------------------------------------------------
# Cluster-level objects


def render_priority_classes() -> list[Manifest]:
    """``zhisuan-p0`` .. ``zhisuan-p5``."""
    classes: list[Manifest] = []
    for level in range(PRIORITY_LEVELS):
        preempts = level in PREEMPTING_PRIORITIES
        if preempts:
            description = f"Zhisuan P{level}: high priority; may preempt P4 and P5 work."
        elif level == 3:
            description = "Zhisuan P3: never preempts and is never preempted."
        else:
            description = f"Zhisuan P{level}: low priority; never preempts, may be preempted."
        classes.append(
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": priority_class_name(level), "labels": managed_labels()},
                "value": PRIORITY_VALUES[level],
                "globalDefault": False,
                "preemptionPolicy": "PreemptLowerPriority" if preempts else "Never",
                "description": description,
            }
        )
    return classes


def render_queue(
    name: str,
    guarantee: Quantities,
    capability: Quantities,
    *,
    deserved: Quantities | None = None,
    reclaimable: bool = True,
    weight: int = 1,
) -> Manifest:
    """A Volcano Queue: ``guarantee`` is reserved, ``deserved`` is the fair share (defaults to
    the guarantee), ``capability`` the ceiling including what it may borrow."""
    if not is_dns_subdomain(name):
        raise ValueError(f"invalid queue name {name!r}")
    if not 1 <= weight <= 65535:
        raise ValueError("weight must be 1..65535")
    return {
        "apiVersion": VOLCANO_QUEUE_API,
        "kind": "Queue",
        "metadata": {"name": name, "labels": managed_labels()},
        "spec": {
            "weight": weight,
            "reclaimable": reclaimable,
            "capability": _quantities(capability),
            "deserved": _quantities(deserved if deserved is not None else guarantee),
            "guarantee": {"resource": _quantities(guarantee)},
        },
    }


def quota_hard(quota: Quantities) -> dict[str, str]:
    """ResourceQuota keys: extended resources (``nvidia.com/gpu``) need a ``requests.`` prefix."""
    hard: dict[str, str] = {}
    for key, value in quota.items():
        if "/" in key and not key.startswith(("requests.", "limits.", "count/")):
            key = f"requests.{key}"
        hard[key] = str(value)
    return dict(sorted(hard.items()))


def render_tenant(
    tenant: str,
    quota: Quantities,
    *,
    allow_ipc_lock: bool = False,
    options: RenderOptions = DEFAULT_OPTIONS,
) -> list[Manifest]:
    """Namespace (Pod Security labels), ResourceQuota and the tenant's NetworkPolicies."""
    namespace = namespace_for(tenant)
    labels = {**managed_labels(), LABEL_TENANT: tenant}
    # IPC_LOCK is outside "restricted" and "baseline"; an approved tenant is enforced at
    # "privileged" while audit and warn stay at "restricted" so every use stays visible.
    enforce = "privileged" if allow_ipc_lock else "restricted"
    ns_labels = dict(labels)
    for mode, level in (("enforce", enforce), ("audit", "restricted"), ("warn", "restricted")):
        ns_labels[f"{PSA_PREFIX}{mode}"] = level
        ns_labels[f"{PSA_PREFIX}{mode}-version"] = options.pod_security_version
    platform_peer: Manifest = {
        "namespaceSelector": {
            "matchLabels": {"kubernetes.io/metadata.name": options.platform_namespace}
        }
    }

    def policy(name: str, spec: Manifest) -> Manifest:
        return {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
            "spec": {"podSelector": {}, **spec},
        }

    monitoring: list[Manifest] = []
    if options.monitoring_namespace:
        scraper = {"kubernetes.io/metadata.name": options.monitoring_namespace}
        monitoring.append(
            policy(
                "zs-allow-monitoring",
                {
                    # Only inference replicas, only their serving port (vLLM's /metrics).
                    "podSelector": {"matchLabels": {LABEL_KIND: "inference"}},
                    "policyTypes": ["Ingress"],
                    "ingress": [
                        {
                            "from": [{"namespaceSelector": {"matchLabels": scraper}}],
                            "ports": [{"protocol": "TCP", "port": "http"}],
                        }
                    ],
                },
            )
        )

    return [
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": namespace, "labels": ns_labels},
        },
        {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": {"name": QUOTA_NAME, "namespace": namespace, "labels": dict(labels)},
            "spec": {"hard": quota_hard(quota)},
        },
        policy("zs-default-deny", {"policyTypes": ["Ingress", "Egress"]}),
        policy(
            "zs-allow-same-namespace",
            {
                "policyTypes": ["Ingress", "Egress"],
                "ingress": [{"from": [{"podSelector": {}}]}],
                "egress": [{"to": [{"podSelector": {}}]}],
            },
        ),
        policy(
            "zs-allow-dns",
            {
                "policyTypes": ["Egress"],
                "egress": [
                    {
                        "to": [
                            {
                                "namespaceSelector": {
                                    "matchLabels": {"kubernetes.io/metadata.name": "kube-system"}
                                },
                                "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
                            }
                        ],
                        "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}],
                    }
                ],
            },
        ),
        policy(
            "zs-allow-platform",
            {
                "policyTypes": ["Ingress", "Egress"],
                "ingress": [{"from": [platform_peer]}],
                "egress": [{"to": [platform_peer]}],
            },
        ),
        *monitoring,
    ]


_INVALID_NAME_CHARS = re.compile(r"[^a-z0-9-]+")


def hypernode_name(tier_prefix: str, name: str) -> str:
    slug = _INVALID_NAME_CHARS.sub("-", name.lower()).strip("-")
    if not slug:
        raise ValueError(f"cannot derive a HyperNode name from {name!r}")
    return f"zs-{tier_prefix}-{slug}"[:253].rstrip("-")


def _hypernode(
    name: str, tier: int, tier_name: str, member_type: str, members: list[str]
) -> Manifest:
    return {
        "apiVersion": VOLCANO_HYPERNODE_API,
        "kind": "HyperNode",
        "metadata": {"name": name, "labels": managed_labels()},
        "spec": {
            "tier": tier,
            "tierName": tier_name,
            "members": [
                {"type": member_type, "selector": {"exactMatch": {"name": member}}}
                for member in members
            ],
        },
    }


def render_hypernodes(topology: NetworkTopology) -> list[Manifest]:
    """HyperNodes from our topology model: leaf switches (tier 1, node members), Scalable Units
    (tier 2, leaf members) and spines (tier 3, SU members). Leaves first, so members exist
    before the HyperNodes that refer to them."""
    leaves: list[Manifest] = []
    units: list[Manifest] = []
    spines: list[Manifest] = []
    for spine in topology.spines:
        unit_names: list[str] = []
        for unit in spine.units:
            leaf_names: list[str] = []
            for leaf in unit.leaves:
                leaf_name = hypernode_name("leaf", leaf.name)
                leaves.append(_hypernode(leaf_name, 1, "leaf", "Node", list(leaf.nodes)))
                leaf_names.append(leaf_name)
            unit_name = hypernode_name("su", unit.name)
            units.append(_hypernode(unit_name, 2, "scalable-unit", "HyperNode", leaf_names))
            unit_names.append(unit_name)
        spines.append(
            _hypernode(hypernode_name("spine", spine.name), 3, "spine", "HyperNode", unit_names)
        )
    rendered = leaves + units + spines
    names = [item["metadata"]["name"] for item in rendered]
    if len(set(names)) != len(names):
        raise ValueError(f"HyperNode names collide after normalisation: {sorted(names)}")
    return rendered
