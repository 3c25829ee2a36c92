"""``scale`` over HTTP against kmock: the PATCH of the Deployment's scale subresource."""

from __future__ import annotations

import re
from typing import Any

import pytest

from apps.clusters.backends.base import NotFoundError, TransientError
from apps.clusters.backends.simulated import SimulatedBackend

from .conftest import DEPLOY_RESOURCE, Cluster, inference_spec, status_body
from .test_backend_http import run

SCALE_PATH = "/apis/apps/v1/namespaces/zs-acme/deployments/zs-inf-303/scale"
SCALE = re.compile(re.escape(SCALE_PATH) + r"(\?|$)")


def _seed_deployment(cluster: Cluster, replicas: int = 1) -> None:
    # The emulator applies a PATCH to its stored object before any reaction answers, so the
    # Deployment must exist for the canned replies below to be reached.
    cluster.seed(
        DEPLOY_RESOURCE,
        "zs-acme",
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "zs-inf-303", "namespace": "zs-acme"},
            "spec": {"replicas": replicas},
        },
    )


def _scale_reply(replicas: int) -> dict[str, Any]:
    return {
        "apiVersion": "autoscaling/v1",
        "kind": "Scale",
        "metadata": {"name": "zs-inf-303", "namespace": "zs-acme"},
        "spec": {"replicas": replicas},
        "status": {"replicas": 1},
    }


@pytest.mark.asyncio
async def test_scale_patches_the_scale_subresource(cluster: Cluster) -> None:
    _seed_deployment(cluster)
    cluster.kmock[SCALE] << 200 << _scale_reply(4)
    await run(cluster.backend.scale, 303, "acme", 4)
    patches = [r for r in cluster.kmock if r.method == "PATCH"]
    assert [r.url.path for r in patches] == [SCALE_PATH]
    assert patches[0].headers["Content-Type"] == "application/merge-patch+json"
    assert patches[0].data == {"spec": {"replicas": 4}}
    assert patches[0].params["fieldManager"] == "zhisuan"
    # nothing else is written: no rollout of the pod template
    assert [r.method for r in cluster.kmock] == ["PATCH"]


@pytest.mark.asyncio
async def test_scale_to_zero_is_sent_as_zero(cluster: Cluster) -> None:
    _seed_deployment(cluster)
    cluster.kmock[SCALE] << 200 << _scale_reply(0)
    await run(cluster.backend.scale, 303, "acme", 0)
    patch = next(r for r in cluster.kmock if r.method == "PATCH")
    assert patch.data == {"spec": {"replicas": 0}}


@pytest.mark.asyncio
async def test_scale_of_a_missing_deployment_is_not_found(cluster: Cluster) -> None:
    # nothing seeded: the emulator answers 404 itself
    with pytest.raises(NotFoundError) as caught:
        await run(cluster.backend.scale, 303, "acme", 2)
    assert caught.value.status == 404


@pytest.mark.asyncio
async def test_scale_429_is_transient_with_retry_after(cluster: Cluster) -> None:
    _seed_deployment(cluster)
    (
        cluster.kmock[SCALE]
        << 429
        << {"Retry-After": "5"}
        << status_body(429, "TooManyRequests", "slow down")
    )
    with pytest.raises(TransientError) as caught:
        await run(cluster.backend.scale, 303, "acme", 2)
    assert caught.value.status == 429
    assert caught.value.retry_after_s == 5.0


@pytest.mark.parametrize("code", [409, 500, 503])
@pytest.mark.asyncio
async def test_scale_conflict_and_server_errors_are_transient(cluster: Cluster, code: int) -> None:
    _seed_deployment(cluster)
    cluster.kmock[SCALE] << code << status_body(code, "Error", "try again")
    with pytest.raises(TransientError) as caught:
        await run(cluster.backend.scale, 303, "acme", 2)
    assert caught.value.status == code


@pytest.mark.asyncio
async def test_scale_changes_the_replicas_of_an_applied_deployment(cluster: Cluster) -> None:
    """Against the emulator's own object store: the Deployment created by ``apply`` ends up
    with the new count and an unchanged pod template."""
    await run(cluster.backend.apply, inference_spec())
    before = cluster.obj(DEPLOY_RESOURCE, "zs-acme", "zs-inf-303")
    await run(cluster.backend.scale, 303, "acme", 5)
    after = cluster.obj(DEPLOY_RESOURCE, "zs-acme", "zs-inf-303")
    assert before["spec"]["replicas"] == 3
    assert after["spec"]["replicas"] == 5
    assert after["spec"]["template"] == before["spec"]["template"]


def test_simulated_scale_is_reported_by_status() -> None:
    now = [0.0]
    backend = SimulatedBackend(clock=lambda: now[0], startup_s=1.0)
    backend.apply(inference_spec())
    now[0] = 2.0
    backend.scale(303, "acme", 4)
    backend.scale(303, "acme", 4)  # idempotent: no second event
    statuses, _ = backend.list_status()
    assert statuses[0].replicas_desired == 4
    assert statuses[0].replicas_running == 4
    with backend.watch("", 1.0) as stream:
        events = list(stream)
    # the repeated scale emitted nothing; the one change carries the new count
    assert [(e.type, e.status.replicas_desired) for e in events] == [
        ("added", 1),
        ("modified", 4),
    ]
    with pytest.raises(NotFoundError):
        backend.scale(999, "acme", 1)
    with pytest.raises(NotFoundError):
        backend.scale(303, "other", 1)
