"""KubernetesBackend over HTTP against kmock, with the official client (no mocks of the client).

The sync client runs in worker threads (``asyncio.to_thread``) while the emulator serves on the
test's event loop; faults are injected as emulator reactions.
"""

from __future__ import annotations

import asyncio
import email.utils
import re
import socket
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import pytest

from apps.clusters.backends.base import (
    ConflictError,
    NotFoundError,
    PermanentError,
    ResyncRequired,
    TransientError,
)
from apps.clusters.backends.kubernetes.backend import (
    SERVICE,
    VOLCANO_JOB,
    KubernetesBackend,
    decode_cursor,
)
from apps.clusters.backends.kubernetes.manifests import (
    render_priority_classes,
    render_volcano_job,
)
from apps.clusters.backends.spec import (
    ApplyResult,
    LeafSwitch,
    NetworkTopology,
    ObjectRef,
    ScalableUnit,
    Spine,
    WatchEvent,
)

from .conftest import (
    CLAIM_RESOURCE,
    DEPLOY_RESOURCE,
    EVICTION_PATH,
    HYPERNODE_RESOURCE,
    JOB_RESOURCE,
    NAMESPACE_RESOURCE,
    NETPOL_RESOURCE,
    NODE_RESOURCE,
    POD_RESOURCE,
    QUEUE_RESOURCE,
    QUOTA_RESOURCE,
    SECRET_RESOURCE,
    SERVICE_RESOURCE,
    STS_RESOURCE,
    Cluster,
    inference_spec,
    make_api_client,
    notebook_spec,
    status_body,
    training_spec,
)

pytestmark = pytest.mark.asyncio

T = TypeVar("T")


