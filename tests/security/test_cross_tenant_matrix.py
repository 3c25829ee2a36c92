"""Cross-tenant matrix: every path x method of the committed OpenAPI schema, as every role of
tenant A, aimed at tenant B's real objects.

The schema drives the matrix, so a new endpoint is probed as soon as it is in the schema; one
whose path names an object kind this file has no fixture for fails the completeness test until
someone adds it (below, ``COLLECTION_KEY`` and ``POLICY``)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from rest_framework.test import APIClient

from apps.accounts.models import ApiToken
from apps.governance.models import IdleFlag, IdlePolicy, Notification
from apps.inference.models import InferenceService
from apps.jobs.models import Job
from apps.quotas.models import Quota
from apps.runs.models import Run
from apps.sweeps.models import Sweep
from apps.tenancy.models import Membership, Project, Role
from tests.conftest import World

from .conftest import Foreign

pytestmark = pytest.mark.django_db

SCHEMA = Path(__file__).resolve().parents[2] / "openapi" / "schema.yaml"
METHODS = ("get", "post", "put", "patch", "delete")

# The object a path's {id} names, by the collection segment in front of it.
COLLECTION_KEY = {
    "clusters": "cluster", "alerts": "alert", "incidents": "incident",
    "node-tokens": "node_token", "nodes": "node", "probe-runs": "probe_run",
    "receivers": "receiver", "rules": "rule", "pools": "pool", "quotas": "quota",
    "audit": "audit", "efficiency": "efficiency", "flags": "flag",
    "notifications": "notification", "services": "inference_service", "jobs": "job",
    "members": "member", "projects": "project", "runs": "run", "usage": "usage",
    "tokens": "token", "what-if": "what_if", "sweeps": "sweep", "users": "user",
}  # fmt: skip

# What a tenant user (not a platform admin) may get from a path outside /tenants/{tenant}/.
#   denied:   platform-admin only; 403 (or 404), never data.
#   foreign:  names another user's or tenant's object; 404 (403 allowed for writes).
#   readable: platform-wide facts every user may read; any non-5xx, but no B data inside.
#   own:      acts on the caller's own things (own token, own session); no B data inside.
POLICY: dict[tuple[str, str], str] = {
    ("get", "/api/v1/audit/"): "denied",
    ("post", "/api/v1/auth/login/"): "own",
    ("post", "/api/v1/auth/logout/"): "own",
    ("get", "/api/v1/auth/session/"): "own",
    ("get", "/api/v1/auth/profile/"): "own",
    ("patch", "/api/v1/auth/profile/"): "own",
    ("post", "/api/v1/auth/password/"): "own",
    ("get", "/api/v1/auth/providers/"): "readable",
    ("get", "/api/v1/clusters/"): "readable",
    ("post", "/api/v1/clusters/"): "denied",
    ("get", "/api/v1/clusters/{id}/"): "readable",
    ("put", "/api/v1/clusters/{id}/"): "denied",
    ("patch", "/api/v1/clusters/{id}/"): "denied",
    ("delete", "/api/v1/clusters/{id}/"): "denied",
    ("get", "/api/v1/governance/default-policy/"): "readable",
    ("put", "/api/v1/governance/default-policy/"): "denied",
    ("post", "/api/v1/health/report/"): "denied",
    ("get", "/api/v1/overview/"): "readable",
    ("get", "/api/v1/pools/"): "readable",
    ("get", "/api/v1/pools/{id}/"): "readable",
    ("get", "/api/v1/pools/{id}/queue/"): "readable",
    ("get", "/api/v1/pools/{id}/topology/"): "readable",
    ("get", "/api/v1/quotas/"): "denied",
    ("get", "/api/v1/scheduling/what-if/"): "denied",
    ("post", "/api/v1/scheduling/what-if/"): "denied",
    ("get", "/api/v1/scheduling/what-if/{id}/"): "denied",
    ("post", "/api/v1/quotas/"): "denied",
    ("get", "/api/v1/telemetry/history/"): "foreign",
    ("get", "/api/v1/telemetry/gpu-history/"): "foreign",
    ("get", "/api/v1/telemetry/snapshot/"): "foreign",
    ("get", "/api/v1/telemetry/jobs/{job_id}/usage/"): "foreign",
    ("get", "/api/v1/tenants/"): "readable",
    ("post", "/api/v1/tenants/"): "denied",
    ("get", "/api/v1/tokens/"): "own",
    ("post", "/api/v1/tokens/"): "own",
    ("get", "/api/v1/tokens/{id}/"): "foreign",
    ("delete", "/api/v1/tokens/{id}/"): "foreign",
    ("get", "/api/v1/usage/"): "denied",
    ("get", "/api/v1/users/"): "denied",
    ("post", "/api/v1/users/"): "denied",
    ("get", "/api/v1/users/{id}/"): "denied",
    ("patch", "/api/v1/users/{id}/"): "denied",
    ("post", "/api/v1/users/{id}/password/"): "denied",
    **{(m, "/api/v1/tenants/{slug}/"): "foreign" for m in ("get", "put", "patch", "delete")},
    **{(m, "/api/v1/quotas/{id}/"): "denied" for m in ("get", "put", "patch", "delete")},
}
HEALTH = re.compile(
    r"^/api/v1/health/(alerts|incidents|node-tokens|nodes|probe-runs|receivers|rules)/"
)

# Query strings that name tenant B's things on paths that take them there.
FOREIGN_QUERIES = {
    "/api/v1/telemetry/history/": ["series=job:{job}", "series=tenant:tenant-b"],
    "/api/v1/telemetry/snapshot/": ["topic=job:{job}", "topic=heatmap:tenant-b"],
    # a GPU of the shared node that no job of tenant A holds
    "/api/v1/telemetry/gpu-history/": ["node=gpu-shared-01&gpu=0"],
}


def schema_operations() -> list[tuple[str, str]]:
    paths = yaml.safe_load(SCHEMA.read_text())["paths"]
    return [(m, p) for p, ops in paths.items() for m in METHODS if m in ops]


def policy_for(method: str, path: str) -> str:
    if path.startswith("/api/v1/tenants/{tenant}/"):
        return "tenant"
    if HEALTH.match(path):
        return "denied"
    return POLICY[(method, path)]


def fill(path: str, foreign: Foreign, tenant: str) -> str:
    """The path with B's ids in it (and ``tenant`` as the tenant segment)."""

    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name == "tenant":
            return tenant
        if name == "slug":
            return str(foreign.ids["slug"])
        if name == "job_id":
            return str(foreign.ids["job"])
        collection = path[: match.start()].rstrip("/").rsplit("/", 1)[-1]
        return str(foreign.ids[COLLECTION_KEY[collection]])

    return re.sub(r"\{(\w+)\}", one, path)


