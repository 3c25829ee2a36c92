"""Every rendered manifest is valid for its schema, and says what the design promises."""

from __future__ import annotations

import copy
from typing import Any

import jsonschema
import kubernetes_validate
import pytest

from apps.clusters.backends.kubernetes.manifests import (
    ANNOTATION_MULTUS,
    ANNOTATION_PREEMPTABLE,
    ANNOTATION_VOLCANO_QUEUE,
    RenderOptions,
    notebook_home_claim,
    quota_hard,
    render_hypernodes,
    render_inference,
    render_notebook,
    render_priority_classes,
    render_queue,
    render_tenant,
    render_volcano_job,
    render_workload,
)
from apps.clusters.backends.spec import (
    LeafSwitch,
    NetworkTopology,
    NotebookSpec,
    ReplicaGroup,
    ScalableUnit,
    Spine,
    VolumeMount,
)

from .conftest import (
    inference_spec,
    notebook_spec,
    pod_specs_of,
    restricted_violations,
    training_spec,
    validate_manifest,
    volcano_validator,
)

TOPOLOGY = NetworkTopology(
    spines=(
        Spine(
            name="Spine A",
            units=(
                ScalableUnit(
                    name="SU1",
                    leaves=(
                        LeafSwitch(name="leaf-1-1", nodes=("gpu-a-001", "gpu-a-002")),
                        LeafSwitch(name="leaf-1-2", nodes=("gpu-a-003", "gpu-a-004")),
                    ),
                ),
                ScalableUnit(
                    name="SU2",
                    leaves=(LeafSwitch(name="leaf-2-1", nodes=("gpu-b-001",)),),
                ),
            ),
        ),
    )
)


def _all_workload_specs() -> dict[str, Any]:
    return {
        "training-rdma-hard": training_spec(),
        "training-rdma-ipc-lock": training_spec(allow_ipc_lock=True),
        "training-ascend-soft": training_spec(
            job_id=102,
            topology_mode="soft",
            topology_highest_tier=None,
            replica_groups=(
                ReplicaGroup(
                    name="worker",
                    replicas=2,
                    image="registry.local/mindspore:2.4",
                    accelerators=8,
                    accelerator_resource="huawei.com/Ascend910",
                ),
            ),
        ),
        "training-fractional": training_spec(
            job_id=103,
            topology_mode="none",
            priority=5,
            replica_groups=(
                ReplicaGroup(
                    name="trainer", replicas=1, image="pytorch:2.5", accelerator_milli=500
                ),
            ),
            volumes=(),
        ),
        "notebook-jupyter": notebook_spec(),
        "notebook-vscode": notebook_spec(job_id=203, flavor="vscode"),
        "notebook-restarted": notebook_spec(
            job_id=204, notebook=NotebookSpec("jupyter", "t0ken-" + "x" * 26, home_job_id=202)
        ),
        "inference": inference_spec(),
    }


def _all_manifests() -> list[tuple[str, dict[str, Any]]]:
    rendered: list[tuple[str, dict[str, Any]]] = []
    for label, spec in _all_workload_specs().items():
        for manifest in render_workload(spec):
            rendered.append((f"{label}:{manifest['kind']}", manifest))
    for manifest in render_tenant("acme", {"nvidia.com/gpu": 64, "cpu": "512", "pods": 200}):
        rendered.append((f"tenant:{manifest['kind']}:{manifest['metadata']['name']}", manifest))
    for manifest in render_tenant("lab", {"huawei.com/Ascend910": 16}, allow_ipc_lock=True):
        rendered.append((f"tenant-ipc:{manifest['kind']}:{manifest['metadata']['name']}", manifest))
    rendered.append(
        (
            "queue",
            render_queue(
                "acme-a800",
                {"nvidia.com/gpu": 64},
                {"nvidia.com/gpu": 128, "cpu": "1024"},
                deserved={"nvidia.com/gpu": 96},
                weight=3,
            ),
        )
    )
    for manifest in render_priority_classes():
        rendered.append((f"priorityclass:{manifest['metadata']['name']}", manifest))
    for manifest in render_hypernodes(TOPOLOGY):
        rendered.append((f"hypernode:{manifest['metadata']['name']}", manifest))
    return rendered