async def run(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run a blocking backend call off the event loop that serves the emulator."""
    return await asyncio.to_thread(fn, *args, **kwargs)


def ours(job_id: int, name: str, namespace: str = "zs-acme", **extra: Any) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {"app.kubernetes.io/managed-by": "zhisuan", "zhisuan.io/job-id": str(job_id)},
        },
        **extra,
    }


# -- apply -----------------------------------------------------------------------------------------


async def test_apply_creates_the_volcano_job(cluster: Cluster) -> None:
    spec = training_spec()
    result = await run(cluster.backend.apply, spec)
    assert result == ApplyResult(
        job_id=101,
        created=True,
        objects=(ObjectRef("batch.volcano.sh/v1alpha1", "Job", "zs-acme", "zs-train-101"),),
    )
    assert cluster.obj(JOB_RESOURCE, "zs-acme", "zs-train-101") == render_volcano_job(spec)
    posts = [r for r in cluster.kmock if r.method == "POST"]
    assert len(posts) == 1
    assert posts[0].url.path == "/apis/batch.volcano.sh/v1alpha1/namespaces/zs-acme/jobs"
    assert posts[0].params["fieldValidation"] == "Strict"
    assert posts[0].params["fieldManager"] == "zhisuan"


async def test_a_repeated_apply_is_a_success_without_a_second_object(cluster: Cluster) -> None:
    spec = training_spec()
    first = await run(cluster.backend.apply, spec)
    second = await run(cluster.backend.apply, spec)
    assert first.created is True
    assert second.created is False
    assert second.objects == first.objects
    methods = [(r.method, r.url.path) for r in cluster.kmock]
    job_path = "/apis/batch.volcano.sh/v1alpha1/namespaces/zs-acme/jobs"
    # create (201), create (409), get (to see our label)
    assert methods == [("POST", job_path), ("POST", job_path), ("GET", f"{job_path}/zs-train-101")]


async def test_a_409_for_a_foreign_object_is_a_conflict_error(cluster: Cluster) -> None:
    foreign = ours(999, "zs-train-101", spec={"queue": "other"})
    cluster.seed(JOB_RESOURCE, "zs-acme", foreign)
    with pytest.raises(ConflictError) as caught:
        await run(cluster.backend.apply, training_spec())
    assert caught.value.status == 409
    assert cluster.obj(JOB_RESOURCE, "zs-acme", "zs-train-101") == foreign


async def test_a_409_for_an_unlabelled_object_is_a_conflict_error(cluster: Cluster) -> None:
    cluster.seed(JOB_RESOURCE, "zs-acme", {"metadata": {"name": "zs-train-101"}})
    with pytest.raises(ConflictError):
        await run(cluster.backend.apply, training_spec())


async def test_a_409_for_our_object_on_its_way_out_is_transient(cluster: Cluster) -> None:
    leaving = ours(101, "zs-train-101")
    leaving["metadata"]["deletionTimestamp"] = "2026-11-29T00:00:00Z"
    leaving["metadata"]["finalizers"] = ["volcano.sh/job"]
    cluster.seed(JOB_RESOURCE, "zs-acme", leaving)
    with pytest.raises(TransientError, match="being deleted"):
        await run(cluster.backend.apply, training_spec())


async def test_apply_notebook_creates_secret_service_statefulset(cluster: Cluster) -> None:
    result = await run(cluster.backend.apply, notebook_spec())
    assert [(ref.kind, ref.name) for ref in result.objects] == [
        ("Secret", "zs-nb-202-token"),
        ("Service", "zs-nb-202"),
        ("StatefulSet", "zs-nb-202"),
    ]
    assert result.created
    assert cluster.has(SECRET_RESOURCE, "zs-acme", "zs-nb-202-token")
    assert cluster.has(SERVICE_RESOURCE, "zs-acme", "zs-nb-202")
    assert cluster.has(STS_RESOURCE, "zs-acme", "zs-nb-202")
    again = await run(cluster.backend.apply, notebook_spec())
    assert again.created is False


async def test_apply_resumes_after_a_partial_first_attempt(cluster: Cluster) -> None:
    # A crash after the Secret was created: the repeat creates the rest.
    cluster.seed(SECRET_RESOURCE, "zs-acme", ours(202, "zs-nb-202-token"))
    result = await run(cluster.backend.apply, notebook_spec())
    assert result.created is True
    assert cluster.has(STS_RESOURCE, "zs-acme", "zs-nb-202")


async def test_apply_inference_creates_service_and_deployment(cluster: Cluster) -> None:
    result = await run(cluster.backend.apply, inference_spec())
    assert [(ref.kind, ref.name) for ref in result.objects] == [
        ("Service", "zs-inf-303"),
        ("Deployment", "zs-inf-303"),
    ]
    assert cluster.obj(DEPLOY_RESOURCE, "zs-acme", "zs-inf-303")["spec"]["replicas"] == 3


# -- delete ----------------------------------------------------------------------------------------


async def test_delete_and_a_404_on_delete_is_success(cluster: Cluster) -> None:
    await run(cluster.backend.apply, training_spec())
    assert await run(cluster.backend.delete, 101, "acme", "training") is True
    assert not cluster.has(JOB_RESOURCE, "zs-acme", "zs-train-101")
    assert await run(cluster.backend.delete, 101, "acme", "training") is False
    deletes = [r for r in cluster.kmock if r.method == "DELETE"]
    assert [r.params.get("propagationPolicy") for r in deletes] == ["Foreground", "Foreground"]


async def test_delete_notebook_removes_all_its_objects(cluster: Cluster) -> None:
    await run(cluster.backend.apply, notebook_spec())
    assert await run(cluster.backend.delete, 202, "acme", "notebook") is True
    assert not cluster.has(STS_RESOURCE, "zs-acme", "zs-nb-202")
    assert not cluster.has(SERVICE_RESOURCE, "zs-acme", "zs-nb-202")
    assert not cluster.has(SECRET_RESOURCE, "zs-acme", "zs-nb-202-token")


async def test_delete_notebook_home_removes_only_its_claim(cluster: Cluster) -> None:
    for name in ("home-zs-nb-202-0", "home-zs-nb-203-0"):
        cluster.seed(CLAIM_RESOURCE, "zs-acme", ours(202, name, spec={"resources": {}}))
    assert await run(cluster.backend.delete_notebook_home, 202, "acme") is True
    assert not cluster.has(CLAIM_RESOURCE, "zs-acme", "home-zs-nb-202-0")
    assert cluster.has(CLAIM_RESOURCE, "zs-acme", "home-zs-nb-203-0")
    assert await run(cluster.backend.delete_notebook_home, 202, "acme") is False  # gone: fine
    deletes = [r for r in cluster.kmock if r.method == "DELETE"]
    assert [r.params.get("propagationPolicy") for r in deletes] == ["Background", "Background"]


async def test_delete_server_error_is_transient(cluster: Cluster) -> None:
    await run(cluster.backend.apply, training_spec())
    cluster.kmock["delete"] << 503 << status_body(503, "ServiceUnavailable", "etcd leader lost")
    with pytest.raises(TransientError) as caught:
        await run(cluster.backend.delete, 101, "acme", "training")
    assert caught.value.status == 503


# -- status ----------------------------------------------------------------------------------------


async def test_list_status_maps_every_kind_and_skips_foreign_objects(cluster: Cluster) -> None:
    job = ours(
        101,
        "zs-train-101",
        spec={"tasks": [{"name": "master", "replicas": 1}, {"name": "worker", "replicas": 3}]},
        status={"state": {"phase": "Running"}, "running": 4, "retryCount": 1},
    )
    job["metadata"]["resourceVersion"] = "41"
    failed = ours(
        104,
        "zs-train-104",
        namespace="zs-lab",
        spec={"tasks": [{"name": "w", "replicas": 2}]},
        status={"state": {"phase": "Failed", "reason": "PodFailed"}, "failed": 2},
    )
    notebook = ours(202, "zs-nb-202", spec={"replicas": 1}, status={"readyReplicas": 1})
    inference = ours(303, "zs-inf-303", spec={"replicas": 3}, status={"readyReplicas": 0})
    foreign = {"metadata": {"name": "someone-else", "namespace": "zs-acme"}}
    cluster.seed(JOB_RESOURCE, "zs-acme", job)
    cluster.seed(JOB_RESOURCE, "zs-lab", failed)
    cluster.seed(JOB_RESOURCE, "zs-acme", foreign)
    cluster.seed(STS_RESOURCE, "zs-acme", notebook)
    cluster.seed(DEPLOY_RESOURCE, "zs-acme", inference)

    statuses, cursor = await run(cluster.backend.list_status)

    summary = [(s.job_id, s.kind, s.namespace, s.phase) for s in statuses]
    assert summary == [
        (101, "training", "zs-acme", "running"),
        (202, "notebook", "zs-acme", "running"),
        (303, "inference", "zs-acme", "pending"),
        (104, "training", "zs-lab", "failed"),
    ]
    running = statuses[0]
    assert running.replicas_desired == 4
    assert running.replicas_running == 4
    assert running.retry_count == 1
    assert running.resource_version == "41"
    assert running.tenant == "acme"
    assert statuses[3].message == "Failed: PodFailed"
    assert statuses[2].message == "0/3 replicas ready"
    assert set(decode_cursor(cursor)) == {"jobs", "statefulsets", "deployments"}
    lists = [r for r in cluster.kmock if r.method == "GET"]
    assert {r.url.path for r in lists} == {
        "/apis/batch.volcano.sh/v1alpha1/jobs",
        "/apis/apps/v1/statefulsets",
        "/apis/apps/v1/deployments",
    }
    assert all(r.params["labelSelector"] == "app.kubernetes.io/managed-by=zhisuan" for r in lists)


async def test_list_status_of_one_namespace(cluster: Cluster) -> None:
    cluster.seed(JOB_RESOURCE, "zs-acme", ours(101, "zs-train-101"))
    cluster.seed(JOB_RESOURCE, "zs-lab", ours(104, "zs-train-104", namespace="zs-lab"))
    statuses, _ = await run(cluster.backend.list_status, "zs-lab")
    assert [(s.job_id, s.phase) for s in statuses] == [(104, "pending")]
    paths = {r.url.path for r in cluster.kmock}
    assert "/apis/batch.volcano.sh/v1alpha1/namespaces/zs-lab/jobs" in paths


# -- watch -----------------------------------------------------------------------------------------


def _collect(
    backend: KubernetesBackend, cursor: str, timeout_s: float, until: int | None = None
) -> tuple[list[WatchEvent], str]:
    """Events until the time is up, or until ``until`` events arrived (then close early)."""
    events: list[WatchEvent] = []
    with backend.watch(cursor, timeout_s) as stream:
        for event in stream:
            events.append(event)
            if until is not None and len(events) >= until:
                break
        return events, stream.resource_version


async def test_watch_streams_added_modified_and_deleted(cluster: Cluster) -> None:
    await run(cluster.backend.apply, training_spec())
    _, cursor = await run(cluster.backend.list_status)
    watching = asyncio.create_task(run(_collect, cluster.backend, cursor, 15.0, 4))
    await asyncio.sleep(0.5)
    await run(
        cluster.backend.patch,
        VOLCANO_JOB,
        "zs-acme",
        "zs-train-101",
        {"status": {"state": {"phase": "Running"}, "running": 4}},
    )
    await run(cluster.backend.apply, notebook_spec())
    await run(cluster.backend.delete, 101, "acme", "training")
    events, final_cursor = await watching

    # Streams of different kinds interleave freely; within one kind the order is the cluster's.
    # (The emulator replays existing objects as "added": it ignores resourceVersion.)
    by_kind: dict[str, list[tuple[str, int, str]]] = {}
    for event in events:
        by_kind.setdefault(event.status.kind, []).append(
            (event.type, event.status.job_id, event.status.phase)
        )
    assert by_kind == {
        "training": [
            ("added", 101, "pending"),
            ("modified", 101, "running"),
            ("deleted", 101, "running"),
        ],
        "notebook": [("added", 202, "pending")],
    }
    assert events[-1].resource_version == final_cursor
    assert set(decode_cursor(final_cursor)) == {"jobs", "statefulsets", "deployments"}
    watches = [r for r in cluster.kmock if r.params.get("watch") == "true"]
    assert len(watches) == 3
    assert all(r.params["allowWatchBookmarks"] == "true" for r in watches)
    assert all(r.params["resourceVersion"] for r in watches)


async def test_watch_ends_after_the_requested_time(cluster: Cluster) -> None:
    started = time.monotonic()
    events, _ = await run(_collect, cluster.backend, "", 0.5)
    assert events == []
    assert time.monotonic() - started < 4.0


async def test_a_410_on_watch_raises_resync_required(cluster: Cluster) -> None:
    cluster.kmock["watch"] << 410 << status_body(410, "Expired", "too old resource version")
    with pytest.raises(ResyncRequired) as caught:
        await run(_collect, cluster.backend, "jobs=1&statefulsets=1&deployments=1", 2.0)
    assert caught.value.status == 410


async def test_a_410_error_event_inside_the_stream_raises_resync_required(cluster: Cluster) -> None:
    # What a real API server does: 200, then an ERROR event carrying the 410 Status.
    error = {"type": "ERROR", "object": status_body(410, "Expired", "too old resource version")}
    cluster.kmock["watch", cluster.kmock.resource("batch.volcano.sh", "v1alpha1", "jobs")] << (
        error,
    )
    with pytest.raises(ResyncRequired):
        await run(_collect, cluster.backend, "jobs=5", 2.0)


async def test_an_unreadable_cursor_raises_resync_required(cluster: Cluster) -> None:
    with pytest.raises(ResyncRequired):
        await run(cluster.backend.watch, "not a cursor", 1.0)


async def test_a_server_error_on_watch_is_transient(cluster: Cluster) -> None:
    cluster.kmock["watch"] << 500 << status_body(500, "InternalError", "boom")
    with pytest.raises(TransientError) as caught:
        await run(_collect, cluster.backend, "", 2.0)
    assert caught.value.status == 500


# -- nodes -----------------------------------------------------------------------------------------


def _node(name: str, *, ready: bool = True, gpus: int = 8) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"zhisuan.io/pool": "a800-train"}},
        "spec": {},
        "status": {
            "capacity": {"nvidia.com/gpu": str(gpus), "cpu": "128", "memory": "2Ti"},
            "allocatable": {"nvidia.com/gpu": str(gpus), "cpu": "126", "memory": "1980Gi"},
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
        },
    }


async def test_cordon_and_uncordon_patch_the_node(cluster: Cluster) -> None:
    cluster.seed(NODE_RESOURCE, None, _node("gpu-a-001"))
    await run(cluster.backend.cordon, "gpu-a-001", "XID 79: GPU fallen off the bus")
    node = cluster.obj(NODE_RESOURCE, None, "gpu-a-001")
    assert node["spec"]["unschedulable"] is True
    assert node["metadata"]["annotations"] == {
        "zhisuan.io/cordon-reason": "XID 79: GPU fallen off the bus"
    }
    inventory = await run(cluster.backend.list_nodes)
    assert inventory[0].unschedulable is True
    assert inventory[0].cordon_reason == "XID 79: GPU fallen off the bus"

    await run(cluster.backend.uncordon, "gpu-a-001")
    node = cluster.obj(NODE_RESOURCE, None, "gpu-a-001")
    assert node["spec"]["unschedulable"] is False
    assert "zhisuan.io/cordon-reason" not in node["metadata"].get("annotations", {})
    patches = [r for r in cluster.kmock if r.method == "PATCH"]
    assert [r.url.path for r in patches] == ["/api/v1/nodes/gpu-a-001"] * 2
    assert {r.headers["Content-Type"] for r in patches} == {"application/merge-patch+json"}


async def test_cordon_of_an_unknown_node_is_not_found(cluster: Cluster) -> None:
    with pytest.raises(NotFoundError):
        await run(cluster.backend.cordon, "gpu-z-999", "test")


async def test_list_nodes_reports_inventory(cluster: Cluster) -> None:
    cluster.seed(NODE_RESOURCE, None, _node("gpu-a-002", ready=False))
    cluster.seed(NODE_RESOURCE, None, _node("gpu-a-001", gpus=8))
    inventory = await run(cluster.backend.list_nodes)
    assert [(n.name, n.ready, n.unschedulable) for n in inventory] == [
        ("gpu-a-001", True, False),
        ("gpu-a-002", False, False),
    ]
    assert inventory[0].allocatable_count("nvidia.com/gpu") == 8
    assert inventory[0].capacity["memory"] == "2Ti"
    assert inventory[0].labels == {"zhisuan.io/pool": "a800-train"}


def _pod(name: str, node: str, namespace: str = "zs-acme", **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, **meta},
        "spec": {"nodeName": node, "containers": [{"name": "c", "image": "x"}]},
        "status": {"phase": "Running"},
    }


async def test_drain_evicts_pods_on_the_node_only(cluster: Cluster) -> None:
    cluster.seed(POD_RESOURCE, "zs-acme", _pod("train-0", "gpu-a-001"))
    cluster.seed(POD_RESOURCE, "zs-acme", _pod("infer-0", "gpu-a-001"))
    cluster.seed(POD_RESOURCE, "zs-acme", _pod("elsewhere", "gpu-a-002"))
    cluster.seed(
        POD_RESOURCE,
        "kube-system",
        _pod(
            "dcgm-exporter-x",
            "gpu-a-001",
            namespace="kube-system",
            ownerReferences=[
                {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "d", "uid": "u"}
            ],
        ),
    )
    cluster.seed(
        POD_RESOURCE,
        "kube-system",
        _pod(
            "static-x",
            "gpu-a-001",
            namespace="kube-system",
            annotations={"kubernetes.io/config.mirror": "abc"},
        ),
    )
    kmock = cluster.kmock
    # A PodDisruptionBudget blocks the inference pod; the other eviction goes through.
    (
        kmock["post", re.compile(r".*/pods/infer-0/eviction")]
        << 429
        << status_body(
            429,
            "TooManyRequests",
            "Cannot evict pod as it would violate the pod's disruption budget.",
        )
    )
    kmock["post", EVICTION_PATH] << 201 << (lambda request: request.data)

    result = await run(cluster.backend.drain, "gpu-a-001")

    assert result.evicted == ("zs-acme/train-0",)
    assert result.blocked == ("zs-acme/infer-0",)
    assert set(result.skipped) == {"kube-system/dcgm-exporter-x", "kube-system/static-x"}
    assert result.complete is False
    evictions = [r for r in kmock if r.url.path.endswith("/eviction")]
    assert sorted(r.url.path for r in evictions) == [
        "/api/v1/namespaces/zs-acme/pods/infer-0/eviction",
        "/api/v1/namespaces/zs-acme/pods/train-0/eviction",
    ]
    assert evictions[0].data["apiVersion"] == "policy/v1"
    lists = [r for r in kmock if r.url.path == "/api/v1/pods"]
    assert lists[0].params["fieldSelector"] == "spec.nodeName=gpu-a-001"


async def test_drain_treats_an_already_gone_pod_as_evicted(cluster: Cluster) -> None:
    cluster.seed(POD_RESOURCE, "zs-acme", _pod("train-0", "gpu-a-001"))
    cluster.kmock["post", EVICTION_PATH] << 404 << status_body(404, "NotFound", "gone")
    result = await run(cluster.backend.drain, "gpu-a-001")
    assert result.evicted == ("zs-acme/train-0",)
    assert result.complete


# -- tenants, queues, topology ---------------------------------------------------------------------


async def test_ensure_tenant_creates_then_converges(cluster: Cluster) -> None:
    await run(cluster.backend.ensure_tenant, "acme", {"nvidia.com/gpu": 64, "cpu": "512"})
    namespace = cluster.obj(NAMESPACE_RESOURCE, None, "zs-acme")
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    quota = cluster.obj(QUOTA_RESOURCE, "zs-acme", "zs-quota")
    assert quota["spec"]["hard"] == {"cpu": "512", "requests.nvidia.com/gpu": "64"}
    for name in ("zs-default-deny", "zs-allow-same-namespace", "zs-allow-dns", "zs-allow-platform"):
        assert cluster.has(NETPOL_RESOURCE, "zs-acme", name)

    # Second call: new quota (cpu dropped) and the IPC_LOCK exception approved.
    await run(cluster.backend.ensure_tenant, "acme", {"nvidia.com/gpu": 128}, allow_ipc_lock=True)
    quota = cluster.obj(QUOTA_RESOURCE, "zs-acme", "zs-quota")
    assert quota["spec"]["hard"] == {"requests.nvidia.com/gpu": "128"}
    namespace = cluster.obj(NAMESPACE_RESOURCE, None, "zs-acme")
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "privileged"
    patched = {r.url.path for r in cluster.kmock if r.method == "PATCH"}
    # Unchanged NetworkPolicies are not patched.
    assert patched == {
        "/api/v1/namespaces/zs-acme",
        "/api/v1/namespaces/zs-acme/resourcequotas/zs-quota",
    }


async def test_ensure_tenant_refuses_a_foreign_namespace(cluster: Cluster) -> None:
    cluster.seed(NAMESPACE_RESOURCE, None, {"metadata": {"name": "zs-acme"}})
    with pytest.raises(ConflictError):
        await run(cluster.backend.ensure_tenant, "acme", {})
    assert cluster.obj(NAMESPACE_RESOURCE, None, "zs-acme") == {"metadata": {"name": "zs-acme"}}


async def test_ensure_queue_creates_then_updates(cluster: Cluster) -> None:
    await run(
        cluster.backend.ensure_queue, "acme-a800", {"nvidia.com/gpu": 64}, {"nvidia.com/gpu": 128}
    )
    queue = cluster.obj(QUEUE_RESOURCE, None, "acme-a800")
    assert queue["spec"]["capability"] == {"nvidia.com/gpu": "128"}
    await run(
        cluster.backend.ensure_queue,
        "acme-a800",
        {"nvidia.com/gpu": 32},
        {"nvidia.com/gpu": 256},
        reclaimable=False,
    )
    queue = cluster.obj(QUEUE_RESOURCE, None, "acme-a800")
    assert queue["spec"]["capability"] == {"nvidia.com/gpu": "256"}
    assert queue["spec"]["guarantee"] == {"resource": {"nvidia.com/gpu": "32"}}
    assert queue["spec"]["reclaimable"] is False
    patch = next(r for r in cluster.kmock if r.method == "PATCH")
    assert patch.headers["Content-Type"] == "application/merge-patch+json"


async def test_ensure_topology_creates_hypernodes_and_prunes_stale_ones(cluster: Cluster) -> None:
    def topology(*leaves: LeafSwitch) -> NetworkTopology:
        return NetworkTopology(
            spines=(Spine(name="s1", units=(ScalableUnit(name="su1", leaves=leaves),)),)
        )

    await run(
        cluster.backend.ensure_topology,
        topology(LeafSwitch("l1", ("n1", "n2")), LeafSwitch("l2", ("n3",))),
    )
    names = {key[2] for key, obj in cluster.kmock.objects.items() if not obj.deleted}
    assert names == {"zs-leaf-l1", "zs-leaf-l2", "zs-su-su1", "zs-spine-s1"}

    await run(cluster.backend.ensure_topology, topology(LeafSwitch("l1", ("n1", "n2", "n3"))))
    assert not cluster.has(HYPERNODE_RESOURCE, None, "zs-leaf-l2")
    leaf = cluster.obj(HYPERNODE_RESOURCE, None, "zs-leaf-l1")
    assert [m["selector"]["exactMatch"]["name"] for m in leaf["spec"]["members"]] == [
        "n1",
        "n2",
        "n3",
    ]
    su = cluster.obj(HYPERNODE_RESOURCE, None, "zs-su-su1")
    assert [m["selector"]["exactMatch"]["name"] for m in su["spec"]["members"]] == ["zs-leaf-l1"]


# -- injected faults -------------------------------------------------------------------------------


async def test_429_with_retry_after_seconds_is_transient_with_the_delay(cluster: Cluster) -> None:
    (
        cluster.kmock["create"]
        << 429
        << {"Retry-After": "7"}
        << status_body(429, "TooManyRequests", "slow down")
    )
    with pytest.raises(TransientError) as caught:
        await run(cluster.backend.apply, training_spec())
    assert caught.value.status == 429
    assert caught.value.retry_after_s == 7.0


async def test_429_with_retry_after_date_is_transient_with_the_delay(cluster: Cluster) -> None:
    when = datetime.now(UTC) + timedelta(seconds=30)
    (
        cluster.kmock["create"]
        << 429
        << {"Retry-After": email.utils.format_datetime(when, usegmt=True)}
        << (status_body(429, "TooManyRequests", "slow down"))
    )
    with pytest.raises(TransientError) as caught:
        await run(cluster.backend.apply, training_spec())
    assert caught.value.retry_after_s is not None
    assert 25 <= caught.value.retry_after_s <= 31


async def test_429_without_header_uses_the_status_details(cluster: Cluster) -> None:
    body = status_body(429, "TooManyRequests", "slow down")
    body["details"] = {"retryAfterSeconds": 3}
    cluster.kmock["create"] << 429 << body
    with pytest.raises(TransientError) as caught:
        await run(cluster.backend.apply, training_spec())
    assert caught.value.retry_after_s == 3.0


@pytest.mark.parametrize("code", [500, 502, 503, 504])
async def test_server_errors_are_transient(cluster: Cluster, code: int) -> None:
    cluster.kmock["create"] << code << status_body(code, "ServerError", "try later")
    with pytest.raises(TransientError) as caught:
        await run(cluster.backend.apply, training_spec())
    assert caught.value.status == code


async def test_a_transient_error_then_success_on_retry(cluster: Cluster) -> None:
    cluster.kmock["create"][:1] << 503 << status_body(503, "ServiceUnavailable", "busy")
    with pytest.raises(TransientError):
        await run(cluster.backend.apply, inference_spec())
    result = await run(cluster.backend.apply, inference_spec())
    assert [ref.kind for ref in result.objects] == ["Service", "Deployment"]


@pytest.mark.parametrize(
    ("code", "reason"), [(400, "BadRequest"), (403, "Forbidden"), (422, "Invalid")]
)
async def test_client_errors_are_permanent(cluster: Cluster, code: int, reason: str) -> None:
    cluster.kmock["create"] << code << status_body(code, reason, "no")
    with pytest.raises(PermanentError) as caught:
        await run(cluster.backend.apply, training_spec())
    assert caught.value.status == code
    assert not isinstance(caught.value, TransientError)


def _impatient(cluster: Cluster) -> KubernetesBackend:
    return KubernetesBackend(cluster.api_client, request_timeout=(2.0, 0.5))


async def test_a_hanging_create_times_out_as_transient_never_success(cluster: Cluster) -> None:
    release = asyncio.Event()

    async def hang() -> None:
        await release.wait()

    cluster.kmock["create"][:1] << hang
    started = time.monotonic()
    try:
        with pytest.raises(TransientError, match="Timeout"):
            await run(_impatient(cluster).apply, training_spec())
        assert time.monotonic() - started < 5.0
    finally:
        release.set()
    # The server did create it before hanging: the retry finds our object and succeeds.
    result = await run(cluster.backend.apply, training_spec())
    assert result.created is False


async def test_a_hanging_list_times_out_as_transient(cluster: Cluster) -> None:
    release = asyncio.Event()

    async def hang() -> None:
        await release.wait()

    cluster.kmock["list"] << hang
    try:
        with pytest.raises(TransientError, match="Timeout"):
            await run(_impatient(cluster).list_status)
    finally:
        release.set()


async def test_a_refused_connection_is_transient() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    api_client = make_api_client(f"http://127.0.0.1:{port}")
    backend = KubernetesBackend(api_client, request_timeout=(1.0, 1.0))
    try:
        with pytest.raises(TransientError):
            await run(backend.apply, training_spec())
        with pytest.raises(TransientError):
            await run(backend.cordon, "n1", "x")
    finally:
        api_client.close()


async def test_a_connection_reset_is_transient(cluster: Cluster) -> None:
    def reset(request: Any) -> None:
        transport = request._raw_request.transport
        transport.abort()

    cluster.kmock["list"] << reset
    with pytest.raises(TransientError):
        await run(cluster.backend.list_nodes)


async def test_a_typed_body_the_client_cannot_model_is_permanent_and_never_sent(
    cluster: Cluster,
) -> None:
    bad = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}, "spce": {}}
    with pytest.raises(PermanentError, match="rejected by the client"):
        await run(cluster.backend.create, SERVICE, "zs-acme", bad)
    assert list(cluster.kmock) == []


async def test_list_status_follows_continue_tokens(cluster: Cluster) -> None:
    first = ours(101, "zs-train-101")
    cluster.seed(JOB_RESOURCE, "zs-acme", ours(102, "zs-train-102"))
    jobs = cluster.kmock.resource("batch.volcano.sh", "v1alpha1", "jobs")
    cluster.kmock["list", jobs][:1] << {
        "metadata": {"resourceVersion": "7", "continue": "page-2"},
        "items": [first],
    }
    statuses, cursor = await run(cluster.backend.list_status)
    assert [s.job_id for s in statuses] == [101, 102]
    job_lists = [r for r in cluster.kmock if r.url.path.endswith("/jobs")]
    assert [r.params.get("continue") for r in job_lists] == [None, "page-2"]
    assert all(r.params["limit"] == "500" for r in job_lists)
    assert decode_cursor(cursor)["jobs"] == "7"


async def test_missing_priority_classes(cluster: Cluster) -> None:
    classes = render_priority_classes()
    for wanted in classes[:5]:
        cluster.seed("scheduling.k8s.io/v1/priorityclasses", None, wanted)
    drifted = dict(classes[1], value=1)
    cluster.seed("scheduling.k8s.io/v1/priorityclasses", None, drifted)
    assert await run(cluster.backend.missing_priority_classes) == ["zhisuan-p1", "zhisuan-p5"]
