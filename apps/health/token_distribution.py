"""Getting node tokens onto the nodes: one Secret, one key per node name.

``distribute`` mints a token for every node that has no working one in the Secret and writes
the new ones into ``zhisuan-agent-tokens`` (namespace ``zhisuan-nodes``) through the
official client; the agent DaemonSet mounts that Secret and each agent reads the key named
after its node (``platform/agent/daemonset.yaml``). A key already holding a live token of its
node is kept, so running it again (after adding nodes, or from a schedule) mints only what is
missing.

Rotation (``rotate=True``) mints a new token for every node and overwrites its key. The old
token stays valid until the agent has reported once with the new one (``node_for_token``
then revokes it) and for ``overlap`` at the most: the kubelet refreshes mounted Secrets
within about a minute, and an agent that is down meanwhile must not lose its credential
before it could see the new one.

Why one Secret rather than one per node: a pod's Secret volume cannot be chosen by node name,
and RBAC cannot limit an agent to "its" Secret either. The cost is that root on one node can
read the other nodes' tokens; a node token can only post health reports (for its own node),
so the worst it can do is report false health for another node. Tokens never reach a log:
only node names and counts are reported.
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone
from kubernetes import client as k8s

from apps.accounts import tokens
from apps.accounts.models import User
from apps.clusters.backends.base import BackendError, NotFoundError
from apps.clusters.backends.kubernetes.backend import translate_error
from apps.clusters.backends.spec import LABEL_MANAGED_BY, MANAGED_BY_VALUE
from apps.clusters.models import Node
from apps.health import services
from apps.health.models import NodeToken

log = logging.getLogger(__name__)

NAMESPACE = "zhisuan-nodes"  # platform/agent/namespace.yaml
SECRET_NAME = "zhisuan-agent-tokens"  # noqa: S105 - a Secret object name
DEFAULT_OVERLAP = timedelta(hours=1)
MERGE_PATCH = "application/merge-patch+json"


@dataclass
class Distribution:
    minted: list[str] = field(default_factory=list)  # node names with a new token
    kept: list[str] = field(default_factory=list)  # node names whose key was already good
    superseded: int = 0  # old tokens now expiring (rotation)


def _token_for(plaintext: str, node: Node) -> NodeToken | None:
    """The live token of ``node`` that ``plaintext`` is, without marking it used."""
    if not plaintext.startswith(services.NODE_TOKEN_PREFIX):
        return None
    parts = tokens.split(tokens.TOKEN_PREFIX + plaintext[len(services.NODE_TOKEN_PREFIX) :])
    if parts is None:
        return None
    token = NodeToken.objects.filter(prefix=parts[0], node=node).first()
    if token is None or not services.token_is_live(token, timezone.now()):
        return None
    return token if tokens.matches(parts[1], token.digest) else None


class SecretStore:
    """The token Secret through the official client (reads, creates, merge patches)."""

    def __init__(
        self,
        api_client: Any,
        *,
        namespace: str = NAMESPACE,
        name: str = SECRET_NAME,
        request_timeout: tuple[float, float] = (5.0, 30.0),
    ) -> None:
        self._core = k8s.CoreV1Api(api_client)
        self.namespace = namespace
        self.name = name
        self._timeout = request_timeout

    def _call(self, what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        kwargs["_request_timeout"] = self._timeout
        kwargs["_preload_content"] = False
        try:
            response = fn(*args, **kwargs)
            try:
                return json.loads(response.data or b"{}")
            finally:
                response.release_conn()
        except Exception as exc:
            raise translate_error(exc, f"{what} Secret {self.namespace}/{self.name}") from exc

    def read(self) -> dict[str, str] | None:
        """Node name -> token, or None when the Secret does not exist."""
        try:
            body = self._call("get", self._core.read_namespaced_secret, self.name, self.namespace)
        except NotFoundError:
            return None
        data = body.get("data") or {}
        return {key: base64.b64decode(value).decode() for key, value in data.items()}

    def write(self, values: dict[str, str], *, exists: bool) -> None:
        """Set these keys, leaving the others as they are."""
        data = {key: base64.b64encode(value.encode()).decode() for key, value in values.items()}
        if not exists:
            body = {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {
                    "name": self.name,
                    "namespace": self.namespace,
                    "labels": {
                        LABEL_MANAGED_BY: MANAGED_BY_VALUE,
                        "app.kubernetes.io/name": "zhisuan-agent",
                    },
                },
                "type": "Opaque",
                "data": data,
            }
            try:
                self._call(
                    "create",
                    self._core.create_namespaced_secret,
                    self.namespace,
                    body,
                    field_manager="zhisuan",
                    field_validation="Strict",
                )
                return
            except BackendError as exc:
                if exc.status != 409:  # someone created it meanwhile: patch it instead
                    raise
        self._call(
            "patch",
            self._core.patch_namespaced_secret,
            self.name,
            self.namespace,
            {"data": data},
            field_manager="zhisuan",
            _content_type=MERGE_PATCH,
        )


def distribute(
    store: SecretStore,
    nodes: Iterable[Node],
    *,
    actor: User | None = None,
    rotate: bool = False,
    overlap: timedelta = DEFAULT_OVERLAP,
) -> Distribution:
    """Mint and write the tokens the nodes lack (all of them with ``rotate``).

    The Secret is written inside the transaction that mints: if the write fails, no token
    is left minted that no agent could ever read."""
    result = Distribution()
    with transaction.atomic():
        current = store.read()
        fresh: dict[str, str] = {}
        for node in nodes:
            old = _token_for((current or {}).get(node.name, ""), node)
            if old is not None and not rotate:
                result.kept.append(node.name)
                continue
            if old is not None:
                NodeToken.objects.filter(pk=old.pk).update(expires_at=timezone.now() + overlap)
                result.superseded += 1
            _, plaintext = services.mint_node_token(node=node, actor=actor)
            fresh[node.name] = plaintext
            result.minted.append(node.name)
        if fresh:
            store.write(fresh, exists=current is not None)
    log.info(
        "node tokens in %s/%s: minted for %s, kept %d, superseded %d",
        store.namespace,
        store.name,
        ", ".join(result.minted) or "none",
        len(result.kept),
        result.superseded,
    )
    return result