ALL_MANIFESTS = _all_manifests()


@pytest.mark.parametrize(("label", "manifest"), ALL_MANIFESTS, ids=[m[0] for m in ALL_MANIFESTS])
def test_every_rendered_manifest_matches_its_schema(label: str, manifest: dict[str, Any]) -> None:
    validate_manifest(manifest)


def test_the_rendered_set_covers_every_kind_we_send() -> None:
    kinds = {(m["apiVersion"], m["kind"]) for _, m in ALL_MANIFESTS}
    assert kinds == {
        ("batch.volcano.sh/v1alpha1", "Job"),
        ("scheduling.volcano.sh/v1beta1", "Queue"),
        ("topology.volcano.sh/v1alpha1", "HyperNode"),
        ("scheduling.k8s.io/v1", "PriorityClass"),
        ("v1", "Namespace"),
        ("v1", "ResourceQuota"),
        ("v1", "Secret"),
        ("v1", "Service"),
        ("apps/v1", "StatefulSet"),
        ("apps/v1", "Deployment"),
        ("networking.k8s.io/v1", "NetworkPolicy"),
    }


# -- the check can fail ----------------------------------------------------------------------------


def test_a_misspelt_volcano_job_field_is_rejected() -> None:
    job = render_volcano_job(training_spec())
    validate_manifest(job)  # the unmodified job passes
    job["spec"]["minAvaliable"] = job["spec"].pop("minAvailable")
    with pytest.raises(jsonschema.ValidationError, match="minAvaliable"):
        validate_manifest(job)


def test_a_misspelt_field_deep_in_a_task_pod_template_is_rejected() -> None:
    job = render_volcano_job(training_spec())
    container = job["spec"]["tasks"][1]["template"]["spec"]["containers"][0]
    container["imagePullPolicyy"] = container.pop("imagePullPolicy")
    with pytest.raises(jsonschema.ValidationError, match="imagePullPolicyy"):
        volcano_validator("batch.volcano.sh/v1alpha1", "Job").validate(job)


def test_a_misspelt_network_topology_field_is_rejected() -> None:
    job = render_volcano_job(training_spec())
    job["spec"]["networkTopology"]["highestTierAlowed"] = 1
    with pytest.raises(jsonschema.ValidationError, match="highestTierAlowed"):
        validate_manifest(job)


def test_a_wrong_enum_value_is_rejected() -> None:
    job = render_volcano_job(training_spec())
    job["spec"]["networkTopology"]["mode"] = "strict"
    with pytest.raises(jsonschema.ValidationError, match="strict"):
        validate_manifest(job)


@pytest.mark.parametrize(
    ("manifest", "path", "typo"),
    [
        (render_queue("q", {"cpu": 1}, {"cpu": 2}), ("spec",), "reclaimible"),
        (render_hypernodes(TOPOLOGY)[0], ("spec",), "teir"),
    ],
    ids=["queue", "hypernode"],
)
def test_misspelt_fields_of_other_volcano_kinds_are_rejected(
    manifest: dict[str, Any], path: tuple[str, ...], typo: str
) -> None:
    bad = copy.deepcopy(manifest)
    target = bad
    for key in path:
        target = target[key]
    target[typo] = True
    with pytest.raises(jsonschema.ValidationError, match=typo):
        validate_manifest(bad)


def test_a_misspelt_core_field_is_rejected_by_strict_kubernetes_validation() -> None:
    deployment = render_inference(inference_spec())[1]
    validate_manifest(deployment)
    deployment["spec"]["replicass"] = deployment["spec"].pop("replicas")
    with pytest.raises(kubernetes_validate.ValidationError):
        validate_manifest(deployment)


def test_a_misspelt_field_in_task_template_metadata_is_rejected() -> None:
    job = render_volcano_job(training_spec())
    job["spec"]["tasks"][0]["template"]["metadata"]["lables"] = {"a": "b"}
    with pytest.raises(jsonschema.ValidationError, match="lables"):
        validate_manifest(job)


