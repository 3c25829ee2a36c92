"""Dispatch survives a killed worker: 200 admitted jobs, a real Celery worker relaying them to
the Kubernetes API (kmock, over HTTP with the official client) through a real Redis broker on
PostgreSQL, SIGKILLed three times mid-dispatch, every relay message delivered three times.

Pass: 200/200 jobs reach the cluster as exactly 200 distinct Volcano Jobs, no outbox row is
left pending, and after the cluster reports them running none is left in dispatching."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml
from celery import Celery
from django.db import connection

from apps.clusters.backends.kubernetes.backend import KubernetesBackend
from apps.jobs.models import Job, JobKind, OutboxEntry
from apps.jobs.relay import reconcile
from apps.jobs.services import submit_job
from apps.quotas.models import Quota
from apps.scheduling.loop import run_cycle
from apps.tenancy.models import Role
from tests.conftest import World
from tests.factories import make_node, make_pool
from tests.kube.conftest import JOB_RESOURCE, Cluster

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

JOBS = 200
KILL_AT = (40, 90, 140)  # objects created when each SIGKILL lands
REDIS = "redis://127.0.0.1:6379/9"
ROOT = Path(__file__).resolve().parents[2]


def _admit(world: World) -> None:
    pool = make_pool(name="kill")
    for i in range(JOBS // 8):
        make_node(pool=pool, name=f"k{i:03d}", leaf_switch=f"leaf{i // 4}")
    Quota.objects.create(tenant=world.tenant_a, pool=pool, accelerator_model="A800",
                         guarantee=JOBS)  # fmt: skip
    spec = {"image": "pytorch:2.5", "accelerator_models": ["A800"],
            "replica_groups": [{"name": "w", "replicas": 1, "accelerators": 1}]}  # fmt: skip
    for i in range(JOBS):
        submit_job(tenant=world.tenant_a, owner=world.user("a", Role.MEMBER), name=f"j{i}",
                   kind=JobKind.TRAINING, pool=pool, priority=4, spec=spec)  # fmt: skip
    run_cycle()
    assert Job.objects.filter(state="admitted").count() == JOBS
    assert OutboxEntry.objects.filter(state="pending").count() == JOBS


def _kubeconfig(path: Path, url: str) -> Path:
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "kmock", "cluster": {"server": url.rstrip("/")}}],
        "users": [{"name": "zs", "user": {"token": "test"}}],
        "contexts": [{"name": "kmock", "context": {"cluster": "kmock", "user": "zs"}}],
        "current-context": "kmock",
    }
    path.write_text(yaml.safe_dump(config))
    return path


def _created(cluster: Cluster) -> set[str]:
    names = set()
    for key in list(cluster.kmock.objects):
        if key[0] == JOB_RESOURCE and cluster.has(*key):
            names.add(key[2])
    return names


async def _start_worker(env: dict[str, str], queue: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "celery", "-A", "config", "worker", "-P", "threads", "-c", "2",
        "-Q", queue, "--without-heartbeat", "--without-mingle", "--without-gossip",
        "--loglevel", "WARNING", cwd=ROOT, env=env,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip


async def test_worker_killed_three_times_during_dispatch(
    world_sync: World, cluster: Cluster, tmp_path: Path
) -> None:
    await asyncio.to_thread(_admit, world_sync)
    queue = f"zs-kill-{uuid.uuid4().hex[:8]}"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.dev",
        "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{connection.settings_dict['NAME']}",
        "REDIS_URL": REDIS,
        "ZS_CLUSTER_BACKEND": "kubernetes",
        "KUBECONFIG": str(_kubeconfig(tmp_path / "kubeconfig", str(cluster.kmock.url))),
        "ZS_DATA_DIR": str(tmp_path),
    }
    sender = Celery(broker=REDIS)

    def kick(times: int = 3) -> None:  # every relay message delivered three times
        for _ in range(times):
            sender.send_task("apps.jobs.tasks.relay_outbox", queue=queue)

    worker = await _start_worker(env, queue)
    kills = 0
    try:
        kick()
        for _ in range(2400):  # up to 120 s
            created = len(_created(cluster))
            if kills < len(KILL_AT) and created >= KILL_AT[kills]:
                worker.send_signal(signal.SIGKILL)
                await worker.wait()
                kills += 1
                worker = await _start_worker(env, queue)
                kick()
            pending = await asyncio.to_thread(
                lambda: OutboxEntry.objects.filter(state="pending").count()
            )
            if pending == 0 and created >= JOBS:
                break
            if _ % 20 == 0:
                kick()  # what beat does in production: a periodic relay tick
            await asyncio.sleep(0.05)
    finally:
        worker.send_signal(signal.SIGKILL)
        await worker.wait()
        sender.close()

    names = _created(cluster)
    assert kills == 3
    job_ids = await asyncio.to_thread(lambda: sorted(Job.objects.values_list("pk", flat=True)))
    assert names == {f"zs-train-{pk}" for pk in job_ids}  # exactly one object per job
    counts = await asyncio.to_thread(
        lambda: (
            OutboxEntry.objects.filter(state="done").count(),
            OutboxEntry.objects.exclude(state="done").count(),
            Job.objects.filter(state="admitted").count(),
        )
    )
    assert counts == (JOBS, 0, 0)

    # The cluster reports every job running: none is left in dispatching.
    for name in names:
        key = (JOB_RESOURCE, "zs-tenant-a", name)
        raw = cluster.obj(*key)
        cluster.seed(
            JOB_RESOURCE, "zs-tenant-a", {**raw, "status": {"state": {"phase": "Running"}}}
        )
    backend = KubernetesBackend(cluster.api_client)
    await asyncio.to_thread(reconcile, backend)
    states = await asyncio.to_thread(
        lambda: sorted(set(Job.objects.values_list("state", flat=True)))
    )
    assert states == ["running"]


@pytest.fixture
def world_sync(transactional_db: Any) -> World:
    return World()
