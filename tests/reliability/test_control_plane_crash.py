"""The control plane SIGKILLed with jobs in every state, restarted after a delay.

Real processes: the web process (``manage.py serve``), a Celery worker and Celery beat, on
PostgreSQL, a private Redis, and kmock as the Kubernetes API (official client over HTTP).
20 jobs are submitted over REST and driven into mixed states (queued, admitted/dispatching,
running, succeeded, cancelled, a failed attempt restarting); then, while REST submissions,
cancels and cluster status changes are in flight, all three processes get SIGKILL at once.
After ``delay`` seconds they are started again. Rounds for each delay in ``ZS_CRASH_DELAYS``
(seconds, comma-separated; CI default ``0,2,6``; the acceptance run is ``0,20,60``).

Pass, after each restart once the stack has settled:
- every recorded state change is in the transition table and the events of each job form
  one unbroken chain ending in its current state (no illegal or lost transition);
- every submission the web process acknowledged (201) exists;
- what was final before the crash is unchanged (terminal states, usage segments);
- the cluster holds an object exactly for the jobs in dispatching/running/succeeded;
- accounting: allocations exist exactly for holding jobs, one usage segment per hold that
  ended, and no tenant holds more than its quota."""

from __future__ import annotations

import asyncio
import functools
import os
from collections import Counter
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from django.db import connection, transaction

from apps.accounting.models import UsageSegment
from apps.accounts.services import create_token
from apps.clusters.backends.kubernetes.backend import VOLCANO_JOB, KubernetesBackend
from apps.jobs.models import HOLDING, TERMINAL, TRANSITIONS, Allocation, Job, JobEvent, OutboxEntry
from apps.quotas.selectors import usage_milli
from apps.tenancy.models import Role
from tests.conftest import World
from tests.kube.conftest import JOB_RESOURCE, Cluster
from tests.kube.test_worker_kill import _created
from tests.net import free_port
from tests.reliability.conftest import process_env
from tests.reliability.helpers import closing, make_capacity
from tests.reliability.stack import PrivateRedis, Stack, api

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

DELAYS = [float(d) for d in os.environ.get("ZS_CRASH_DELAYS", "0,2,6").split(",")]
GPUS = 12
NAMESPACE = "zs-tenant-a"
BODY = {"kind": "training", "priority": 4, "image": "pytorch:2.5", "command": ["train"],
        "replica_groups": [{"name": "w", "replicas": 1, "accelerators": 1}],
        "accelerator_model": "A800"}  # fmt: skip
ON_CLUSTER = {"dispatching", "running", "succeeded"}


def _snapshot() -> dict[str, Any]:
    return {
        "states": dict(Job.objects.values_list("pk", "state")),
        "finished": dict(Job.objects.values_list("pk", "finished_at")),
        "segments": set(
            UsageSegment.objects.values_list(
                "pk", "job_id", "device_milli", "started_at", "ended_at", "reason"
            )
        ),
    }


def _states_are(expected: dict[int, str]) -> bool:
    return all(Job.objects.get(pk=pk).state == state for pk, state in expected.items())


def _settled() -> bool:
    moving = Job.objects.filter(state__in=["submitted", "admitted", "preempted", "restarting"])
    return not moving.exists() and not OutboxEntry.objects.filter(state="pending").exists()


def _check_invariants(before: dict[str, Any], acknowledged: set[int]) -> dict[str, Any]:
    # The restarted stack keeps working while we look: read one consistent snapshot.
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        return _invariants_in_snapshot(before, acknowledged)


def _invariants_in_snapshot(before: dict[str, Any], acknowledged: set[int]) -> dict[str, Any]:
    after = _snapshot()
    # Every state change is legal and the events of a job form one chain to its state.
    for job_id, state in after["states"].items():
        chain = JobEvent.objects.filter(job_id=job_id).exclude(to_state="").order_by("id")
        current = "submitted"
        for event in chain:
            assert event.from_state == current, (job_id, event.from_state, current)
            assert event.to_state in TRANSITIONS[event.from_state], (job_id, str(event))
            current = event.to_state
        assert current == state, (job_id, current, state)
    assert acknowledged <= set(after["states"]), "an acknowledged submission was lost"
    for job_id, state in before["states"].items():
        if state in TERMINAL:
            assert after["states"][job_id] == state
            assert after["finished"][job_id] == before["finished"][job_id]
    assert before["segments"] <= after["segments"], "a usage segment changed or vanished"
    # Accounting: allocations exactly for holding jobs; one segment per hold that ended.
    assert not Allocation.objects.exclude(job__state__in=HOLDING).exists()
    held = set(Allocation.objects.values_list("job_id", flat=True))
    assert held == set(Job.objects.filter(state__in=HOLDING).values_list("pk", flat=True))
    holds_ended = Counter(
        JobEvent.objects.filter(from_state__in=HOLDING).exclude(to_state__in=HOLDING)
        .exclude(to_state="").values_list("job_id", flat=True)
    )  # fmt: skip
    assert Counter(UsageSegment.objects.values_list("job_id", flat=True)) == holds_ended
    assert max(usage_milli().values(), default=0) <= GPUS * 1000
    return after