def test_task_templates_are_also_checked_as_core_pod_templates() -> None:
    template = render_volcano_job(training_spec())["spec"]["tasks"][0]["template"]
    wrapper = {"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": "t"}}
    kubernetes_validate.validate({**wrapper, "template": template}, "1.31", strict=True)
    template["spec"]["containers"][0]["resources"]["limitz"] = {}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate({**wrapper, "template": template}, "1.31", strict=True)


# -- Pod Security ----------------------------------------------------------------------------------


@pytest.mark.parametrize("label", [label for label in _all_workload_specs() if "ipc" not in label])
def test_every_pod_meets_pod_security_restricted(label: str) -> None:
    spec = _all_workload_specs()[label]
    pod_specs = [pod for m in render_workload(spec) for pod in pod_specs_of(m)]
    assert pod_specs
    for pod_spec in pod_specs:
        assert restricted_violations(pod_spec) == []


def test_ipc_lock_is_the_only_exception_and_only_when_approved() -> None:
    job = render_volcano_job(training_spec(allow_ipc_lock=True))
    for pod_spec in pod_specs_of(job):
        container = pod_spec["containers"][0]["name"]
        assert restricted_violations(pod_spec) == [f"{container}: adds capability IPC_LOCK"]
    # Approved, but a replica without RDMA NICs does not get it.
    no_rdma = training_spec(
        allow_ipc_lock=True,
        replica_groups=(ReplicaGroup(name="worker", replicas=2, image="x", accelerators=8),),
    )
    assert restricted_violations(pod_specs_of(render_volcano_job(no_rdma))[0]) == []


def test_tenant_pod_security_labels() -> None:
    plain = render_tenant("acme", {})[0]["metadata"]["labels"]
    assert plain["pod-security.kubernetes.io/enforce"] == "restricted"
    assert plain["pod-security.kubernetes.io/warn"] == "restricted"
    assert plain["pod-security.kubernetes.io/audit"] == "restricted"
    approved = render_tenant("acme", {}, allow_ipc_lock=True)[0]["metadata"]["labels"]
    assert approved["pod-security.kubernetes.io/enforce"] == "privileged"
    assert approved["pod-security.kubernetes.io/warn"] == "restricted"
    assert approved["pod-security.kubernetes.io/audit"] == "restricted"


# -- Volcano Job content ---------------------------------------------------------------------------


def test_volcano_job_gang_queue_priority_and_policies() -> None:
    spec = training_spec()
    job = render_volcano_job(spec)
    assert job["metadata"]["name"] == "zs-train-101"
    assert job["metadata"]["namespace"] == "zs-acme"
    assert job["metadata"]["labels"] == {
        "team": "llm",
        "app.kubernetes.io/managed-by": "zhisuan",
        "zhisuan.io/job-id": "101",
        "zhisuan.io/tenant": "acme",
        "zhisuan.io/kind": "training",
        "zhisuan.io/priority": "p2",
        "zhisuan.io/pool": "a800-train",
    }
    assert job["metadata"]["annotations"] == {"zhisuan.io/name": "llama-7b pretrain"}
    body = job["spec"]
    assert body["schedulerName"] == "volcano"
    assert body["minAvailable"] == 4
    assert body["queue"] == "acme-a800"
    assert body["priorityClassName"] == "zhisuan-p2"
    assert body["maxRetry"] == 5
    assert body["policies"] == [
        {"event": "PodEvicted", "action": "RestartJob"},
        {"event": "PodFailed", "action": "RestartJob"},
    ]
    assert body["plugins"] == {
        "svc": ["--disable-network-policy=true"],
        "env": [],
        "pytorch": ["--master=master", "--worker=worker", "--port=23456"],
    }
    assert body["networkTopology"] == {"mode": "hard", "highestTierAllowed": 1}
    assert [(t["name"], t["replicas"], t["minAvailable"]) for t in body["tasks"]] == [
        ("master", 1, 1),
        ("worker", 3, 3),
    ]
    assert body["tasks"][0]["policies"] == [{"event": "TaskCompleted", "action": "CompleteJob"}]
    assert "policies" not in body["tasks"][1]


