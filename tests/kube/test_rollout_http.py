"""The Kubernetes side of an inference service's rolling update, over HTTP against kmock.

``update_template`` merge-patches the Deployment's pod template, strategy and progress deadline
(never its replica count) only where they differ from the render of the new spec;
``service_pods`` counts the service's placed, live pods per node. kmock ignores
``labelSelector`` on lists, so pods of another job are seeded on purpose.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest

from apps.clusters.backends.base import ConflictError, NotFoundError
from apps.clusters.backends.kubernetes.manifests import ANNOTATION_REVISION, render_inference
from apps.clusters.backends.simulated import SimulatedBackend
from apps.clusters.backends.spec import LABEL_JOB_ID, WorkloadSpec

from .conftest import (
    DEPLOY_RESOURCE,
    NODE_RESOURCE,
    POD_RESOURCE,
    SERVICE_RESOURCE,
    Cluster,
    inference_spec,
    training_spec,
    validate_manifest,
)
from .test_backend_http import ours, run

DEPLOY_PATH = "/apis/apps/v1/namespaces/zs-acme/deployments/zs-inf-303"
PODS_PATH = "/api/v1/namespaces/zs-acme/pods"
NEW_IMAGE = "registry.local/serve/vllm-ascend:0.10"


def _spec(
    revision: int = 1,
    image: str | None = None,
    nodes: tuple[str, ...] = (),
    **inference: Any,
) -> WorkloadSpec:
    """The sample service at ``revision``; every spec a test uses renders valid manifests."""
    spec = inference_spec()
    assert spec.inference is not None
    group = dataclasses.replace(
        spec.replica_groups[0], image=image or spec.replica_groups[0].image, node_names=nodes
    )
    settings = dataclasses.replace(spec.inference, revision=revision, **inference)
    spec = dataclasses.replace(spec, replica_groups=(group,), inference=settings)
    for manifest in render_inference(spec):
        validate_manifest(manifest)
    return spec


def _since(cluster: Cluster, mark: int = 0) -> list[Any]:
    return list(cluster.kmock)[mark:]


def _requests(cluster: Cluster, mark: int = 0) -> list[tuple[str, str]]:
    return [(r.method, r.url.path) for r in _since(cluster, mark)]


def _keys(value: Any) -> Iterator[str]:
    """Every mapping key anywhere in ``value``."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _keys(item)
    elif isinstance(value, list):
        for item in value:
            yield from _keys(item)


def _deployment(cluster: Cluster) -> dict[str, Any]:
    return cluster.obj(DEPLOY_RESOURCE, "zs-acme", "zs-inf-303")


# -- update_template ------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_the_same_spec_sends_no_patch(cluster: Cluster) -> None:
    await run(cluster.backend.apply, _spec())
    mark = len(_since(cluster))
    assert await run(cluster.backend.update_template, _spec()) is False
    # read, compared, nothing to change
    assert _requests(cluster, mark) == [("GET", DEPLOY_PATH)]


@pytest.mark.asyncio
async def test_a_new_revision_patches_the_template_only(cluster: Cluster) -> None:
    await run(cluster.backend.apply, _spec())
    await run(cluster.backend.scale, 303, "acme", 5)  # the scale an update must keep
    before = _deployment(cluster)
    mark = len(_since(cluster))

    assert await run(cluster.backend.update_template, _spec(2, NEW_IMAGE)) is True

    assert _requests(cluster, mark) == [("GET", DEPLOY_PATH), ("PATCH", DEPLOY_PATH)]
    patch = _since(cluster, mark)[1]
    assert patch.headers["Content-Type"] == "application/merge-patch+json"
    assert patch.params["fieldManager"] == "zhisuan"
    body = patch.data
    assert set(body) == {"spec"}
    assert set(body["spec"]) == {"template"}  # strategy and deadline are unchanged
    template = body["spec"]["template"]
    assert template["metadata"] == {"annotations": {ANNOTATION_REVISION: "2"}}
    assert [c["image"] for c in template["spec"]["containers"]] == [NEW_IMAGE]
    assert "replicas" not in set(_keys(body))

    after = _deployment(cluster)
    validate_manifest(after)  # the patched object is still a valid Deployment
    assert after["spec"]["replicas"] == before["spec"]["replicas"] == 5
    assert after["spec"]["template"]["metadata"]["annotations"][ANNOTATION_REVISION] == "2"
    assert after["spec"]["template"]["spec"]["containers"][0]["image"] == NEW_IMAGE
    # the rest of the template is what apply created
    assert (
        after["spec"]["template"]["spec"]["volumes"]
        == before["spec"]["template"]["spec"]["volumes"]
    )
    assert after["metadata"]["labels"] == before["metadata"]["labels"]

    # A retry after success finds nothing left to change.
    mark = len(_since(cluster))
    assert await run(cluster.backend.update_template, _spec(2, NEW_IMAGE)) is False
    assert _requests(cluster, mark) == [("GET", DEPLOY_PATH)]