def hostile_body(foreign: Foreign, world: World) -> dict[str, Any]:
    """References to B's objects in every field name a write might take (ids only, so an
    error message that echoes the input cannot look like a leak)."""
    return {
        "name": "probe",
        "project": foreign.ids["project"],
        "pool": foreign.ids["pool"],
        "job": foreign.ids["job"],
        "run": foreign.ids["run"],
        "tenant": world.tenant_b.pk,
        "owner": world.user("b", Role.MEMBER).pk,
        "user": world.user("b", Role.MEMBER).pk,
        "reason": "probe",
    }


def leaks(body: bytes, foreign: Foreign) -> list[str]:
    text = body.decode("utf-8", "replace")
    return [marker for marker in foreign.markers if marker in text]


def b_state(world: World) -> str:
    """Everything of tenant B a request could change, as one comparable string."""
    tenant = world.tenant_b
    rows: dict[str, Any] = {
        "jobs": list(Job.objects.filter(tenant=tenant).values("id", "state", "name", "priority")),
        "projects": list(Project.objects.filter(tenant=tenant).values("id", "name")),
        "members": list(Membership.objects.filter(tenant=tenant).values("id", "role")),
        "runs": list(Run.objects.filter(tenant=tenant).values("id", "name", "state", "tags")),
        "flags": list(IdleFlag.objects.filter(tenant=tenant).values("id", "state")),
        "notices": list(Notification.objects.filter(tenant=tenant).values("id", "read_at")),
        "services": list(InferenceService.objects.filter(tenant=tenant).values()),
        "quotas": list(Quota.objects.filter(tenant=tenant).values()),
        "policy": list(IdlePolicy.objects.filter(tenant=tenant).values()),
        "tokens": list(ApiToken.objects.filter(user__memberships__tenant=tenant).values()),
        "sweeps": list(Sweep.objects.filter(tenant=tenant).values("id", "state", "name")),
        "tenant": [tenant.slug, tenant.name],
    }
    return json.dumps(rows, default=str, sort_keys=True)