def test_volcano_job_pod_template_resources_rdma_affinity_and_env() -> None:
    job = render_volcano_job(training_spec())
    worker = job["spec"]["tasks"][1]["template"]
    pod = worker["spec"]
    container = pod["containers"][0]
    expected = {
        "cpu": "96000m",
        "memory": "1600000Mi",
        "nvidia.com/gpu": "8",
        "rdma/hca": "4",
    }
    assert container["resources"] == {"requests": expected, "limits": expected}
    assert worker["metadata"]["annotations"] == {
        ANNOTATION_PREEMPTABLE: "false",
        ANNOTATION_MULTUS: ",".join(f"zhisuan-system/rdma-net-{i}" for i in range(4)),
    }
    assert worker["metadata"]["labels"]["zhisuan.io/replica-group"] == "worker"
    assert pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] == {
        "nodeSelectorTerms": [
            {
                "matchFields": [
                    {
                        "key": "metadata.name",
                        "operator": "In",
                        "values": ["gpu-a-002", "gpu-a-003", "gpu-a-004"],
                    }
                ]
            }
        ]
    }
    assert pod["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    ]
    assert pod["restartPolicy"] == "Never"
    assert pod["priorityClassName"] == "zhisuan-p2"
    env = {item["name"]: item["value"] for item in container["env"]}
    assert env["NCCL_IB_HCA"] == "mlx5"
    assert env["NCCL_SOCKET_IFNAME"] == "eth0"
    assert env["NCCL_IB_DISABLE"] == "0"
    assert env["ZHISUAN_JOB_ID"] == "101"
    assert container["command"] == ["torchrun"]
    assert container["args"] == ["--nproc-per-node=8", "pretrain.py"]
    mounts = {m["name"]: m for m in container["volumeMounts"]}
    assert mounts["dshm"]["mountPath"] == "/dev/shm"  # noqa: S108 - the container path asserted
    assert mounts["data"] == {"name": "data", "mountPath": "/data", "readOnly": True}
    assert mounts["ckpt"]["subPath"] == "run-101"
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["data"]["persistentVolumeClaim"] == {
        "claimName": "acme-datasets",
        "readOnly": True,
    }
    assert volumes["dshm"]["emptyDir"]["medium"] == "Memory"


def test_user_env_may_tune_nccl_but_not_replace_our_identity() -> None:
    spec = training_spec(
        replica_groups=(
            ReplicaGroup(
                name="worker",
                replicas=2,
                image="x",
                accelerators=8,
                rdma_nics=2,
                env={"NCCL_IB_HCA": "mlx5_0,mlx5_1", "ZHISUAN_JOB_ID": "999"},
            ),
        )
    )
    container = render_volcano_job(spec)["spec"]["tasks"][0]["template"]["spec"]["containers"][0]
    env = {item["name"]: item["value"] for item in container["env"]}
    assert env["NCCL_IB_HCA"] == "mlx5_0,mlx5_1"
    assert env["ZHISUAN_JOB_ID"] == "101"


def test_our_labels_win_over_user_labels_of_the_same_name_are_refused() -> None:
    with pytest.raises(ValueError, match="reserved"):
        training_spec(labels={"zhisuan.io/job-id": "1"})


def test_no_topology_no_master_no_pytorch_plugin_no_affinity() -> None:
    spec = training_spec(
        topology_mode="none",
        replica_groups=(ReplicaGroup(name="worker", replicas=2, image="x", accelerators=1),),
    )
    job = render_volcano_job(spec)
    assert "networkTopology" not in job["spec"]
    assert "pytorch" not in job["spec"]["plugins"]
    pod = job["spec"]["tasks"][0]["template"]["spec"]
    assert "affinity" not in pod
    env = {item["name"]: item["value"] for item in pod["containers"][0]["env"]}
    assert env["NCCL_IB_DISABLE"] == "1"
    assert ANNOTATION_MULTUS not in job["spec"]["tasks"][0]["template"]["metadata"]["annotations"]


def test_ascend_training_gets_hccl_not_nccl_settings() -> None:
    spec = _all_workload_specs()["training-ascend-soft"]
    container = render_volcano_job(spec)["spec"]["tasks"][0]["template"]["spec"]["containers"][0]
    env = {item["name"]: item["value"] for item in container["env"]}
    assert env["HCCL_SOCKET_IFNAME"] == "eth0"
    assert not any(name.startswith("NCCL_") for name in env)
    assert container["resources"]["limits"]["huawei.com/Ascend910"] == "8"


def test_soft_topology_without_tier_limit() -> None:
    job = render_volcano_job(training_spec(topology_mode="soft", topology_highest_tier=None))
    assert job["spec"]["networkTopology"] == {"mode": "soft"}


def test_fractional_gpu_uses_volcano_vgpu_resources() -> None:
    spec = _all_workload_specs()["training-fractional"]
    container = render_volcano_job(spec)["spec"]["tasks"][0]["template"]["spec"]["containers"][0]
    assert container["resources"]["limits"] == {
        "cpu": "1000m",
        "memory": "1024Mi",
        "volcano.sh/vgpu-number": "1",
        "volcano.sh/vgpu-cores": "50",
    }


def test_fractional_share_of_a_non_nvidia_device_is_refused() -> None:
    spec = training_spec(
        replica_groups=(
            ReplicaGroup(
                name="w",
                replicas=1,
                image="x",
                accelerator_milli=500,
                accelerator_resource="huawei.com/Ascend910",
            ),
        )
    )
    with pytest.raises(ValueError, match="fractional"):
        render_volcano_job(spec)


def test_more_rdma_nics_than_configured_networks_is_refused() -> None:
    options = RenderOptions(rdma_networks=("ns/ib0",))
    with pytest.raises(ValueError, match="RDMA"):
        render_volcano_job(training_spec(), options)


def test_a_reserved_volume_name_is_refused() -> None:
    spec = training_spec(volumes=(VolumeMount(name="dshm", claim_name="c", mount_path="/x"),))
    with pytest.raises(ValueError, match="reserved"):
        render_volcano_job(spec)


@pytest.mark.parametrize(("priority", "preemptable"), [(0, "false"), (3, "false"), (4, "true")])
def test_preemptable_annotation_follows_priority(priority: int, preemptable: str) -> None:
    job = render_volcano_job(training_spec(priority=priority))
    for task in job["spec"]["tasks"]:
        assert task["template"]["metadata"]["annotations"][ANNOTATION_PREEMPTABLE] == preemptable


# -- notebooks and inference -----------------------------------------------------------------------


def test_notebook_objects_and_token_handling() -> None:
    spec = notebook_spec()
    secret, service, statefulset = render_notebook(spec)
    assert secret["metadata"]["name"] == "zs-nb-202-token"
    assert secret["stringData"] == {"token": spec.notebook.token}  # type: ignore[union-attr]
    assert service["spec"]["clusterIP"] == "None"
    assert service["spec"]["selector"] == {
        "app.kubernetes.io/managed-by": "zhisuan",
        "zhisuan.io/job-id": "202",
        "zhisuan.io/kind": "notebook",
    }
    body = statefulset["spec"]
    assert body["serviceName"] == "zs-nb-202"
    assert body["replicas"] == 1
    assert body["selector"]["matchLabels"] == service["spec"]["selector"]
    claim = body["volumeClaimTemplates"][0]
    assert claim["metadata"]["name"] == "home"
    assert claim["spec"]["resources"] == {"requests": {"storage": "50Gi"}}
    assert claim["spec"]["storageClassName"] == "fast-rwo"
    assert body["persistentVolumeClaimRetentionPolicy"]["whenDeleted"] == "Retain"
    template = body["template"]
    assert template["metadata"]["annotations"][ANNOTATION_VOLCANO_QUEUE] == "acme-dev"
    assert template["metadata"]["annotations"][ANNOTATION_PREEMPTABLE] == "true"
    pod = template["spec"]
    assert pod["schedulerName"] == "volcano"
    assert pod["securityContext"]["runAsUser"] == 1000
    assert pod["securityContext"]["fsGroup"] == 100
    container = pod["containers"][0]
    assert container["image"] == "quay.io/jupyter/base-notebook:latest"
    assert container["command"] == ["jupyter", "lab"]
    assert "--IdentityProvider.token=$(NOTEBOOK_TOKEN)" in container["args"]
    assert "--ServerApp.base_url=/notebooks/202/" in container["args"]
    assert {"name": "home", "mountPath": "/home/jovyan"} in container["volumeMounts"]
    token_env = [e for e in container["env"] if e["name"] == "NOTEBOOK_TOKEN"]
    assert token_env == [
        {
            "name": "NOTEBOOK_TOKEN",
            "valueFrom": {"secretKeyRef": {"name": "zs-nb-202-token", "key": "token"}},
        }
    ]
    # The token never appears in the pod spec itself.
    assert spec.notebook.token not in repr(statefulset)  # type: ignore[union-attr]
    assert container["readinessProbe"]["httpGet"] == {
        "path": "/notebooks/202/api",
        "port": "http",
    }


def test_vscode_notebook_uses_code_server_with_password_from_the_secret() -> None:
    statefulset = render_notebook(notebook_spec(job_id=203, flavor="vscode"))[2]
    container = statefulset["spec"]["template"]["spec"]["containers"][0]
    assert container["command"] == ["code-server"]
    assert "--auth=password" in container["args"]
    assert container["ports"][0]["containerPort"] == 8080
    assert {e["name"] for e in container["env"] if "valueFrom" in e} == {"PASSWORD"}
    assert {"name": "home", "mountPath": "/home/coder"} in container["volumeMounts"]


def test_a_restarted_notebook_mounts_the_claim_its_first_notebook_made() -> None:
    first = render_notebook(notebook_spec(job_id=202))[2]
    template = first["spec"]["volumeClaimTemplates"][0]
    made = f"{template['metadata']['name']}-{first['metadata']['name']}-0"  # the StatefulSet rule
    assert made == notebook_home_claim(202) == "home-zs-nb-202-0"

    spec = notebook_spec(
        job_id=204, notebook=NotebookSpec("jupyter", "t0ken-" + "x" * 26, home_job_id=202)
    )
    statefulset = render_notebook(spec)[2]
    assert statefulset["metadata"]["name"] == "zs-nb-204"
    assert "volumeClaimTemplates" not in statefulset["spec"]  # no new, empty home
    pod = statefulset["spec"]["template"]["spec"]
    assert {"name": "home", "persistentVolumeClaim": {"claimName": made}} in pod["volumes"]
    assert {"name": "home", "mountPath": "/home/jovyan"} in pod["containers"][0]["volumeMounts"]
    assert [v["name"] for v in pod["volumes"]].count("home") == 1


def test_inference_service_and_deployment() -> None:
    service, deployment = render_inference(inference_spec())
    assert service["metadata"]["name"] == deployment["metadata"]["name"] == "zs-inf-303"
    assert service["spec"]["ports"] == [{"name": "http", "port": 8000, "targetPort": "http"}]
    body = deployment["spec"]
    assert body["replicas"] == 3
    assert body["strategy"]["rollingUpdate"] == {"maxSurge": 1, "maxUnavailable": 0}
    container = body["template"]["spec"]["containers"][0]
    assert container["resources"]["limits"]["huawei.com/Ascend910"] == "2"
    assert container["readinessProbe"]["httpGet"] == {"path": "/health", "port": "http"}
    assert body["template"]["spec"]["priorityClassName"] == "zhisuan-p1"
    assert body["template"]["metadata"]["annotations"][ANNOTATION_VOLCANO_QUEUE] == "acme-infer"


# -- cluster-level objects -------------------------------------------------------------------------


def test_priority_classes() -> None:
    classes = render_priority_classes()
    assert [c["metadata"]["name"] for c in classes] == [f"zhisuan-p{i}" for i in range(6)]
    values = [c["value"] for c in classes]
    assert values == sorted(values, reverse=True)
    assert len(set(values)) == 6
    assert [c["preemptionPolicy"] for c in classes] == [
        "PreemptLowerPriority",
        "PreemptLowerPriority",
        "PreemptLowerPriority",
        "Never",
        "Never",
        "Never",
    ]
    assert not any(c["globalDefault"] for c in classes)


def test_queue() -> None:
    queue = render_queue("acme-a800", {"nvidia.com/gpu": 64}, {"nvidia.com/gpu": 128})
    assert queue["spec"] == {
        "weight": 1,
        "reclaimable": True,
        "capability": {"nvidia.com/gpu": "128"},
        "deserved": {"nvidia.com/gpu": "64"},
        "guarantee": {"resource": {"nvidia.com/gpu": "64"}},
    }
    assert "namespace" not in queue["metadata"]


def test_quota_keys_for_extended_resources() -> None:
    assert quota_hard(
        {"nvidia.com/gpu": 8, "cpu": "64", "limits.memory": "1Ti", "count/jobs.batch.volcano.sh": 5}
    ) == {
        "count/jobs.batch.volcano.sh": "5",
        "cpu": "64",
        "limits.memory": "1Ti",
        "requests.nvidia.com/gpu": "8",
    }


def test_tenant_network_policies_default_deny() -> None:
    manifests = render_tenant("acme", {})
    policies = {m["metadata"]["name"]: m["spec"] for m in manifests if m["kind"] == "NetworkPolicy"}
    assert policies["zs-default-deny"] == {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}
    assert set(policies) == {
        "zs-default-deny",
        "zs-allow-same-namespace",
        "zs-allow-dns",
        "zs-allow-platform",
        "zs-allow-monitoring",
    }
    assert all(m["metadata"]["namespace"] == "zs-acme" for m in manifests[1:])
    # Prometheus (platform/prometheus) reaches inference replicas' serving port, nothing else.
    scrape = policies["zs-allow-monitoring"]
    assert scrape["podSelector"] == {"matchLabels": {"zhisuan.io/kind": "inference"}}
    assert scrape["policyTypes"] == ["Ingress"] and "egress" not in scrape
    [rule] = scrape["ingress"]
    assert rule["ports"] == [{"protocol": "TCP", "port": "http"}]
    assert rule["from"] == [
        {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}
    ]
    without = render_tenant("acme", {}, options=RenderOptions(monitoring_namespace=""))
    assert "zs-allow-monitoring" not in {m["metadata"]["name"] for m in without}


def test_hypernodes_from_the_topology_model() -> None:
    nodes = render_hypernodes(TOPOLOGY)
    summary = [
        (
            n["metadata"]["name"],
            n["spec"]["tier"],
            [(m["type"], m["selector"]["exactMatch"]["name"]) for m in n["spec"]["members"]],
        )
        for n in nodes
    ]
    assert summary == [
        ("zs-leaf-leaf-1-1", 1, [("Node", "gpu-a-001"), ("Node", "gpu-a-002")]),
        ("zs-leaf-leaf-1-2", 1, [("Node", "gpu-a-003"), ("Node", "gpu-a-004")]),
        ("zs-leaf-leaf-2-1", 1, [("Node", "gpu-b-001")]),
        ("zs-su-su1", 2, [("HyperNode", "zs-leaf-leaf-1-1"), ("HyperNode", "zs-leaf-leaf-1-2")]),
        ("zs-su-su2", 2, [("HyperNode", "zs-leaf-leaf-2-1")]),
        ("zs-spine-spine-a", 3, [("HyperNode", "zs-su-su1"), ("HyperNode", "zs-su-su2")]),
    ]


def test_hypernode_names_that_collide_are_refused() -> None:
    topology = NetworkTopology(
        spines=(
            Spine(
                name="s",
                units=(
                    ScalableUnit(
                        name="u",
                        leaves=(
                            LeafSwitch(name="Leaf 1", nodes=("n1",)),
                            LeafSwitch(name="leaf-1", nodes=("n2",)),
                        ),
                    ),
                ),
            ),
        )
    )
    with pytest.raises(ValueError, match="collide"):
        render_hypernodes(topology)
