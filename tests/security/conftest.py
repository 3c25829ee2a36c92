"""Tenant B's real objects, one of every kind an API path can name, for cross-tenant probes.

Every name given to B's objects contains ``MARKER`` so a response that leaks any of them can be
found by searching its body, whatever field the leak is in."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta

import pytest
from django.core import signals
from django.db import close_old_connections
from django.utils import timezone

from apps.accounting.models import UsageSegment
from apps.accounts.services import create_token
from apps.audit.models import AuditEntry
from apps.clusters.models import Cluster, Node, ResourcePool
from apps.governance.models import FlagState, IdleFlag, NoticeKind, Notification
from apps.governance.services import set_tenant_policy
from apps.health.models import (
    Alert,
    AlertReceiver,
    FaultRule,
    Incident,
    IncidentJob,
    NodeToken,
    ProbeRun,
)
from apps.inference.services import create_service
from apps.jobs.models import JobKind
from apps.jobs.services import submit_job
from apps.quotas.models import Quota
from apps.runs.services import create_run, ingest_metrics, register_checkpoint
from apps.scheduling.models import WhatIfRun
from apps.sweeps.models import Sweep, Trial
from apps.tenancy.models import Membership, Role
from tests.conftest import World
from tests.factories import make_node, make_pool, make_project

MARKER = "zzb-secret"


@dataclass
class Foreign:
    """Ids of tenant B's objects (and of the platform objects around them)."""

    ids: dict[str, int | str] = field(default_factory=dict)
    # Strings that may appear only in answers meant for tenant B (or a platform admin).
    markers: tuple[str, ...] = ()


def job_spec(image: str = "registry.example.com/ml/train:1") -> dict[str, object]:
    return {
        "image": image,
        "command": ["python", "train.py"],
        "replica_groups": [{"name": "worker", "replicas": 1, "accelerators": 1}],
        "accelerator_models": ["A800"],
    }


