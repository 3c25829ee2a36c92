"""Redis lost under load and restarted empty.

Real processes (web, Celery worker, Celery beat) on PostgreSQL and kmock; Redis is a private
redis-server (never the shared one). 100 websocket clients follow the tenant's events with the
documented protocol (on connect: subscribe, then fetch the REST snapshot; on a sequence gap or
a lost socket: reconnect and fetch again). Redis is SIGKILLed; while it is down, 50 jobs are
submitted over REST and read back; then Redis restarts with no data (no queue, no sequence
counters, no channel groups).

Pass: no REST answer is a 5xx other than the readiness probe's 503, all 50 submissions are
kept, all 50 jobs are dispatched to the cluster within 60 s of Redis returning, and every
client resynchronises after Redis returns (a REST snapshot with all 50 jobs, then live events
again).

The worker and beat are restarted if they exit, as their Deployments' restart policy does in
production: kombu 5.7's Redis transport can crash the worker on a broker loss ("Unrecoverable
error: AttributeError ... 'hostname'" while it restores unacknowledged messages on a closed
connection; seen once in a CI run on this machine). The restarts are reported."""

from __future__ import annotations

import asyncio
import os
import random
import time
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest

from apps.accounts.services import create_token
from apps.tenancy.models import Role
from tests.conftest import World
from tests.kube.conftest import Cluster
from tests.kube.test_worker_kill import _created
from tests.net import free_port
from tests.reliability.conftest import process_env
from tests.reliability.helpers import closing, make_capacity
from tests.reliability.stack import PrivateRedis, Stack, api

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

CLIENTS = int(os.environ.get("ZS_REDIS_LOSS_CLIENTS", "100"))
JOBS = 50
BODY = {"kind": "training", "priority": 4, "image": "pytorch:2.5", "command": ["train"],
        "replica_groups": [{"name": "w", "replicas": 1, "accelerators": 1}],
        "accelerator_model": "A800"}  # fmt: skip


@dataclass
class Client:
    """What one websocket client saw after Redis came back."""

    connects: int = 0
    snapshot_after: int = -1  # jobs in the newest REST snapshot taken after Redis returned
    events_after: int = 0
    resyncs: int = 0  # REST snapshots fetched (connects and sequence gaps), for post-mortems


