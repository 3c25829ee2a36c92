"""Rollout and probe settings of an inference service reach its Deployment, and every variant
still validates strictly and passes Pod Security "restricted"."""

from __future__ import annotations

import pytest

from apps.clusters.backends.kubernetes.manifests import render_inference
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
    ],
)
def test_invalid_settings_are_refused(fields: dict[str, int | str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        InferenceSpec(**fields)  # type: ignore[arg-type]
