"""The production stack as real processes for the reliability tests: a private Redis, the web
process (``manage.py serve``), a Celery worker and Celery beat, all on the test database and a
kmock API server. Output goes to files under the test's tmp_path for post-mortems."""

from __future__ import annotations

import asyncio
import signal
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import redis

from tests.kube.test_worker_kill import ROOT
from tests.net import free_port


@dataclass
class PrivateRedis:
    """A throwaway redis-server (no persistence): restarting it means it comes back empty.
    Never the shared 6379 one."""

    port: int
    log: Path
    proc: asyncio.subprocess.Process | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    async def start(self) -> None:
        with self.log.open("ab") as out:
            self.proc = await asyncio.create_subprocess_exec(
                "redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
                "--save", "", "--appendonly", "no", stdout=out, stderr=out,
            )  # fmt: skip
        client = redis.Redis(port=self.port)
        for _ in range(200):
            try:
                if client.ping():
                    return
            except redis.ConnectionError:
                await asyncio.sleep(0.05)
        raise AssertionError("private redis did not start")

    async def kill(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.send_signal(signal.SIGKILL)
            await self.proc.wait()


@dataclass
class Stack:
    env: dict[str, str]
    tmp: Path
    web_port: int = field(default_factory=free_port)
    procs: dict[str, asyncio.subprocess.Process] = field(default_factory=dict)
    commands: dict[str, tuple[str, ...]] = field(default_factory=dict)
    restarts: dict[str, int] = field(default_factory=dict)  # by ``supervise``

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.web_port}"

    async def _spawn(self, name: str, *args: str) -> None:
        self.commands[name] = args
        with (self.tmp / f"{name}.log").open("ab") as out:
            self.procs[name] = await asyncio.create_subprocess_exec(
                *args, cwd=ROOT, env=self.env, stdout=out, stderr=out
            )

    async def start(self) -> None:
        py = sys.executable
        await self._spawn("web", py, "manage.py", "serve", "--port", str(self.web_port))
        await self._spawn("worker", py, "-m", "celery", "-A", "config", "worker", "-P",
                          "threads", "-c", "4", "--without-heartbeat", "--without-mingle",
                          "--without-gossip", "--loglevel", "WARNING")  # fmt: skip
        schedule = str(self.tmp / "celerybeat-schedule")
        await self._spawn("beat", py, "-m", "celery", "-A", "config", "beat", "--schedule",
                          schedule, "--loglevel", "WARNING")  # fmt: skip
        async with aiohttp.ClientSession() as http:
            for _ in range(1200):  # up to 60 s on a busy machine
                for name, proc in self.procs.items():
                    assert proc.returncode is None, f"{name} exited; see {self.tmp}/{name}.log"
                try:
                    async with http.get(f"{self.url}/healthz") as response:
                        if response.status == 200:
                            return
                except aiohttp.ClientError:
                    pass
                await asyncio.sleep(0.05)
        raise AssertionError("web did not come up")

    async def supervise(self, names: tuple[str, ...] = ("worker", "beat")) -> None:
        """Restart any of ``names`` that exits, as the production Deployments' restart policy
        does (platform/k8s/app, docker-compose ``restart: unless-stopped``); counted in
        ``restarts``. Run it as a task and cancel it before ``kill9``."""
        while True:
            for name in names:
                if self.procs[name].returncode is not None:
                    self.restarts[name] = self.restarts.get(name, 0) + 1
                    await self._spawn(name, *self.commands[name])
            await asyncio.sleep(0.5)

    async def kill9(self) -> None:
        """SIGKILL every process at once: no shutdown handler, no flush, no ack."""
        for proc in self.procs.values():
            if proc.returncode is None:
                proc.send_signal(signal.SIGKILL)
        for proc in self.procs.values():
            await proc.wait()


async def api(
    http: aiohttp.ClientSession, method: str, url: str, token: str, body: Any = None
) -> tuple[int, Any]:
    async with http.request(
        method, url, json=body, headers={"Authorization": f"Bearer {token}"}
    ) as response:
        text = await response.text()
        try:
            return response.status, await response.json(content_type=None)
        except ValueError:
            return response.status, text