async def test_redis_restarted_empty_under_load(
    world_sync: World, cluster: Cluster, tmp_path: Path
) -> None:
    private = PrivateRedis(free_port(), tmp_path / "redis.log")
    await private.start()
    pool, token = await asyncio.to_thread(
        closing(lambda: (
            make_capacity(world_sync, JOBS, "rloss"),
            create_token(user=world_sync.user("a", Role.MEMBER), name="rloss")[1],
        ))
    )  # fmt: skip
    stack = Stack(process_env(tmp_path, str(cluster.kmock.url), private.url), tmp_path)
    jobs_url = f"{stack.url}/api/v1/tenants/tenant-a/jobs/"
    ws_url = stack.url.replace("http", "ws") + "/ws/v1/events/"
    clients = [Client() for _ in range(CLIENTS)]
    back_at: float | None = None
    probe: int | None = None  # a job changed after every client resynced: all must see it
    stop = asyncio.Event()
    server_errors: list[tuple[str, int]] = []

    async def follow(http: aiohttp.ClientSession, me: Client) -> None:
        async def resync() -> None:
            me.resyncs += 1
            status, body = await api(http, "GET", f"{jobs_url}?page_size=500", token)
            if status >= 500:
                server_errors.append(("GET jobs", status))
            elif status == 200 and back_at is not None:
                me.snapshot_after = len(body["results"])
                if probe is not None and any(
                    j["id"] == probe and j["state"] == "cancelled" for j in body["results"]
                ):
                    me.events_after += 1  # reconnected after the change: the snapshot has it

        attempt = 0
        while not stop.is_set():
            try:
                async with http.ws_connect(ws_url, protocols=[f"bearer.{token}"],
                                           headers={"Origin": stack.url}) as ws:  # fmt: skip
                    me.connects += 1
                    attempt = 0
                    await ws.send_json({"action": "subscribe", "topic": "tenant:tenant-a"})
                    await resync()
                    last_seq: int | None = None
                    async for message in ws:
                        if message.type != aiohttp.WSMsgType.TEXT:
                            break
                        data = message.json()
                        if data.get("type") != "job.updated":
                            continue
                        if last_seq is not None and data["seq"] != last_seq + 1:
                            await resync()  # a gap (or a counter that restarted): refetch
                        last_seq = data["seq"]
                        if probe is not None and data["data"].get("id") == probe:
                            me.events_after += 1
                        if stop.is_set():
                            break
            except (TimeoutError, aiohttp.ClientError):
                pass
            # The dashboard's policy (frontend/src/lib/events.ts): 1 s doubling to 30 s, +-20%,
            # the attempt count reset when a socket opens.
            delay = min(30.0, 2.0**attempt) * (0.8 + 0.4 * random.random())
            attempt += 1
            await asyncio.sleep(delay)

    supervisor: asyncio.Task[None] | None = None
    try:
        await stack.start()
        supervisor = asyncio.create_task(stack.supervise())
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as http:
            followers = [asyncio.create_task(follow(http, c)) for c in clients]
            for _ in range(240):
                if all(c.connects for c in clients):
                    break
                await asyncio.sleep(0.25)
            assert all(c.connects for c in clients), "not every client connected"

            await private.kill()  # Redis lost
            submitted: set[int] = set()
            for i in range(JOBS):
                status, body = await api(http, "POST", jobs_url, token,
                                         {**BODY, "name": f"r{i}", "pool": pool.pk})  # fmt: skip
                assert status == 201, (status, body)
                submitted.add(int(body["id"]))
            status, body = await api(http, "GET", f"{jobs_url}?page_size=500", token)
            assert status == 200 and {j["id"] for j in body["results"]} >= submitted
            async with http.get(f"{stack.url}/readyz") as response:
                assert response.status == 503  # honest about the broker, not a 500

            await private.start()  # back, empty
            back_at = time.monotonic()
            dispatched_in: float | None = None
            while time.monotonic() - back_at < 60:
                if _created(cluster) >= {f"zs-train-{pk}" for pk in submitted}:
                    dispatched_in = time.monotonic() - back_at
                    break
                await asyncio.sleep(0.25)
            assert dispatched_in is not None, (
                f"{len(_created(cluster))}/{JOBS} dispatched 60 s after Redis returned"
            )
            # Clients: a fresh snapshot with every job, then live events again.
            for _ in range(240):
                if all(c.snapshot_after >= JOBS for c in clients):
                    break
                await asyncio.sleep(0.25)
            probe = min(submitted)
            status, _ = await api(http, "POST", f"{jobs_url}{probe}/cancel/", token)
            assert status == 200
            for _ in range(120):
                if all(c.events_after for c in clients):
                    break
                await asyncio.sleep(0.25)
            stop.set()
            for task in followers:
                task.cancel()
            await asyncio.gather(*followers, return_exceptions=True)
    finally:
        if supervisor is not None:
            supervisor.cancel()
            await asyncio.gather(supervisor, return_exceptions=True)
        await stack.kill9()
        await private.kill()
    behind = [i for i, c in enumerate(clients) if c.snapshot_after < JOBS or not c.events_after]
    assert not behind, f"{len(behind)} clients did not resync: {[clients[i] for i in behind[:3]]}"
    assert not server_errors, server_errors
    print(f"\ndispatched {JOBS} jobs {dispatched_in:.1f} s after Redis returned; "
          f"reconnects per client: {sorted(c.connects for c in clients)[::25]}; "
          f"snapshots per client: {sorted(c.resyncs for c in clients)[::25]}; "
          f"process restarts: {stack.restarts or 'none'}")  # fmt: skip