async def _wait(predicate: Any, timeout: float, what: str) -> None:
    for _ in range(int(timeout / 0.25)):
        if await asyncio.to_thread(closing(predicate)):
            return
        await asyncio.sleep(0.25)
    raise AssertionError(f"timed out waiting for {what}")


async def test_control_plane_killed_and_restarted(
    world_sync: World, cluster: Cluster, tmp_path: Path
) -> None:
    backend = KubernetesBackend(cluster.api_client)
    private = PrivateRedis(free_port(), tmp_path / "redis.log")
    await private.start()
    pool, token = await asyncio.to_thread(
        closing(lambda: (
            make_capacity(world_sync, GPUS, "crash"),
            create_token(user=world_sync.user("a", Role.MEMBER), name="crash")[1],
        ))
    )  # fmt: skip
    stack = Stack(process_env(tmp_path, str(cluster.kmock.url), private.url), tmp_path)
    jobs_url = f"{stack.url}/api/v1/tenants/tenant-a/jobs/"
    acknowledged: set[int] = set()
    results: list[str] = []

    async def submit(http: aiohttp.ClientSession, n: int) -> None:
        for i in range(n):
            try:
                status, body = await api(http, "POST", jobs_url, token,
                                         {**BODY, "name": f"c{len(acknowledged)}-{i}",
                                          "pool": pool.pk})  # fmt: skip
            except aiohttp.ClientError:
                continue  # the web process is gone: not acknowledged, nothing promised
            assert status in (201, 502, 503), (status, body)
            if status == 201:
                acknowledged.add(int(body["id"]))

    def objects_of(states: set[str]) -> set[str]:
        ids = Job.objects.filter(state__in=states).values_list("pk", flat=True)
        return {f"zs-train-{pk}" for pk in ids}

    def reported() -> dict[int, str]:
        """What the cluster says now (kmock, read on the loop that serves it)."""
        mapping = {"Running": "running", "Completed": "succeeded"}
        truth = {}
        for name in _created(cluster):
            raw = cluster.obj(JOB_RESOURCE, NAMESPACE, name)
            value = (raw.get("status") or {}).get("state", {}).get("phase")
            if value in mapping:
                truth[int(name.rsplit("-", 1)[1])] = mapping[value]
        return truth

    def phase(names: list[str], value: str) -> None:
        for name in names:
            backend.patch(VOLCANO_JOB, NAMESPACE, name, {"status": {"state": {"phase": value}}})

    try:
        await stack.start()
        async with aiohttp.ClientSession() as http:
            await submit(http, 20)
            assert len(acknowledged) == 20
            await _wait(lambda: len(objects_of({"dispatching"})) == GPUS, 90, "12 dispatched")
            for round_no, delay in enumerate(DELAYS):
                # Mixed states, with work in flight at the moment of the kill.
                live = sorted(_created(cluster) & await asyncio.to_thread(
                    closing(lambda: objects_of({"dispatching", "running"}))))  # fmt: skip
                queued = await asyncio.to_thread(closing(
                    lambda: list(Job.objects.filter(state="queued").values_list("pk", flat=True))
                ))  # fmt: skip
                await asyncio.to_thread(phase, live[:4], "Running")
                await asyncio.to_thread(phase, live[4:6], "Completed")
                await asyncio.to_thread(phase, live[6:7], "Failed")
                for job_id in queued[:1] + [int(n.rsplit("-", 1)[1]) for n in live[7:8]]:
                    status, _ = await api(http, "POST", f"{jobs_url}{job_id}/cancel/", token)
                    assert status == 200
                flight = asyncio.create_task(submit(http, 3))
                await asyncio.sleep(1.0 + round_no * 0.3)  # beat/worker mid-cycle
                await stack.kill9()
                await flight
                before = await asyncio.to_thread(closing(_snapshot))
                await asyncio.sleep(delay)
                await stack.start()
                await _wait(_settled, 90, f"the stack to settle after a {delay:g} s outage")
                await _wait(
                    lambda: _created(cluster) == objects_of(ON_CLUSTER), 60, "objects to match"
                )
                truth = reported()
                await _wait(
                    functools.partial(_states_are, truth),
                    60,
                    "job states to match what the cluster reports",
                )
                after = await asyncio.to_thread(
                    closing(functools.partial(_check_invariants, before, acknowledged))
                )
                results.append(f"delay {delay:g}s: {dict(Counter(after['states'].values()))}")
    finally:
        await stack.kill9()
        await private.kill()
    print("\n" + "\n".join(results))
    assert len(results) == len(DELAYS)
