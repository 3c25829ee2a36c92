"""Job specs fuzzed through the public submit API.

Every spec that asks for host access or privilege (hostPath, privileged, hostNetwork,
hostPort, added capabilities, running as root, the operator-only IPC_LOCK exception), at the
top level or inside a replica group or volume, is refused with a 400 naming the field. Every
spec the API accepts renders pods that pass Pod Security "restricted"."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework.test import APIClient

from apps.clusters.backends.kubernetes.manifests import render_workload
from apps.jobs import workload
from apps.jobs.models import Job
from apps.tenancy.models import Role
from tests.conftest import World
from tests.factories import make_node, make_pool
from tests.kube.conftest import pod_specs_of, restricted_violations

pytestmark = pytest.mark.django_db

URL = "/api/v1/tenants/tenant-a/jobs/"
FUZZ = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    database=None,  # no example database: the suite never writes outside tmp
)

# Pod and container fields that would break the restricted profile, with hostile values.
DANGEROUS: dict[str, st.SearchStrategy[Any]] = {
    "privileged": st.just(True),
    "hostNetwork": st.just(True),
    "hostPID": st.just(True),
    "hostIPC": st.just(True),
    "hostPort": st.integers(1, 65535),
    "hostPath": st.fixed_dictionaries({"path": st.sampled_from(["/", "/etc", "/var/run"])}),
    "host_path": st.sampled_from(["/", "/var/lib/docker"]),
    "capabilities": st.fixed_dictionaries(
        {"add": st.lists(st.sampled_from(["SYS_ADMIN", "NET_ADMIN", "IPC_LOCK"]), min_size=1)}
    ),
    "securityContext": st.fixed_dictionaries(
        {"privileged": st.just(True), "runAsUser": st.just(0)}
    ),
    "security_context": st.fixed_dictionaries({"run_as_user": st.just(0)}),
    "runAsUser": st.just(0),
    "runAsNonRoot": st.just(False),
    "run_as_root": st.just(True),
    "allowPrivilegeEscalation": st.just(True),
    "ports": st.lists(st.fixed_dictionaries({"hostPort": st.integers(1, 65535)}), min_size=1),
    "allow_ipc_lock": st.just(True),
}
WHERE = ("job", "replica_group", "volume")

env_names = st.from_regex(r"[A-Z_][A-Z0-9_]{0,12}", fullmatch=True)
safe_text = st.text(st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"]), max_size=40)


@st.composite
def safe_bodies(draw: st.DrawFn, pool_id: int) -> dict[str, Any]:
    kind = draw(st.sampled_from(["training", "notebook", "inference"]))
    single = kind != "training"
    group = {
        "name": draw(st.sampled_from(["worker", "master", "w-0"])),
        "replicas": 1 if kind == "notebook" else draw(st.integers(1, 2)),
        "cpu_milli": draw(st.integers(100, 64_000)),
        "memory_mib": draw(st.integers(128, 262_144)),
    }
    if draw(st.booleans()):
        group["accelerators"] = draw(st.integers(0, 8))
    else:
        group["accelerator_milli"] = draw(st.integers(0, 999))
    body: dict[str, Any] = {
        "name": draw(st.from_regex(r"[a-z][a-z0-9-]{0,20}[a-z0-9]", fullmatch=True)),
        "kind": kind,
        "pool": pool_id,
        "image": draw(st.sampled_from(["pytorch:2.5", "registry.example.com/ml/train:1"])),
        "command": draw(st.lists(safe_text, max_size=3)),
        "args": draw(st.lists(safe_text, max_size=3)),
        "env": draw(st.dictionaries(env_names, safe_text, max_size=4)),
        "replica_groups": [group],
        "priority": draw(st.integers(3, 5)),
    }
    if draw(st.booleans()):
        body["volumes"] = [
            {
                "name": "data",
                "claim": "datasets",
                "mount_path": draw(st.sampled_from(["/data", "/mnt/x", "/"])),
                "read_only": draw(st.booleans()),
            }
        ]
    if not single and draw(st.booleans()):
        body["topology"] = {"mode": draw(st.sampled_from(["none", "soft", "hard"]))}
    return body


def names_field(errors: Any, field: str) -> bool:
    """Whether ``field`` is a key anywhere in the (possibly nested) field errors."""
    if isinstance(errors, dict):
        return field in errors or any(names_field(v, field) for v in errors.values())
    if isinstance(errors, list):
        return any(names_field(v, field) for v in errors)
    return False


@pytest.fixture
def submitter(world: World) -> tuple[APIClient, int]:
    pool = make_pool(name="fuzz")
    make_node(pool=pool, name="fuzz-node-1")
    client = APIClient()
    client.force_authenticate(world.user("a", Role.MEMBER))
    return client, pool.pk


def test_dangerous_fields_are_refused_with_400(submitter: tuple[APIClient, int]) -> None:
    client, pool_id = submitter
    before = Job.objects.count()

    @FUZZ
    @given(
        body=safe_bodies(pool_id),
        field=st.sampled_from(sorted(DANGEROUS)),
        where=st.sampled_from(WHERE),
        data=st.data(),
    )
    def check(body: dict[str, Any], field: str, where: str, data: st.DataObject) -> None:
        value = data.draw(DANGEROUS[field])
        if where == "job":
            body[field] = value
        elif where == "replica_group":
            body["replica_groups"][0][field] = value
        else:
            body["volumes"] = [{"name": "host", "claim": "c", "mount_path": "/host", field: value}]
        response = client.post(URL, body, format="json")
        assert response.status_code == 400, (field, where, response.status_code, response.json())
        errors = response.json()["errors"]
        assert names_field(errors, field), errors

    check()
    assert Job.objects.count() == before


def test_every_accepted_spec_renders_restricted_pods(submitter: tuple[APIClient, int]) -> None:
    client, pool_id = submitter
    accepted: list[int] = []

    @FUZZ
    @given(body=safe_bodies(pool_id))
    def check(body: dict[str, Any]) -> None:
        response = client.post(URL, body, format="json")
        assert response.status_code in (201, 400), response.content
        if response.status_code == 400:
            # A refusal is fine (e.g. a node too small) as long as it names the fields.
            assert response.json()["errors"], response.json()
            return
        job = Job.objects.get(pk=response.json()["id"])
        pods = [pod for m in render_workload(workload.build(job)) for pod in pod_specs_of(m)]
        assert pods
        for pod in pods:
            assert restricted_violations(pod) == [], (body, pod)
        accepted.append(job.pk)

    check()
    assert len(accepted) >= 20, "the fuzzer must mostly produce specs the API accepts"