@pytest.mark.asyncio
async def test_strategy_and_progress_deadline_follow_the_spec(cluster: Cluster) -> None:
    await run(cluster.backend.apply, _spec())
    mark = len(_since(cluster))
    changed = _spec(max_surge=2, max_unavailable=1, startup_timeout_s=1800)
    assert await run(cluster.backend.update_template, changed) is True
    patch = next(r for r in _since(cluster, mark) if r.method == "PATCH")
    assert patch.data["spec"]["strategy"] == {"rollingUpdate": {"maxSurge": 2, "maxUnavailable": 1}}
    assert patch.data["spec"]["progressDeadlineSeconds"] == 2100
    # the startup probe's patience is part of the template and changes with it
    probe = patch.data["spec"]["template"]["spec"]["containers"][0]["startupProbe"]
    assert probe["failureThreshold"] == 180
    assert "replicas" not in set(_keys(patch.data))
    assert _deployment(cluster)["spec"]["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": 2, "maxUnavailable": 1},
    }


@pytest.mark.asyncio
async def test_a_new_port_and_probes_roll_the_template_and_keep_the_service(
    cluster: Cluster,
) -> None:
    await run(cluster.backend.apply, _spec())
    service_before = cluster.obj(SERVICE_RESOURCE, "zs-acme", "zs-inf-303")
    mark = len(_since(cluster))
    changed = _spec(2, port=9000, readiness_path="/ready", probe_period_s=5)
    assert await run(cluster.backend.update_template, changed) is True
    assert _requests(cluster, mark) == [("GET", DEPLOY_PATH), ("PATCH", DEPLOY_PATH)]
    container = _deployment(cluster)["spec"]["template"]["spec"]["containers"][0]
    assert container["ports"] == [{"name": "http", "containerPort": 9000, "protocol": "TCP"}]
    assert container["readinessProbe"]["httpGet"] == {"path": "/ready", "port": "http"}
    assert container["readinessProbe"]["periodSeconds"] == 5
    assert container["livenessProbe"]["httpGet"]["path"] == "/health"
    validate_manifest(_deployment(cluster))
    # The Service is not touched: it reaches the pods by the port's name, old and new alike.
    service = cluster.obj(SERVICE_RESOURCE, "zs-acme", "zs-inf-303")
    assert service == service_before
    assert service["spec"]["ports"][0]["targetPort"] == "http"


@pytest.mark.asyncio
async def test_keys_a_new_render_drops_are_removed(cluster: Cluster) -> None:
    """A merge patch keeps the keys it does not name: the pinning of a service that is no
    longer pinned must be removed explicitly."""
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "spec": {}}
    cluster.seed(NODE_RESOURCE, None, node)
    await run(cluster.backend.apply, _spec(nodes=("n1",)))
    assert "affinity" in _deployment(cluster)["spec"]["template"]["spec"]
    mark = len(_since(cluster))
    assert await run(cluster.backend.update_template, _spec(2)) is True
    # the node labels are the business of apply, scale and delete, not of a template update
    assert _requests(cluster, mark) == [("GET", DEPLOY_PATH), ("PATCH", DEPLOY_PATH)]
    patch = _since(cluster, mark)[1]
    assert patch.data["spec"]["template"]["spec"]["affinity"] is None
    assert "affinity" not in _deployment(cluster)["spec"]["template"]["spec"]
    validate_manifest(_deployment(cluster))


@pytest.mark.asyncio
async def test_a_missing_deployment_is_not_found(cluster: Cluster) -> None:
    # nothing seeded: the emulator answers 404 itself
    with pytest.raises(NotFoundError) as caught:
        await run(cluster.backend.update_template, _spec(2))
    assert caught.value.status == 404
    assert [method for method, _ in _requests(cluster)] == ["GET"]


@pytest.mark.parametrize(
    "labels",
    [
        {"app.kubernetes.io/managed-by": "zhisuan", "zhisuan.io/job-id": "404"},
        {"zhisuan.io/job-id": "303"},  # not managed by us
        {},
    ],
    ids=["another-job", "unmanaged", "no-labels"],
)
@pytest.mark.asyncio
async def test_a_deployment_not_of_this_job_is_a_conflict(
    cluster: Cluster, labels: dict[str, str]
) -> None:
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "zs-inf-303", "namespace": "zs-acme", "labels": labels},
        "spec": {"replicas": 1},
    }
    cluster.seed(DEPLOY_RESOURCE, "zs-acme", deployment)
    with pytest.raises(ConflictError):
        await run(cluster.backend.update_template, _spec(2))
    assert [method for method, _ in _requests(cluster)] == ["GET"]
    assert _deployment(cluster)["spec"] == {"replicas": 1}


