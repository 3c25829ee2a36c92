"""Kubernetes faults seen by the product's control loop, not just by the backend.

tests/kube/test_backend_http.py already proves that the backend maps every fault to the right
error (409 ours/foreign/terminating, 410 on watch and inside the stream, 429 with Retry-After
seconds or date, 500-504, connection refused and reset, a hanging create or list). Here the
same faults hit the outbox relay (kmock over HTTP, PostgreSQL): a transient fault leaves the
row pending with a backoff (Retry-After honoured) and the next pass dispatches exactly one
object; a permanent one fails the job with a reason. And the level-triggered resync: the
reconciler and the watch are paused while 100 workloads change, the watch cursor has expired
(410), and one pass brings every job to the state the cluster reports."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from apps.clusters.backends.kubernetes.backend import VOLCANO_JOB, KubernetesBackend
from apps.jobs.models import Job, OutboxEntry, WatchCursor
from apps.jobs.relay import relay, relay_one
from apps.jobs.watcher import watch_once
from tests.conftest import World
from tests.kube.conftest import JOB_RESOURCE, Cluster, status_body
from tests.kube.test_worker_kill import _created
from tests.reliability.helpers import admit_jobs, closing

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]
NAMESPACE = "zs-tenant-a"


def _reset(request: Any) -> None:
    request._raw_request.transport.abort()


def _hang_until(release: asyncio.Event) -> Any:
    async def hang() -> None:
        await release.wait()

    return hang


FAULTS = {
    "409-our-object": None,  # seeded below: a previous attempt's object with our label
    "429-retry-after": (429, {"Retry-After": "7"}),
    "500": (500, None),
    "503": (503, None),
    "connection-reset": _reset,
    "hanging-create": "hang",
}


@pytest.mark.parametrize("fault", list(FAULTS))
async def test_a_transient_fault_delays_dispatch_and_the_retry_creates_one_object(
    world_sync: World, cluster: Cluster, fault: str
) -> None:
    await asyncio.to_thread(closing(lambda: admit_jobs(world_sync, 1)))
    job_id = await asyncio.to_thread(closing(lambda: Job.objects.get().pk))
    backend = KubernetesBackend(cluster.api_client, request_timeout=(2.0, 0.5))
    release = asyncio.Event()
    injected = FAULTS[fault]
    if fault == "409-our-object":
        # The relay died after a create that the API server did complete.
        await asyncio.to_thread(closing(lambda: relay_one(KubernetesBackend(cluster.api_client))))
        await asyncio.to_thread(
            closing(lambda: OutboxEntry.objects.update(state="pending", done_at=None))
        )
        await asyncio.to_thread(closing(lambda: Job.objects.update(state="admitted")))
    elif injected == "hang":
        cluster.kmock["create"][:1] << _hang_until(release)
    elif callable(injected):
        cluster.kmock["create"][:1] << injected
    else:
        code, headers = injected  # type: ignore[misc]
        reaction = cluster.kmock["create"][:1] << code
        if headers:
            reaction = reaction << headers
        reaction << status_body(code, "Fault", f"injected {code}")
    try:
        before = timezone.now()
        await asyncio.to_thread(closing(lambda: relay_one(backend)))
    finally:
        release.set()
    entry = await asyncio.to_thread(closing(lambda: OutboxEntry.objects.get()))
    job = await asyncio.to_thread(closing(lambda: Job.objects.get()))
    if fault == "409-our-object":
        assert (entry.state, job.state) == ("done", "dispatching")  # recognised as ours
    else:
        assert (entry.state, job.state, entry.tries) == ("pending", "admitted", 1)
        assert entry.last_error
        delay = (entry.available_at - before).total_seconds()
        if fault == "429-retry-after":
            assert 6.5 <= delay <= 8.5  # the server's Retry-After, not our own backoff
        else:
            assert 1.5 <= delay <= 3.5  # first backoff step: 2 s
        await asyncio.to_thread(
            closing(lambda: OutboxEntry.objects.update(available_at=timezone.now()))
        )
        await asyncio.to_thread(closing(lambda: relay(backend=backend)))
        entry = await asyncio.to_thread(closing(lambda: OutboxEntry.objects.get()))
        job = await asyncio.to_thread(closing(lambda: Job.objects.get()))
        assert (entry.state, job.state) == ("done", "dispatching")
    assert _created(cluster) == {f"zs-train-{job_id}"}


async def test_a_409_for_a_foreign_object_fails_the_job_with_a_reason(
    world_sync: World, cluster: Cluster
) -> None:
    await asyncio.to_thread(closing(lambda: admit_jobs(world_sync, 1)))
    job_id = await asyncio.to_thread(closing(lambda: Job.objects.get().pk))
    name = f"zs-train-{job_id}"
    cluster.seed(JOB_RESOURCE, NAMESPACE, {"metadata": {"name": name, "namespace": NAMESPACE}})
    await asyncio.to_thread(closing(lambda: relay_one(KubernetesBackend(cluster.api_client))))
    entry = await asyncio.to_thread(closing(lambda: OutboxEntry.objects.get()))
    job = await asyncio.to_thread(closing(lambda: Job.objects.get()))
    assert (entry.state, job.state) == ("failed", "failed")
    assert "exists and is not job" in entry.last_error
    assert job.state_reason == entry.last_error  # the user sees why
    assert cluster.obj(JOB_RESOURCE, NAMESPACE, name) == {
        "metadata": {"name": name, "namespace": NAMESPACE}
    }  # somebody else's object is never touched


CHANGES = {"Running": 40, "Completed": 30, "Failed": 20, "deleted": 10}


async def test_resync_after_a_paused_reconciler_while_100_workloads_changed(
    world_sync: World, cluster: Cluster
) -> None:
    backend = KubernetesBackend(cluster.api_client)
    await asyncio.to_thread(closing(lambda: admit_jobs(world_sync, 100)))
    await asyncio.to_thread(closing(lambda: relay(backend=backend)))
    await asyncio.to_thread(closing(lambda: watch_once(backend, timeout_s=0.5)))  # stores a cursor
    cursor = await asyncio.to_thread(closing(lambda: WatchCursor.objects.get().resource_version))
    ids = await asyncio.to_thread(
        closing(lambda: list(Job.objects.order_by("pk").values_list("pk", flat=True)))
    )
    assert len(ids) == 100 and len(_created(cluster)) == 100

    # Paused: nothing watches or reconciles while every workload changes on the cluster.
    expected: dict[int, str] = {}
    chunks = iter(ids)
    for change, count in CHANGES.items():
        for _ in range(count):
            job_id = next(chunks)
            name = f"zs-train-{job_id}"
            if change == "deleted":
                await asyncio.to_thread(backend.delete, job_id, "tenant-a", "training")
                expected[job_id] = "restarting"  # lost object: restart the job
            else:
                status = {"state": {"phase": change}}
                await asyncio.to_thread(backend.patch, VOLCANO_JOB, NAMESPACE, name,
                                        {"status": status})  # fmt: skip
                expected[job_id] = {"Running": "running", "Completed": "succeeded",
                                    "Failed": "restarting"}[change]  # fmt: skip
    # The pause outlasted the reconciler's grace for vanished workloads.
    await asyncio.to_thread(
        closing(lambda: Job.objects.update(state_changed_at=timezone.now() - timedelta(minutes=5)))
    )
    # The watch resumes with a cursor the API server no longer has.
    cluster.kmock["watch"] << 410 << status_body(410, "Expired", "too old resource version")
    changed = await asyncio.to_thread(closing(lambda: watch_once(backend, timeout_s=1)))
    assert changed == 100
    states = await asyncio.to_thread(closing(lambda: dict(Job.objects.values_list("pk", "state"))))
    assert states == expected
    # The cursor was replaced by the re-list's (kmock's list versions are all "...").
    fresh = await asyncio.to_thread(closing(lambda: WatchCursor.objects.get().resource_version))
    assert fresh and cursor
    # Restarted jobs: their old objects are deleted and they go back to the queue.
    await asyncio.to_thread(closing(lambda: relay(backend=backend)))
    states = await asyncio.to_thread(closing(lambda: dict(Job.objects.values_list("pk", "state"))))
    assert sorted(k for k, v in states.items() if v == "queued") == sorted(
        k for k, v in expected.items() if v == "restarting"
    )
    assert len(_created(cluster)) == 70  # running + succeeded keep their objects
