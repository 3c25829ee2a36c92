"""Inference pods pinned by a per-service node label, over HTTP against kmock.

The backend labels the nodes our scheduler chose (``serve.zhisuan.io/job-<id>``) and the pod
template requires the label, so ``scale`` can move the allowed nodes without a rollout. kmock
ignores ``labelSelector`` on lists (it answers every object), so nodes and pods of other jobs
are seeded on purpose: the backend's client-side filter must keep them untouched.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import pytest

from apps.clusters.backends.base import NotFoundError
from apps.clusters.backends.kubernetes.manifests import (
    render_inference,
    render_volcano_job,
    serve_label,
)
from apps.clusters.backends.simulated import SimulatedBackend
from apps.clusters.backends.spec import LABEL_JOB_ID, WorkloadSpec, is_label_key

from .conftest import (
    DEPLOY_RESOURCE,
    NODE_RESOURCE,
    POD_RESOURCE,
    Cluster,
    inference_spec,
    status_body,
    training_spec,
    validate_manifest,
)
from .test_backend_http import run

KEY = "serve.zhisuan.io/job-303"
COST = "controller.kubernetes.io/pod-deletion-cost"
SCALE_PATH = "/apis/apps/v1/namespaces/zs-acme/deployments/zs-inf-303/scale"


def _pinned(*nodes: str, replicas: int = 3) -> WorkloadSpec:
    spec = inference_spec()
    group = dataclasses.replace(spec.replica_groups[0], node_names=nodes)
    assert spec.inference is not None
    inference = dataclasses.replace(spec.inference, replicas=replicas)
    return dataclasses.replace(spec, replica_groups=(group,), inference=inference)


def _node(name: str, *labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {key: "true" for key in labels}},
        "spec": {},
        "status": {},
    }


def _pod(name: str, job_id: int, node: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "zs-acme", "labels": {LABEL_JOB_ID: str(job_id)}},
        "spec": {"nodeName": node, "containers": [{"name": "server", "image": "x"}]},
        "status": {"phase": "Running"},
    }


def _labels(cluster: Cluster, node: str) -> dict[str, str]:
    return dict(cluster.obj(NODE_RESOURCE, None, node)["metadata"].get("labels") or {})


def _since(cluster: Cluster, mark: int = 0) -> list[Any]:
    """The requests after the first ``mark`` ones."""
    return list(cluster.kmock)[mark:]


def _requests(cluster: Cluster, mark: int = 0) -> list[tuple[str, str]]:
    return [(r.method, r.url.path) for r in _since(cluster, mark)]


def _writes(cluster: Cluster, mark: int = 0) -> list[tuple[str, str]]:
    return [(m, path) for m, path in _requests(cluster, mark) if m != "GET"]


# -- manifests ------------------------------------------------------------------------------------


def test_serve_label_is_a_valid_label_key() -> None:
    assert serve_label(303) == KEY
    assert is_label_key(KEY)
    assert is_label_key(serve_label(2**63 - 1))
    with pytest.raises(ValueError, match="job_id"):
        serve_label(-1)


def test_rendered_deployment_requires_the_service_label_and_validates() -> None:
    service, deployment = render_inference(_pinned("n1", "n2"))
    for manifest in (service, deployment):
        validate_manifest(manifest)
    affinity = deployment["spec"]["template"]["spec"]["affinity"]
    assert affinity == {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": KEY, "operator": "Exists"}]}]
            }
        }
    }
    # no node names in the template: changing the node set never rolls the pods
    assert "n1" not in str(deployment["spec"]["template"])


def test_unpinned_inference_has_no_affinity_and_training_keeps_node_names() -> None:
    _, deployment = render_inference(inference_spec())
    assert "affinity" not in deployment["spec"]["template"]["spec"]
    # training (a gang placed once) still pins by node name
    job = render_volcano_job(training_spec())
    term = job["spec"]["tasks"][0]["template"]["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]["nodeSelectorTerms"][0]
    assert term == {
        "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["gpu-a-001"]}]
    }


# -- apply ----------------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_apply_labels_the_nodes_before_creating_objects(cluster: Cluster) -> None:
    cluster.seed(NODE_RESOURCE, None, _node("n1"))
    cluster.seed(NODE_RESOURCE, None, _node("n2", KEY))  # already labelled: not patched again
    cluster.seed(NODE_RESOURCE, None, _node("n3", KEY))  # labelled, outside: apply only adds
    cluster.seed(NODE_RESOURCE, None, _node("other", "serve.zhisuan.io/job-404"))
    await run(cluster.backend.apply, _pinned("n1", "n2"))

    assert _requests(cluster) == [
        ("GET", "/api/v1/nodes"),
        ("PATCH", "/api/v1/nodes/n1"),
        ("POST", "/api/v1/namespaces/zs-acme/services"),
        ("POST", "/apis/apps/v1/namespaces/zs-acme/deployments"),
    ]
    listing = next(r for r in cluster.kmock if r.method == "GET")
    assert listing.params["labelSelector"] == KEY
    label_patch = next(r for r in cluster.kmock if r.method == "PATCH")
    assert label_patch.data == {"metadata": {"labels": {KEY: "true"}}}
    assert label_patch.headers["Content-Type"] == "application/merge-patch+json"
    assert label_patch.params["fieldManager"] == "zhisuan"
    assert _labels(cluster, "n1") == {KEY: "true"}
    assert _labels(cluster, "n3") == {KEY: "true"}
    assert _labels(cluster, "other") == {"serve.zhisuan.io/job-404": "true"}
    stored = cluster.obj(DEPLOY_RESOURCE, "zs-acme", "zs-inf-303")
    terms = stored["spec"]["template"]["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]["nodeSelectorTerms"]
    assert terms == [{"matchExpressions": [{"key": KEY, "operator": "Exists"}]}]


@pytest.mark.asyncio
async def test_apply_of_unpinned_inference_touches_no_node(cluster: Cluster) -> None:
    cluster.seed(NODE_RESOURCE, None, _node("n1"))
    await run(cluster.backend.apply, inference_spec())
    assert all("/nodes" not in path for _, path in _requests(cluster))


# -- scale ----------------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_scale_up_labels_new_nodes_before_the_scale_patch(cluster: Cluster) -> None:
    cluster.seed(NODE_RESOURCE, None, _node("n1"))
    cluster.seed(NODE_RESOURCE, None, _node("n2"))
    await run(cluster.backend.apply, _pinned("n1", replicas=1))
    before = cluster.obj(DEPLOY_RESOURCE, "zs-acme", "zs-inf-303")
    mark = len(_since(cluster))  # only the scale's requests below
    await run(cluster.backend.scale, 303, "acme", 3, ["n1", "n2"])

    assert _requests(cluster, mark) == [
        ("GET", "/api/v1/nodes"),
        ("PATCH", "/api/v1/nodes/n2"),
        ("PATCH", SCALE_PATH),
    ]
    assert _labels(cluster, "n2") == {KEY: "true"}
    after = cluster.obj(DEPLOY_RESOURCE, "zs-acme", "zs-inf-303")
    assert after["spec"]["replicas"] == 3
    assert after["spec"]["template"] == before["spec"]["template"]  # no rollout


@pytest.mark.asyncio
async def test_scale_down_marks_pods_on_leaving_nodes_then_unlabels(cluster: Cluster) -> None:
    for name in ("n1", "n2", "n3"):
        cluster.seed(NODE_RESOURCE, None, _node(name))
    await run(cluster.backend.apply, _pinned("n1", "n2", "n3"))
    cluster.seed(POD_RESOURCE, "zs-acme", _pod("zs-inf-303-a", 303, "n1"))
    cluster.seed(POD_RESOURCE, "zs-acme", _pod("zs-inf-303-b", 303, "n2"))
    cluster.seed(POD_RESOURCE, "zs-acme", _pod("zs-inf-303-c", 303, "n3"))
    cluster.seed(POD_RESOURCE, "zs-acme", _pod("zs-inf-404-a", 404, "n3"))  # another job's
    mark = len(_since(cluster))
    await run(cluster.backend.scale, 303, "acme", 2, ("n1", "n2"))

    assert _requests(cluster, mark) == [
        ("GET", "/api/v1/nodes"),
        ("GET", "/api/v1/namespaces/zs-acme/pods"),
        ("PATCH", "/api/v1/namespaces/zs-acme/pods/zs-inf-303-c"),
        ("PATCH", SCALE_PATH),
        ("PATCH", "/api/v1/nodes/n3"),
    ]
    pods_list = next(r for r in _since(cluster, mark) if r.url.path.endswith("/pods"))
    assert pods_list.params["labelSelector"] == "zhisuan.io/job-id=303"
    pod_patch = next(r for r in _since(cluster, mark) if r.url.path.endswith("zs-inf-303-c"))
    assert pod_patch.data == {"metadata": {"annotations": {COST: "-1000"}}}
    assert pod_patch.headers["Content-Type"] == "application/merge-patch+json"
    assert pod_patch.params["fieldManager"] == "zhisuan"
    unlabel = [r for r in _since(cluster, mark) if r.method == "PATCH"][-1]
    assert unlabel.data == {"metadata": {"labels": {KEY: None}}}

    marked = cluster.obj(POD_RESOURCE, "zs-acme", "zs-inf-303-c")
    assert marked["metadata"]["annotations"] == {COST: "-1000"}
    for untouched in ("zs-inf-303-a", "zs-inf-303-b", "zs-inf-404-a"):
        assert "annotations" not in cluster.obj(POD_RESOURCE, "zs-acme", untouched)["metadata"]
    assert cluster.obj(DEPLOY_RESOURCE, "zs-acme", "zs-inf-303")["spec"]["replicas"] == 2
    assert _labels(cluster, "n3") == {}
    assert _labels(cluster, "n1") == _labels(cluster, "n2") == {KEY: "true"}

    # A repeat (a retry after success) changes nothing but the absolute count.
    mark = len(_since(cluster))
    await run(cluster.backend.scale, 303, "acme", 2, ("n1", "n2"))
    assert _requests(cluster, mark) == [("GET", "/api/v1/nodes"), ("PATCH", SCALE_PATH)]


@pytest.mark.asyncio
async def test_scale_down_keeps_labels_when_the_scale_patch_fails(cluster: Cluster) -> None:
    """The label leaves only after the count changed: a failed scale is retried with the
    leaving nodes still labelled (and found again as leaving)."""
    for name in ("n1", "n2"):
        cluster.seed(NODE_RESOURCE, None, _node(name, KEY))
    cluster.seed(POD_RESOURCE, "zs-acme", _pod("zs-inf-303-b", 303, "n2"))
    # nothing seeded at the scale path: the emulator answers 404
    with pytest.raises(NotFoundError):
        await run(cluster.backend.scale, 303, "acme", 1, ["n1"])
    assert _labels(cluster, "n2") == {KEY: "true"}
    assert ("PATCH", "/api/v1/nodes/n2") not in _writes(cluster)


@pytest.mark.asyncio
async def test_scale_without_nodes_is_one_patch(cluster: Cluster) -> None:
    cluster.seed(NODE_RESOURCE, None, _node("n1", KEY))
    await run(cluster.backend.apply, inference_spec())
    mark = len(_since(cluster))
    await run(cluster.backend.scale, 303, "acme", 4)
    assert _requests(cluster, mark) == [("PATCH", SCALE_PATH)]
    assert _labels(cluster, "n1") == {KEY: "true"}


# -- delete ---------------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_delete_removes_the_label_from_every_node(cluster: Cluster) -> None:
    cluster.seed(NODE_RESOURCE, None, _node("n1"))
    cluster.seed(NODE_RESOURCE, None, _node("n2"))
    cluster.seed(NODE_RESOURCE, None, _node("other", "serve.zhisuan.io/job-404"))
    await run(cluster.backend.apply, _pinned("n1"))
    await run(cluster.backend.scale, 303, "acme", 3, ["n1", "n2"])
    assert _labels(cluster, "n2") == {KEY: "true"}
    mark = len(_since(cluster))

    assert await run(cluster.backend.delete, 303, "acme", "inference") is True
    writes = _writes(cluster, mark)
    # objects first, labels after
    assert writes == [
        ("DELETE", "/apis/apps/v1/namespaces/zs-acme/deployments/zs-inf-303"),
        ("DELETE", "/api/v1/namespaces/zs-acme/services/zs-inf-303"),
        ("PATCH", "/api/v1/nodes/n1"),
        ("PATCH", "/api/v1/nodes/n2"),
    ]
    assert _labels(cluster, "n1") == _labels(cluster, "n2") == {}
    assert _labels(cluster, "other") == {"serve.zhisuan.io/job-404": "true"}
    # nothing left to delete, and no label left to remove
    mark = len(_since(cluster))
    assert await run(cluster.backend.delete, 303, "acme", "inference") is False
    assert [m for m, _ in _writes(cluster, mark)] == ["DELETE", "DELETE"]


@pytest.mark.asyncio
async def test_unlabelling_a_node_that_is_gone_is_ignored(cluster: Cluster) -> None:
    cluster.seed(NODE_RESOURCE, None, _node("gone", KEY))
    cluster.seed(NODE_RESOURCE, None, _node("n1", KEY))
    # The node disappears between the list and the patch.
    (
        cluster.kmock["patch", re.compile(r"/api/v1/nodes/gone(\?|$)")]
        << 404
        << status_body(404, "NotFound", 'nodes "gone" not found')
    )
    assert await run(cluster.backend.delete, 303, "acme", "inference") is False
    assert ("PATCH", "/api/v1/nodes/gone") in _writes(cluster)
    assert _labels(cluster, "n1") == {}


@pytest.mark.asyncio
async def test_scale_down_with_a_gone_node_still_scales(cluster: Cluster) -> None:
    await run(cluster.backend.apply, inference_spec())
    cluster.seed(NODE_RESOURCE, None, _node("n1", KEY))
    cluster.seed(NODE_RESOURCE, None, _node("gone", KEY))
    (
        cluster.kmock["patch", re.compile(r"/api/v1/nodes/gone(\?|$)")]
        << 404
        << status_body(404, "NotFound", 'nodes "gone" not found')
    )
    await run(cluster.backend.scale, 303, "acme", 1, ["n1"])
    assert cluster.obj(DEPLOY_RESOURCE, "zs-acme", "zs-inf-303")["spec"]["replicas"] == 1
    assert _labels(cluster, "n1") == {KEY: "true"}


# -- simulated ------------------------------------------------------------------------------------


def test_simulated_backend_records_the_serve_nodes() -> None:
    backend = SimulatedBackend(clock=lambda: 0.0)
    backend.apply(_pinned("n2", "n1"))
    assert backend.serve_nodes[303] == ("n1", "n2")
    backend.scale(303, "acme", 3, ["n3", "n1", "n3"])
    assert backend.serve_nodes[303] == ("n1", "n3")
    backend.scale(303, "acme", 2)  # no nodes: the set stays
    assert backend.serve_nodes[303] == ("n1", "n3")
    backend.delete(303, "acme", "inference")
    assert 303 not in backend.serve_nodes
