"""Typed factories for test data: plain functions with defaults, so types stay exact."""

from __future__ import annotations

import itertools
from typing import Any

from django.utils import timezone

from apps.accounts.models import User
from apps.clusters.models import Cluster, ClusterKind, Node, ResourcePool, Vendor
from apps.jobs.models import Allocation, Job, JobState
from apps.tenancy.models import Membership, Project, Role, Tenant

PASSWORD = "correct horse battery staple"
_seq = itertools.count(1)


def make_user(username: str | None = None, **fields: Any) -> User:
    username = username or f"user{next(_seq)}"
    user = User(username=username, display_name=fields.pop("display_name", username.title()))
    for key, value in fields.items():
        setattr(user, key, value)
    user.set_password(PASSWORD)
    user.save()
    return user


def make_tenant(slug: str | None = None, **fields: Any) -> Tenant:
    slug = slug or f"tenant-{next(_seq)}"
    return Tenant.objects.create(slug=slug, name=fields.pop("name", slug.title()), **fields)


def make_membership(*, tenant: Tenant, user: User, role: Role = Role.MEMBER) -> Membership:
    return Membership.objects.create(tenant=tenant, user=user, role=role)


def make_project(*, tenant: Tenant, name: str | None = None, **fields: Any) -> Project:
    return Project.objects.create(tenant=tenant, name=name or f"project-{next(_seq)}", **fields)


def make_cluster(name: str | None = None) -> Cluster:
    return Cluster.objects.create(name=name or f"cluster-{next(_seq)}", kind=ClusterKind.SIMULATED)


def make_pool(cluster: Cluster | None = None, name: str | None = None) -> ResourcePool:
    return ResourcePool.objects.create(
        cluster=cluster or make_cluster(), name=name or f"pool-{next(_seq)}"
    )


def make_node(*, pool: ResourcePool | None = None, **fields: Any) -> Node:
    pool = pool or make_pool()
    defaults: dict[str, Any] = {
        "name": f"node-{next(_seq):04d}",
        "cpu_milli": 128_000,
        "memory_mib": 1_048_576,
        "accelerator_vendor": Vendor.NVIDIA,
        "accelerator_model": "A800",
        "accelerator_count": 8,
        "leaf_switch": "leaf0",
        "scalable_unit": "su0",
        "spine": "spine0",
    }
    return Node.objects.create(cluster=pool.cluster, pool=pool, **{**defaults, **fields})


def make_running(job: Job, node: Node | None = None) -> None:
    """Put a queued job on ``node`` (the pool's first node by default) as the scheduler would:
    one Allocation per replica on the first free devices, then RUNNING. For tests that need a
    running job without a scheduling cycle; quotas are not consulted."""
    node = node or Node.objects.filter(pool=job.pool).order_by("pk").first()
    assert node is not None, "the job's pool has no node"
    taken = {d for a in Allocation.objects.filter(node=node) for d in a.devices}
    free = [d for d in range(node.accelerator_count) if d not in taken]
    index = 0
    for group in job.spec.get("replica_groups", []):
        per = int(group.get("accelerators", 0))
        for _ in range(int(group.get("replicas", 1))):
            devices, free = free[:per], free[per:]
            Allocation.objects.create(
                job=job,
                node=node,
                replica_group=group["name"],
                replica_index=index,
                accelerator_model=node.accelerator_model,
                devices=devices,
                cpu_milli=int(group.get("cpu_milli", 0)),
                memory_mib=int(group.get("memory_mib", 0)),
            )
            index += 1
    now = timezone.now()
    Job.objects.filter(pk=job.pk).update(state=JobState.RUNNING, admitted_at=now, started_at=now)