def build_foreign(world: World) -> Foreign:
    b_member = world.user("b", Role.MEMBER)
    pool: ResourcePool = make_pool(name="shared")
    node: Node = make_node(pool=pool, name="gpu-shared-01")
    # Tenant A owns objects too, created first, so B's ids are not A's ids.
    make_project(tenant=world.tenant_a, name="a-own-project")
    submit_job(tenant=world.tenant_a, owner=world.user("a", Role.MEMBER), name="a-own-job",
               kind=JobKind.TRAINING, pool=pool, priority=4, spec=job_spec())  # fmt: skip
    project = make_project(tenant=world.tenant_b, name=f"{MARKER}-project")
    job = submit_job(
        tenant=world.tenant_b,
        owner=b_member,
        name=f"{MARKER}-job",
        kind=JobKind.TRAINING,
        pool=pool,
        priority=4,
        spec=job_spec(),
        project=project,
    )
    service = create_service(
        tenant=world.tenant_b,
        owner=b_member,
        name=f"{MARKER}-svc",
        pool=pool,
        settings={
            "model_uri": f"s3://{MARKER}/model",
            "min_replicas": 1,
            "max_replicas": 2,
            "target_value": 8.0,
        },
    )
    run = create_run(tenant=world.tenant_b, owner=b_member, name=f"{MARKER}-run", job=job)
    register_checkpoint(run=run, step=10, path=f"s3://{MARKER}/ckpt-10")
    ingest_metrics(run=run, points=[("loss", 1, 0.5)])
    warned = timezone.now()
    flag = IdleFlag.objects.create(
        job=job,
        tenant=world.tenant_b,
        state=FlagState.WARNED,
        warned_at=warned,
        idle_since=warned - timedelta(hours=1),
        stop_at=warned + timedelta(minutes=30),
    )
    notice = Notification.objects.create(
        tenant=world.tenant_b,
        recipient=b_member,
        kind=NoticeKind.IDLE_WARNING,
        job=job,
        title=f"{MARKER} notice",
        body=f"{MARKER} body",
    )
    now = timezone.now()
    segment = UsageSegment.objects.create(
        job=job,
        tenant=world.tenant_b,
        project=project,
        owner=b_member,
        pool=pool,
        accelerator_model="A800",
        device_milli=1000,
        started_at=now - timedelta(hours=1),
        ended_at=now,
        reason="succeeded",
    )
    quota = Quota.objects.create(
        tenant=world.tenant_b, pool=pool, accelerator_model="A800", guarantee=8, borrow_limit=0
    )
    set_tenant_policy(tenant=world.tenant_b, values={"webhook_url": f"https://{MARKER}.example"})
    audit = AuditEntry.objects.create(
        tenant=world.tenant_b,
        actor=b_member,
        actor_name=b_member.username,
        action="create",
        object_type="tenancy.project",
        object_id=str(project.pk),
        object_repr=f"{MARKER}-project",
    )
    token, _ = create_token(user=b_member, name=f"{MARKER}-token")
    membership = Membership.objects.get(tenant=world.tenant_b, user=b_member)
    incident = Incident.objects.create(
        node=node, fault="xid-79", severity="critical", action="cordon_drain", detail="gpu fell off"
    )
    IncidentJob.objects.create(incident=incident, job=job, outcome="requeued", devices=1, attempt=1,
                               lost_gpu_seconds=60.0)  # fmt: skip
    alert = Alert.objects.create(
        node=node, fault="xid-79", incident=incident, severity="critical", message="xid 79"
    )
    rule = FaultRule.objects.create(code="zz_rule", severity="warning", action="alert")
    receiver = AlertReceiver.objects.create(
        name="zz-receiver", kind="webhook", target="https://hooks.example.com/x"
    )
    node_token = NodeToken.objects.create(node=node, prefix="zzprefix", digest="0" * 64)
    probe = ProbeRun.objects.create(pool=pool, requested_by=world.platform_admin)
    what_if = WhatIfRun.objects.create(
        hours=24, policies=["ours"], requested_by=world.platform_admin
    )
    sweep = Sweep.objects.create(
        tenant=world.tenant_b,
        owner=b_member,
        project=project,
        name=f"{MARKER}-sweep",
        method="grid",
        parameters={"lr": [0.1]},
        template={**job_spec(), "args": [f"--{MARKER}={{{{lr}}}}"]},
        parallel=1,
        metric="loss",
        seed=1,
    )
    Trial.objects.create(sweep=sweep, index=1, params={"lr": 0.1})
    cluster = Cluster.objects.get(pk=pool.cluster_id)
    ids: dict[str, int | str] = {
        "tenant": world.tenant_b.slug,
        "slug": world.tenant_b.slug,
        "job": job.pk,
        "project": project.pk,
        "member": membership.pk,
        "audit": audit.pk,
        "inference_service": service.pk,
        "run": run.pk,
        "flag": flag.pk,
        "notification": notice.pk,
        "efficiency": flag.pk,
        "usage": segment.pk,
        "quota": quota.pk,
        "token": token.pk,
        "user": b_member.pk,
        "cluster": cluster.pk,
        "pool": pool.pk,
        "node": node.pk,
        "incident": incident.pk,
        "alert": alert.pk,
        "rule": rule.pk,
        "receiver": receiver.pk,
        "node_token": node_token.pk,
        "probe_run": probe.pk,
        "what_if": what_if.pk,
        "sweep": sweep.pk,
    }
    b_users = [user.username for (label, _role), user in world.users.items() if label == "b"]
    markers = (MARKER, world.tenant_b.slug, *b_users)
    return Foreign(ids=ids, markers=markers)


@pytest.fixture
def keep_connection() -> Iterator[None]:
    """For requests sent through the WSGI handler (schemathesis): it closes the database
    connection after each request, which would end the test's transaction; Django's own
    test client unhooks the same signal."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.fixture
def foreign(world: World) -> Foreign:
    return build_foreign(world)
