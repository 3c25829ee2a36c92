"""Node tokens reach the nodes: minted where missing and written into the agents' Secret over
HTTP (kmock, official client); rotation keeps the old token until the new one is used; the
DaemonSet mounts that Secret and stays a valid manifest."""

from __future__ import annotations

import base64
import io
import logging
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

import pytest
import yaml
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from apps.clusters.backends.base import TransientError
from apps.clusters.models import ClusterKind, Node
from apps.health import services
from apps.health import token_distribution as dist
from apps.health.models import NodeToken
from tests.factories import make_cluster, make_node, make_pool

from .conftest import REPO_ROOT, SECRET_RESOURCE, Cluster, status_body, validate_manifest
from .test_backend_http import run as _run

T = TypeVar("T")


async def run(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Off the emulator's event loop, closing the worker thread's database connection after
    (or the test database could not be dropped at the end)."""

    def call() -> T:
        try:
            return fn(*args, **kwargs)
        finally:
            connection.close()

    return await _run(call)


NS = dist.NAMESPACE
NAME = dist.SECRET_NAME
secrets_resource = ("", "v1", "secrets")


def _pool_nodes(count: int = 3) -> list[Node]:
    cluster = make_cluster()
    cluster.kind = ClusterKind.KUBERNETES
    cluster.save()
    pool = make_pool(cluster=cluster)
    return [make_node(pool=pool, name=f"gpu-{i:03d}") for i in range(count)]


def _secret_tokens(cluster: Cluster) -> dict[str, str]:
    data = cluster.obj(SECRET_RESOURCE, NS, NAME)["data"]
    return {key: base64.b64decode(value).decode() for key, value in data.items()}


def _writes(cluster: Cluster) -> list[tuple[str, Any]]:
    return [
        (r.method, r.data)
        for r in cluster.kmock
        if r.method in ("POST", "PATCH") and "/secrets" in r.url.path
    ]


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_first_distribution_creates_the_secret_then_only_fills_gaps(
    cluster: Cluster, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    store = dist.SecretStore(cluster.api_client)
    nodes = await run(_pool_nodes, 3)

    first = await run(dist.distribute, store, nodes)
    assert first.minted == ["gpu-000", "gpu-001", "gpu-002"] and first.kept == []
    tokens = _secret_tokens(cluster)
    assert sorted(tokens) == ["gpu-000", "gpu-001", "gpu-002"]
    for node in nodes:
        found = await run(services.node_for_token, tokens[node.name])
        assert found is not None and found.node_id == node.pk
    labels = cluster.obj(SECRET_RESOURCE, NS, NAME)["metadata"]["labels"]
    assert labels["app.kubernetes.io/managed-by"] == "zhisuan"
    assert [m for m, _ in _writes(cluster)] == ["POST"]

    # Again, with one node added and one token revoked: only those two are minted.
    extra = await run(make_node, pool=nodes[0].pool, name="gpu-003")
    revoked = await run(lambda: NodeToken.objects.get(node=nodes[1]))
    await run(services.revoke_node_token, token=revoked)
    second = await run(dist.distribute, store, [*nodes, extra])
    assert second.minted == ["gpu-001", "gpu-003"] and second.kept == ["gpu-000", "gpu-002"]
    method, body = _writes(cluster)[-1]
    assert method == "PATCH" and sorted(body["data"]) == ["gpu-001", "gpu-003"]
    after = _secret_tokens(cluster)
    assert after["gpu-000"] == tokens["gpu-000"] and after["gpu-001"] != tokens["gpu-001"]

    # Nothing to do: no write at all.
    third = await run(dist.distribute, store, [*nodes, extra])
    assert third.minted == [] and len(_writes(cluster)) == 2

    # No token ever reached a log record.
    text = "\n".join(r.getMessage() for r in caplog.records)
    for token in [*tokens.values(), *after.values()]:
        assert token not in text


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_rotation_overlaps_until_the_agent_uses_the_new_token(cluster: Cluster) -> None:
    store = dist.SecretStore(cluster.api_client)
    nodes = await run(_pool_nodes, 2)
    await run(dist.distribute, store, nodes)
    old = _secret_tokens(cluster)
    await run(services.node_for_token, old["gpu-000"])  # the agents are reporting

    rotated = await run(dist.distribute, store, nodes, rotate=True)
    assert rotated.minted == ["gpu-000", "gpu-001"] and rotated.superseded == 2
    new = _secret_tokens(cluster)
    assert new["gpu-000"] != old["gpu-000"]
    # Until the kubelet has updated the mounted file, the old token still works ...
    assert await run(services.node_for_token, old["gpu-000"]) is not None
    # ... and the first report with the new one retires it.
    assert await run(services.node_for_token, new["gpu-000"]) is not None
    assert await run(services.node_for_token, old["gpu-000"]) is None
    # gpu-001's agent has not switched yet, but the overlap has an end.
    assert await run(services.node_for_token, old["gpu-001"]) is not None
    await run(
        lambda: NodeToken.objects.filter(expires_at__isnull=False, revoked_at__isnull=True).update(
            expires_at=timezone.now() - timedelta(seconds=1)
        )
    )
    assert await run(services.node_for_token, old["gpu-001"]) is None
    assert await run(services.node_for_token, new["gpu-001"]) is not None


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_failed_write_leaves_no_token_minted(cluster: Cluster) -> None:
    store = dist.SecretStore(cluster.api_client)
    nodes = await run(_pool_nodes, 2)
    secrets = cluster.kmock.resource(*secrets_resource)
    cluster.kmock["create", secrets] << 503 << status_body(503, "ServiceUnavailable", "busy")
    with pytest.raises(TransientError):
        await run(dist.distribute, store, nodes)
    assert await run(NodeToken.objects.count) == 0


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_secret_created_meanwhile_is_patched(cluster: Cluster) -> None:
    # Another run created the Secret between our read (404) and our create (409).
    cluster.seed(
        SECRET_RESOURCE,
        NS,
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": NAME, "namespace": NS},
            "data": {"other-node": base64.b64encode(b"zsn_x_y").decode()},
        },
    )
    secrets = cluster.kmock.resource(*secrets_resource)
    cluster.kmock["get", secrets][:1] << 404 << status_body(404, "NotFound", "not yet")
    store = dist.SecretStore(cluster.api_client)
    nodes = await run(_pool_nodes, 1)
    result = await run(dist.distribute, store, nodes)
    assert result.minted == ["gpu-000"]
    assert [m for m, _ in _writes(cluster)] == ["POST", "PATCH"]
    assert sorted(_secret_tokens(cluster)) == ["gpu-000", "other-node"]


def test_the_daemonset_mounts_the_token_secret_and_names_the_node() -> None:
    path: Path = REPO_ROOT / "platform" / "agent" / "daemonset.yaml"
    daemonset = yaml.safe_load(path.read_text())
    validate_manifest(daemonset)
    pod = daemonset["spec"]["template"]["spec"]
    [agent] = pod["containers"]
    env = {e["name"]: e for e in agent["env"]}
    assert env["ZS_AGENT_NODE_NAME"]["valueFrom"] == {"fieldRef": {"fieldPath": "spec.nodeName"}}
    mount = next(m for m in agent["volumeMounts"] if m["name"] == "tokens")
    assert env["ZS_AGENT_TOKEN_DIR"]["value"] == mount["mountPath"]
    assert "subPath" not in mount  # a subPath mount would never see a rotated token
    volume = next(v for v in pod["volumes"] if v["name"] == "tokens")
    assert volume["secret"]["secretName"] == dist.SECRET_NAME
    assert daemonset["metadata"]["namespace"] == dist.NAMESPACE


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_the_management_command_distributes_and_prints_no_token(
    cluster: Cluster, tmp_path: Path
) -> None:
    config = tmp_path / "kubeconfig"
    config.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "k", "cluster": {"server": str(cluster.kmock.url)}}],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [{"name": "x", "context": {"cluster": "k", "user": "u"}}],
                "current-context": "x",
            }
        )
    )
    nodes = await run(_pool_nodes, 2)
    out = io.StringIO()
    await run(
        call_command,
        "distribute_node_tokens",
        "--pool",
        str(nodes[0].pool_id),
        "--kubeconfig",
        str(config),
        stdout=out,
    )
    tokens = _secret_tokens(cluster)
    assert sorted(tokens) == ["gpu-000", "gpu-001"]
    assert "2 minted (gpu-000, gpu-001), 0 kept" in out.getvalue()
    assert not any(token in out.getvalue() for token in tokens.values())
