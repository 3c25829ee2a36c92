"""Rollout and probe settings of an inference service reach its Deployment, and every variant
still validates strictly and passes Pod Security "restricted"."""

from __future__ import annotations

import dataclasses

import pytest

from apps.clusters.backends.kubernetes.manifests import (
    ANNOTATION_PREEMPTABLE,
    ANNOTATION_REVISION,
    ANNOTATION_VOLCANO_QUEUE,
    render_inference,
)
from apps.clusters.backends.spec import InferenceSpec

from .conftest import inference_spec, pod_specs_of, restricted_violations, validate_manifest

CUSTOM = InferenceSpec(
    port=8080,
    replicas=2,
    readiness_path="/v1/models",
    liveness_path="/health",
    probe_initial_delay_s=45,
    probe_period_s=15,
    max_surge=2,
    max_unavailable=1,
    startup_timeout_s=600,
)


@pytest.mark.parametrize(
    "inference",
    [InferenceSpec(), CUSTOM, InferenceSpec(max_surge=0, max_unavailable=1, probe_period_s=1)],
    ids=["defaults", "custom", "no-surge"],
)
def test_every_variant_validates(inference: InferenceSpec) -> None:
    for manifest in render_inference(inference_spec(inference=inference)):
        validate_manifest(manifest)
        for pod_spec in pod_specs_of(manifest):
            assert restricted_violations(pod_spec) == []


def test_rollout_and_probes_come_from_the_settings() -> None:
    _service, deployment = render_inference(inference_spec(inference=CUSTOM))
    body = deployment["spec"]
    assert body["replicas"] == 2
    assert body["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": 2, "maxUnavailable": 1},
    }
    container = body["template"]["spec"]["containers"][0]
    assert container["ports"] == [{"name": "http", "containerPort": 8080, "protocol": "TCP"}]
    assert container["readinessProbe"] == {
        "httpGet": {"path": "/v1/models", "port": "http"},
        "initialDelaySeconds": 45,
        "periodSeconds": 15,
        "failureThreshold": 3,
    }
    assert container["livenessProbe"] == {
        "httpGet": {"path": "/health", "port": "http"},
        "initialDelaySeconds": 45,
        "periodSeconds": 15,
        "failureThreshold": 3,
    }
    # 600 s of model loading at one check every 15 s before liveness takes over
    assert container["startupProbe"] == {
        "httpGet": {"path": "/health", "port": "http"},
        "periodSeconds": 15,
        "failureThreshold": 40,
    }


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"max_surge": 0, "max_unavailable": 0}, "cannot both be 0"),
        ({"max_surge": -1}, "surge"),
        ({"liveness_path": "health"}, "liveness_path"),
        ({"probe_period_s": 0}, "probe_period_s"),
        ({"probe_initial_delay_s": -1}, "probe_initial_delay_s"),
        ({"startup_timeout_s": 5}, "startup_timeout_s"),
        ({"revision": 0}, "revision"),
    ],
)
def test_invalid_settings_are_refused(fields: dict[str, int | str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        InferenceSpec(**fields)  # type: ignore[arg-type]


def test_the_pod_template_carries_the_revision() -> None:
    _service, deployment = render_inference(inference_spec())
    annotations = deployment["spec"]["template"]["metadata"]["annotations"]
    assert annotations[ANNOTATION_REVISION] == "1"  # the default, as a string
    # added beside what the pod template already puts there
    assert {ANNOTATION_PREEMPTABLE, ANNOTATION_VOLCANO_QUEUE} <= set(annotations)
    # only on the pods: the Deployment's own metadata does not change with a revision
    assert ANNOTATION_REVISION not in deployment["metadata"]["annotations"]


def test_a_new_revision_changes_only_the_revision_annotation() -> None:
    _, first = render_inference(inference_spec(inference=CUSTOM))
    second_spec = inference_spec(inference=dataclasses.replace(CUSTOM, revision=7))
    service, second = render_inference(second_spec)
    for manifest in (service, second):
        validate_manifest(manifest)
    assert second["spec"]["template"]["metadata"]["annotations"][ANNOTATION_REVISION] == "7"
    second["spec"]["template"]["metadata"]["annotations"][ANNOTATION_REVISION] = "1"
    assert second == first


@pytest.mark.parametrize(("startup_timeout_s", "deadline"), [(900, 1200), (600, 900), (15, 315)])
def test_the_progress_deadline_allows_for_the_model_load(
    startup_timeout_s: int, deadline: int
) -> None:
    inference = dataclasses.replace(CUSTOM, startup_timeout_s=startup_timeout_s)
    _, deployment = render_inference(inference_spec(inference=inference))
    validate_manifest(deployment)
    assert deployment["spec"]["progressDeadlineSeconds"] == deadline
    # always longer than the slowest start the startup probe allows
    probe = deployment["spec"]["template"]["spec"]["containers"][0]["startupProbe"]
    assert deadline > probe["periodSeconds"] * probe["failureThreshold"]
