"""The outbox relay killed twenty times between publishing and marking sent, then every
dispatch message delivered three times: no job lost, exactly one cluster object per job.

Injected: a relay process (forked from a warm fork server, real Kubernetes client over HTTP
to kmock, real PostgreSQL) is SIGKILLed right after the API server created a job's object and
before the outbox row's transaction committed, 20 times, each time on a different job. Then
the rest is relayed by three concurrent relays (the same message delivered three times).

Pass: the cluster holds exactly one Volcano Job per job (the 20 crashed ones included), every
outbox row is done, every job is dispatching, and each job was dispatched exactly once."""

from __future__ import annotations

import asyncio
import functools
import os
import signal
import sys
from collections import Counter
from pathlib import Path

import pytest

from apps.clusters.backends.kubernetes.backend import KubernetesBackend
from apps.jobs.models import Job, JobEvent, OutboxEntry
from apps.jobs.relay import relay
from tests.conftest import World
from tests.kube.conftest import Cluster
from tests.kube.test_worker_kill import ROOT, _created
from tests.reliability.conftest import process_env
from tests.reliability.helpers import admit_jobs, closing

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

JOBS = 30
KILLS = 20


def _outbox_state(job_id: int) -> str:
    return str(OutboxEntry.objects.get(job_id=job_id).state)


async def _line(proc: asyncio.subprocess.Process) -> str:
    assert proc.stdout is not None
    raw = await asyncio.wait_for(proc.stdout.readline(), timeout=60)
    assert raw, "the fork server died"
    return raw.decode().strip()


async def test_relay_killed_twenty_times_then_triple_delivery(
    world_sync: World, cluster: Cluster, tmp_path: Path
) -> None:
    await asyncio.to_thread(closing(lambda: admit_jobs(world_sync, JOBS)))

    env = process_env(tmp_path, str(cluster.kmock.url), "redis://127.0.0.1:6379/9")
    server = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.reliability.relay_forkserver", cwd=ROOT, env=env,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert server.stdin is not None
    crashed: list[int] = []
    try:
        for _ in range(KILLS):
            server.stdin.write(b"go\n")
            await server.stdin.drain()
            what, pid, job_id = (await _line(server)).split()
            assert what == "published"
            os.kill(int(pid), signal.SIGKILL)
            assert await _line(server) == "reaped"
            crashed.append(int(job_id))
            # The object exists, the row is still pending: exactly the crash window.
            assert f"zs-train-{job_id}" in _created(cluster)
            entry_state = functools.partial(_outbox_state, int(job_id))
            state = await asyncio.to_thread(closing(entry_state))
            assert state == "pending"
    finally:
        server.stdin.close()
        await asyncio.wait_for(server.wait(), timeout=30)
    assert len(set(crashed)) == KILLS  # twenty different jobs, each crashed once

    # Every remaining dispatch message delivered three times, three relays at once.
    backend = KubernetesBackend(cluster.api_client)

    def deliver() -> int:
        return sum(relay(backend=backend) for _ in range(3))

    await asyncio.gather(*(asyncio.to_thread(closing(deliver)) for _ in range(3)))

    names = _created(cluster)
    job_ids = await asyncio.to_thread(
        closing(lambda: sorted(Job.objects.values_list("pk", flat=True)))
    )
    assert names == {f"zs-train-{pk}" for pk in job_ids}
    summary = await asyncio.to_thread(
        closing(
            lambda: (
                Counter(OutboxEntry.objects.values_list("state", flat=True)),
                Counter(Job.objects.values_list("state", flat=True)),
                Counter(
                    JobEvent.objects.filter(reason="Dispatched").values_list("job_id", flat=True)
                ),
            )
        )
    )
    outbox, states, dispatched = summary
    assert outbox == Counter({"done": JOBS})
    assert states == Counter({"dispatching": JOBS})
    assert dispatched == Counter({pk: 1 for pk in job_ids})