@pytest.mark.asyncio
async def test_a_deployment_being_deleted_is_not_found(cluster: Cluster) -> None:
    await run(cluster.backend.apply, _spec())
    stored = _deployment(cluster)
    stored["metadata"] = {**stored["metadata"], "deletionTimestamp": "2026-11-29T00:00:00Z"}
    cluster.seed(DEPLOY_RESOURCE, "zs-acme", stored)
    mark = len(_since(cluster))
    with pytest.raises(NotFoundError, match="being deleted"):
        await run(cluster.backend.update_template, _spec(2))
    assert _requests(cluster, mark) == [("GET", DEPLOY_PATH)]


@pytest.mark.asyncio
async def test_only_inference_specs_are_accepted(cluster: Cluster) -> None:
    with pytest.raises(ValueError, match="inference"):
        await run(cluster.backend.update_template, training_spec())
    assert _requests(cluster) == []


# -- service_pods ---------------------------------------------------------------------------------


def _pod(name: str, job_id: int, node: str | None, **extra: Any) -> dict[str, Any]:
    pod = ours(
        job_id,
        name,
        apiVersion="v1",
        kind="Pod",
        spec={"containers": [{"name": "server", "image": "x"}]},
        status={"phase": "Running"},
    )
    if node is not None:
        pod["spec"]["nodeName"] = node
    pod["metadata"].update(extra.pop("metadata", {}))
    pod.update(extra)
    return pod


@pytest.mark.asyncio
async def test_service_pods_counts_placed_live_pods_per_node(cluster: Cluster) -> None:
    pods = [
        _pod("zs-inf-303-a", 303, "n1"),
        _pod("zs-inf-303-b", 303, "n1"),
        _pod("zs-inf-303-c", 303, "n2"),
        _pod("zs-inf-303-d", 303, None, status={"phase": "Pending"}),  # not placed yet
        _pod("zs-inf-303-e", 303, "n2", metadata={"deletionTimestamp": "2026-11-29T00:00:00Z"}),
        _pod("zs-inf-303-f", 303, "n3", status={"phase": "Failed", "reason": "Evicted"}),
        _pod("zs-inf-404-a", 404, "n1"),  # another job's, listed by a selector-blind server
        _pod("zs-inf-404-b", 404, "n4"),
    ]
    for pod in pods:
        cluster.seed(POD_RESOURCE, "zs-acme", pod)
    assert await run(cluster.backend.service_pods, 303, "acme") == {"n1": 2, "n2": 1}
    assert _requests(cluster) == [("GET", PODS_PATH)]
    listing = _since(cluster)[0]
    assert listing.params["labelSelector"] == f"{LABEL_JOB_ID}=303"


@pytest.mark.asyncio
async def test_service_pods_of_a_service_without_pods_is_empty(cluster: Cluster) -> None:
    cluster.seed(POD_RESOURCE, "zs-acme", _pod("zs-inf-404-a", 404, "n1"))
    assert await run(cluster.backend.service_pods, 303, "acme") == {}


# -- simulated ------------------------------------------------------------------------------------


def test_simulated_update_template_records_the_revision() -> None:
    backend = SimulatedBackend(clock=lambda: 10.0, startup_s=0.0)
    backend.apply(_spec())
    backend.scale(303, "acme", 4)
    assert backend.update_template(_spec()) is False  # revision 1 since apply
    assert backend.update_template(_spec(2, NEW_IMAGE)) is True
    assert backend.update_template(_spec(2, NEW_IMAGE)) is False
    assert backend.revisions[303] == 2
    [status] = backend.list_status()[0]
    assert (status.revision, status.replicas_desired) == (2, 4)  # the scale is kept
    with backend.watch("", 1.0) as stream:
        events = [(e.type, e.status.revision) for e in stream]
    assert events == [("added", 1), ("modified", 1), ("modified", 2)]
    # a service it does not hold: recorded, never an error
    assert backend.update_template(dataclasses.replace(_spec(3), job_id=999)) is True
    assert backend.revisions[999] == 3
    assert [s.job_id for s in backend.list_status()[0]] == [303]
    assert backend.service_pods(303, "acme") == {}
    backend.delete(303, "acme", "inference")
    assert 303 not in backend.revisions
