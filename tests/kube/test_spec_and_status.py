"""Plain specs refuse invalid input; cluster states map onto our phases; errors are typed."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
import urllib3
from kubernetes.client import ApiException

from apps.clusters.backends.base import (
    ClusterBackend,
    ConflictError,
    NotFoundError,
    PermanentError,
    ResyncRequired,
    TransientError,
)
from apps.clusters.backends.kubernetes.backend import (
    KubernetesBackend,
    decode_cursor,
    desired_patch,
    encode_cursor,
    translate_error,
)
from apps.clusters.backends.kubernetes.manifests import workload_labels
from apps.clusters.backends.kubernetes.status import status_from_object
from apps.clusters.backends.spec import (
    InferenceSpec,
    LeafSwitch,
    NetworkTopology,
    NodeInventory,
    NotebookSpec,
    ReplicaGroup,
    ScalableUnit,
    Spine,
    VolumeMount,
    label_safe,
    namespace_for,
    priority_class_name,
    workload_name,
)

from .conftest import inference_spec, make_api_client, notebook_spec, training_spec

# -- specs -----------------------------------------------------------------------------------------


def test_any_pool_name_becomes_a_valid_label() -> None:
    spec = training_spec(pool="A800 训练 pool (east)")
    label = workload_labels(spec)["zhisuan.io/pool"]
    assert label == "A800-pool-east"
    assert label_safe("---") == ""
    with pytest.raises(ValueError, match="pool"):
        training_spec(pool="  ")


def test_names_derive_from_ids() -> None:
    assert namespace_for("acme") == "zs-acme"
    assert workload_name(7, "training") == "zs-train-7"
    assert workload_name(7, "notebook") == "zs-nb-7"
    assert workload_name(7, "inference") == "zs-inf-7"
    assert priority_class_name(0) == "zhisuan-p0"
    spec = training_spec()
    assert (spec.namespace, spec.object_name, spec.gang_size) == ("zs-acme", "zs-train-101", 4)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"job_id": 0}, "job_id"),
        ({"tenant": "Acme_Corp"}, "tenant"),
        ({"tenant": "a" * 61}, "tenant"),
        ({"kind": "batch"}, "kind"),
        ({"priority": 6}, "priority"),
        ({"priority": -1}, "priority"),
        ({"queue": "Not A Queue"}, "queue"),
        ({"replica_groups": ()}, "at least one"),
        ({"topology_mode": "strict"}, "topology"),
        ({"topology_highest_tier": 0}, "tier"),
        ({"max_retry": -1}, "max_retry"),
        ({"labels": {"bad key!": "x"}}, "label key"),
        ({"labels": {"team": "a b"}}, "label value"),
        ({"labels": {"app.kubernetes.io/managed-by": "me"}}, "reserved"),
        ({"notebook": NotebookSpec(flavor="jupyter", token="x" * 16)}, "only notebooks"),
        ({"inference": InferenceSpec()}, "only inference"),
    ],
)
def test_workload_spec_refuses_invalid_fields(overrides: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        training_spec(**overrides)


def test_duplicate_group_and_volume_names_are_refused() -> None:
    group = ReplicaGroup(name="worker", replicas=1, image="x")
    with pytest.raises(ValueError, match="unique"):
        training_spec(replica_groups=(group, group))
    volume = VolumeMount(name="data", claim_name="c", mount_path="/data")
    with pytest.raises(ValueError, match="unique"):
        training_spec(volumes=(volume, volume))


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"name": "Worker"}, "group name"),
        ({"replicas": 0}, "replicas"),
        ({"accelerators": -1}, "accelerators"),
        ({"accelerator_milli": 1000}, "accelerator_milli"),
        ({"accelerator_milli": 500, "accelerators": 1}, "fractional"),
        ({"accelerator_resource": "not a resource"}, "accelerator resource"),
        ({"cpu_milli": 0}, "cpu_milli"),
        ({"memory_mib": 0}, "memory_mib"),
        ({"rdma_nics": -1}, "rdma_nics"),
        ({"env": {"1BAD": "x"}}, "env var"),
        ({"node_names": ("Node_1",)}, "node name"),
    ],
)
def test_replica_group_refuses_invalid_fields(fields: dict[str, Any], message: str) -> None:
    base: dict[str, Any] = {"name": "worker", "replicas": 1, "image": "x"}
    with pytest.raises(ValueError, match=message):
        ReplicaGroup(**{**base, **fields})


def test_volume_notebook_inference_validation() -> None:
    with pytest.raises(ValueError, match="absolute"):
        VolumeMount(name="d", claim_name="c", mount_path="data")
    with pytest.raises(ValueError, match="token"):
        NotebookSpec(flavor="jupyter", token="short")
    with pytest.raises(ValueError, match="flavor"):
        NotebookSpec(flavor="emacs", token="x" * 16)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="port"):
        InferenceSpec(port=0)
    with pytest.raises(ValueError, match="readiness"):
        InferenceSpec(readiness_path="health")
    with pytest.raises(ValueError, match="revision"):
        InferenceSpec(revision=0)
    assert InferenceSpec().revision == 1
    assert "x" * 16 not in repr(NotebookSpec(flavor="jupyter", token="x" * 16))


def test_kind_specific_requirements() -> None:
    with pytest.raises(ValueError, match="NotebookSpec"):
        notebook_spec(notebook=None)
    with pytest.raises(ValueError, match="one replica"):
        notebook_spec(
            replica_groups=(ReplicaGroup(name="notebook", replicas=2, image="x"),),
        )
    with pytest.raises(ValueError, match="InferenceSpec"):
        inference_spec(inference=None)


def test_topology_refuses_a_node_under_two_leaves() -> None:
    with pytest.raises(ValueError, match="two leaves"):
        NetworkTopology(
            spines=(
                Spine(
                    "s",
                    (ScalableUnit("u", (LeafSwitch("a", ("n1",)), LeafSwitch("b", ("n1",)))),),
                ),
            )
        )


def test_node_inventory_counts() -> None:
    node = NodeInventory(
        name="n",
        labels={},
        capacity={"nvidia.com/gpu": "8", "memory": "2Ti"},
        allocatable={"nvidia.com/gpu": "7"},
        unschedulable=False,
        ready=True,
    )
    assert node.allocatable_count("nvidia.com/gpu") == 7
    assert node.capacity_count("nvidia.com/gpu") == 8
    assert node.capacity_count("memory") == 0
    assert node.allocatable_count("rdma/hca") == 0


def test_the_backend_satisfies_the_protocol() -> None:
    api_client = make_api_client("http://127.0.0.1:1")
    try:
        assert isinstance(KubernetesBackend(api_client), ClusterBackend)
    finally:
        api_client.close()


def test_specs_import_neither_django_nor_the_kubernetes_client() -> None:
    code = (
        "import sys, apps.clusters.backends as b; "
        "assert 'django' not in sys.modules, 'django'; "
        "assert 'kubernetes' not in sys.modules, 'kubernetes'; "
        "print(b.WorkloadSpec.__name__)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "WorkloadSpec"


# -- status mapping --------------------------------------------------------------------------------


def _job(phase: str | None, **status: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "metadata": {
            "name": "zs-train-1",
            "namespace": "zs-acme",
            "resourceVersion": "9",
            "labels": {"app.kubernetes.io/managed-by": "zhisuan", "zhisuan.io/job-id": "1"},
        },
        "spec": {"tasks": [{"replicas": 2}, {"replicas": 2}]},
    }
    if phase is not None:
        body["status"] = {"state": {"phase": phase}, **status}
    return body


@pytest.mark.parametrize(
    ("phase", "expected"),
    [
        (None, "pending"),
        ("Pending", "pending"),
        ("Restarting", "pending"),
        ("Running", "running"),
        ("Completing", "running"),
        ("Completed", "succeeded"),
        ("Failed", "failed"),
        ("Aborted", "failed"),
        ("Terminated", "failed"),
        ("Aborting", "unknown"),
        ("Terminating", "unknown"),
        ("SomethingNew", "unknown"),
    ],
)
def test_volcano_phases_map_onto_ours(phase: str | None, expected: str) -> None:
    status = status_from_object("training", _job(phase))
    assert status is not None
    assert status.phase == expected
    assert status.replicas_desired == 4


def test_restarting_job_reports_its_retries() -> None:
    status = status_from_object("training", _job("Restarting", retryCount=2, pending=4))
    assert status is not None
    assert status.message == "Restarting: retry 2"
    assert (status.retry_count, status.replicas_pending) == (2, 4)


def test_objects_without_our_labels_have_no_status() -> None:
    foreign = _job("Running")
    foreign["metadata"]["labels"] = {"zhisuan.io/job-id": "1"}
    assert status_from_object("training", foreign) is None
    bad_id = _job("Running")
    bad_id["metadata"]["labels"]["zhisuan.io/job-id"] = "one"
    assert status_from_object("training", bad_id) is None


def test_deployment_past_its_progress_deadline_is_failed() -> None:
    deployment = {
        "metadata": _job(None)["metadata"],
        "spec": {"replicas": 2},
        "status": {
            "readyReplicas": 0,
            "conditions": [
                {
                    "type": "Progressing",
                    "status": "False",
                    "reason": "ProgressDeadlineExceeded",
                    "message": "ReplicaSet has timed out progressing.",
                }
            ],
        },
    }
    status = status_from_object("inference", deployment)
    assert status is not None
    assert (status.phase, status.message) == ("failed", "ReplicaSet has timed out progressing.")
    assert (status.rollout_failed, status.rolled_out) == (False, False)


def _deployment(
    status: dict[str, Any],
    *,
    generation: int | None = 3,
    wanted: int = 2,
    revision: str | None = "4",
) -> dict[str, Any]:
    """A Deployment of ``wanted`` replicas (spec.replicas) with ``status`` as given."""
    metadata = dict(_job(None)["metadata"])
    if generation is not None:
        metadata["generation"] = generation
    template: dict[str, Any] = {"metadata": {"annotations": {"volcano.sh/preemptable": "false"}}}
    if revision is not None:
        template["metadata"]["annotations"]["serve.zhisuan.io/revision"] = revision
    return {
        "metadata": metadata,
        "spec": {"replicas": wanted, "template": template},
        "status": status,
    }


def test_deployment_mid_rollout_reports_its_progress() -> None:
    # 2 wanted, 3 pods (one new, two old), 2 available; the controller saw generation 3
    deployment = _deployment(
        {
            "observedGeneration": 3,
            "replicas": 3,
            "updatedReplicas": 1,
            "readyReplicas": 2,
            "availableReplicas": 2,
        }
    )
    status = status_from_object("inference", deployment)
    assert status is not None
    assert (status.phase, status.revision, status.replicas_updated) == ("running", 4, 1)
    assert (status.rolled_out, status.rollout_failed) == (False, False)
    assert (status.replicas_desired, status.replicas_running) == (2, 2)


_DONE = {
    "observedGeneration": 3,
    "replicas": 2,
    "updatedReplicas": 2,
    "readyReplicas": 2,
    "availableReplicas": 2,
}


def test_deployment_rolled_out() -> None:
    status = status_from_object("inference", _deployment(_DONE))
    assert status is not None
    assert (status.phase, status.revision, status.replicas_updated) == ("running", 4, 2)
    assert (status.rolled_out, status.rollout_failed) == (True, False)


@pytest.mark.parametrize(
    "change",
    [
        {"observedGeneration": 2},  # the controller has not seen the newest spec yet
        {"replicas": 3},  # an old pod is still there
        {"updatedReplicas": 1},
        {"availableReplicas": 1},  # a new pod is not available yet
    ],
    ids=["generation-lags", "old-pod-left", "not-all-updated", "not-all-available"],
)
def test_deployment_not_rolled_out(change: dict[str, int]) -> None:
    status = status_from_object("inference", _deployment({**_DONE, **change}))
    assert status is not None
    assert status.rolled_out is False


def test_deployment_missing_numbers_count_as_zero() -> None:
    # just created: nothing observed or counted yet, and no revision annotation
    status = status_from_object("inference", _deployment({}, revision=None))
    assert status is not None
    assert (status.phase, status.revision, status.replicas_updated) == ("pending", 0, 0)
    assert status.rolled_out is False
    # no generation (0) and nothing wanted: nothing to roll
    empty = status_from_object("inference", _deployment({}, generation=None, wanted=0))
    assert empty is not None and empty.rolled_out is True


@pytest.mark.parametrize("raw", ["", "four", "-1", "1.5", "\u0664"])
def test_an_unreadable_revision_is_zero(raw: str) -> None:
    status = status_from_object("inference", _deployment(_DONE, revision=raw))
    assert status is not None and status.revision == 0


def test_stuck_rollout_with_ready_replicas_keeps_running() -> None:
    deployment = _deployment(
        {
            "observedGeneration": 3,
            "replicas": 3,
            "updatedReplicas": 1,
            "readyReplicas": 2,
            "availableReplicas": 2,
            "conditions": [
                {
                    "type": "Progressing",
                    "status": "False",
                    "reason": "ProgressDeadlineExceeded",
                    "message": 'ReplicaSet "zs-inf-1-5d9c" has timed out progressing.',
                }
            ],
        }
    )
    status = status_from_object("inference", deployment)
    assert status is not None
    assert (status.phase, status.rollout_failed, status.rolled_out) == ("running", True, False)
    assert status.message == 'ReplicaSet "zs-inf-1-5d9c" has timed out progressing.'
    assert (status.revision, status.replicas_running) == (4, 2)


def test_other_kinds_keep_the_rollout_defaults() -> None:
    job = status_from_object("training", _job("Running"))
    sts = {"metadata": _job(None)["metadata"], "spec": {"replicas": 1}, "status": {}}
    notebook = status_from_object("notebook", sts)
    for status in (job, notebook):
        assert status is not None
        assert (status.revision, status.replicas_updated) == (0, 0)
        assert (status.rolled_out, status.rollout_failed) == (True, False)


def test_the_job_spec_revision_reaches_the_inference_spec() -> None:
    from apps.jobs.workload import _inference

    assert _inference({"revision": 3, "port": "8080"}, 2) == InferenceSpec(
        port=8080, replicas=2, revision=3
    )
    assert _inference({}, 1).revision == 1  # jobs stored before revisions: the first
    with pytest.raises(ValueError, match="revision"):
        _inference({"revision": 0}, 1)


def test_statefulset_ready_is_running() -> None:
    sts = {"metadata": _job(None)["metadata"], "spec": {"replicas": 1}, "status": {}}
    status = status_from_object("notebook", sts)
    assert status is not None and status.phase == "pending"
    sts["status"] = {"readyReplicas": 1}
    status = status_from_object("notebook", sts)
    assert status is not None
    assert (status.phase, status.replicas_running, status.message) == (
        "running",
        1,
        "1/1 replicas ready",
    )


# -- errors, cursors, patches ----------------------------------------------------------------------


def _api_exception(status: int, headers: dict[str, str] | None = None, body: str = "") -> Any:
    exc = ApiException(status=status, reason="x")
    exc.headers = headers or {}
    exc.body = body
    return exc


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (400, PermanentError),
        (401, PermanentError),
        (403, PermanentError),
        (404, NotFoundError),
        (409, TransientError),
        (410, ResyncRequired),
        (422, PermanentError),
        (408, TransientError),
        (429, TransientError),
        (500, TransientError),
        (503, TransientError),
        (504, TransientError),
    ],
)
def test_status_codes_map_to_typed_errors(status: int, expected: type[Exception]) -> None:
    error = translate_error(_api_exception(status), "op")
    assert type(error) is expected
    assert error.status == status


def test_transport_failures_are_transient() -> None:
    for exc in (
        urllib3.exceptions.ReadTimeoutError(None, "/", "read timed out"),  # type: ignore[arg-type]
        urllib3.exceptions.ProtocolError("Connection aborted.", ConnectionResetError()),
        ConnectionResetError(),
        TimeoutError(),
    ):
        assert isinstance(translate_error(exc, "op"), TransientError)


def test_retry_after_parsing() -> None:
    assert translate_error(_api_exception(429, {"Retry-After": "12"}), "op").retry_after_s == 12  # type: ignore[attr-defined]
    assert translate_error(_api_exception(503, {"Retry-After": "soon"}), "op").retry_after_s is None  # type: ignore[attr-defined]
    past = "Wed, 21 Oct 2015 07:28:00 GMT"
    assert translate_error(_api_exception(429, {"Retry-After": past}), "op").retry_after_s == 0  # type: ignore[attr-defined]


def test_conflict_error_is_permanent() -> None:
    assert issubclass(ConflictError, PermanentError)
    assert not issubclass(ConflictError, TransientError)


def test_cursor_round_trip() -> None:
    cursor = encode_cursor({"jobs": "10", "statefulsets": "20", "deployments": ""})
    assert decode_cursor(cursor) == {"jobs": "10", "statefulsets": "20"}
    assert decode_cursor("") == {}
    for bad in ("garbage", "other=1"):
        with pytest.raises(ResyncRequired):
            decode_cursor(bad)


def test_desired_patch_touches_only_what_differs() -> None:
    existing = {
        "metadata": {"labels": {"a": "1", "foreign": "x"}, "uid": "u"},
        "spec": {
            "hard": {"cpu": "8", "requests.nvidia.com/gpu": "4"},
            "weight": 1,
            "dequeueStrategy": "traverse",  # defaulted by the server: left alone
        },
        "status": {"used": {}},
    }
    desired = {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"labels": {"a": "1"}},
        "spec": {"hard": {"requests.nvidia.com/gpu": "8"}, "weight": 1},
    }
    assert desired_patch(existing, desired) == {
        "spec": {"hard": {"requests.nvidia.com/gpu": "8", "cpu": None}}
    }
    assert desired_patch(existing, {"metadata": {"labels": {"a": "2"}}}) == {
        "metadata": {"labels": {"a": "2"}}
    }
    same = {"metadata": {"labels": {"a": "1"}}, "spec": {"weight": 1}}
    assert desired_patch(existing, same) == {}


def test_an_object_being_deleted_says_so() -> None:
    job = _job("Running")
    job["metadata"]["deletionTimestamp"] = "2026-11-29T00:00:00Z"
    status = status_from_object("training", job)
    assert status is not None
    assert (status.phase, status.message) == ("running", "being deleted; Running")


def test_an_image_is_required_except_for_notebooks() -> None:
    with pytest.raises(ValueError, match="image"):
        training_spec(replica_groups=(ReplicaGroup(name="worker", replicas=1, image=""),))
    assert notebook_spec().replica_groups[0].image == ""


def test_a_past_deadline_the_controller_has_not_seen_past_is_not_a_failed_rollout() -> None:
    """Right after a new template (a rollback) is patched in, the status still carries the
    previous rollout's deadline until the controller observes the new generation."""
    deployment = _deployment(
        {
            "observedGeneration": 2,  # the template is at generation 3
            "replicas": 2,
            "updatedReplicas": 0,
            "readyReplicas": 2,
            "availableReplicas": 2,
            "conditions": [
                {
                    "type": "Progressing",
                    "status": "False",
                    "reason": "ProgressDeadlineExceeded",
                    "message": "timed out",
                }
            ],
        }
    )
    status = status_from_object("inference", deployment)
    assert status is not None
    assert (status.phase, status.rollout_failed, status.rolled_out) == ("running", False, False)