def test_every_schema_operation_has_a_policy_and_a_fixture(foreign: Foreign) -> None:
    """Fails when an endpoint appears that this matrix cannot aim at B's objects."""
    missing = []
    for method, path in schema_operations():
        try:
            policy_for(method, path)
            fill(path, foreign, "tenant-b")
        except KeyError as exc:
            missing.append(f"{method.upper()} {path}: no {exc}")
    assert missing == [], "add these to the cross-tenant matrix:\n" + "\n".join(missing)
    assert len(schema_operations()) >= 100  # the whole API, not a fragment of it


@pytest.mark.parametrize("role", list(Role))
def test_tenant_a_roles_never_reach_tenant_b(world: World, foreign: Foreign, role: Role) -> None:
    client = APIClient()
    client.force_authenticate(world.user("a", role))
    body = hostile_body(foreign, world)
    before = b_state(world)
    failures: list[str] = []
    probes = 0

    def probe(method: str, url: str, allowed: set[int] | None, forbid_2xx: bool) -> None:
        nonlocal probes
        probes += 1
        send = getattr(client, method)
        response = send(url, body, format="json") if method != "get" else send(url)
        status = response.status_code
        where = f"{method.upper()} {url} -> {status}"
        if status >= 500:
            failures.append(f"{where}: server error")
        elif allowed is not None and status not in allowed:
            failures.append(f"{where}: expected one of {sorted(allowed)}")
        elif forbid_2xx and status < 300:
            failures.append(f"{where}: accepted")
        found = leaks(response.content, foreign)
        if found:
            failures.append(f"{where}: leaks {found}")

    for method, path in schema_operations():
        policy = policy_for(method, path)
        if policy == "tenant":
            # Through B's tenant: the tenant itself does not exist for A's users.
            probe(method, fill(path, foreign, "tenant-b"), {404}, True)
            if "{id}" in path:
                # Through A's tenant with B's id: filtered out (403 where the role may not).
                probe(method, fill(path, foreign, "tenant-a"), {403, 404}, True)
            else:
                # A's own collection, with B's ids in the body and filters: never B's data.
                query = "&".join(f"{k}={v}" for k, v in body.items() if k != "reason")
                suffix = f"?{query}" if method == "get" else ""
                probe(method, fill(path, foreign, "tenant-a") + suffix, None, False)
        elif policy == "denied":
            probe(method, fill(path, foreign, "tenant-b"), {401, 403, 404}, True)
        elif policy == "foreign":
            queries = FOREIGN_QUERIES.get(path, [""])
            for query in queries:
                url = fill(path, foreign, "tenant-b")
                if query:
                    url += "?" + query.format(job=foreign.ids["job"])
                probe(method, url, {403, 404}, True)
        else:  # readable, own: any non-5xx answer without B's data
            probe(method, fill(path, foreign, "tenant-b"), None, False)
        if path == "/api/v1/auth/logout/":
            client.force_authenticate(world.user("a", role))  # stay logged in for the rest

    assert failures == [], "\n".join(failures)
    assert probes >= 150
    assert b_state(world) == before, "a request from tenant A changed tenant B's objects"
    # Nothing of A's now points at B's objects (e.g. a job filed under B's project).
    for model in (Job, Run, Sweep):
        crossed = model.objects.filter(tenant=world.tenant_a, project__tenant=world.tenant_b)
        assert not crossed.exists(), model.__name__
    assert not Run.objects.filter(tenant=world.tenant_a, job__tenant=world.tenant_b).exists()
