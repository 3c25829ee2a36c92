"""Websocket pass-through below /notebooks/<id>/ (Jupyter kernel channels): a real upstream
websocket server that demands the notebook's token, reached through the platform's consumer."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, cast

import pytest
import pytest_asyncio
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.http11 import Request, Response

from apps.accounts.services import create_token
from apps.clusters.backends import ClusterBackend, NotebookEndpoint, WorkloadSpec
from apps.clusters.registry import set_backend
from apps.jobs.models import Job
from apps.tenancy.models import Role
from config.asgi import application
from tests.conftest import World
from tests.factories import make_pool

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

TOKEN = "nb-token-0123456789abcdef"


@dataclass
class OneNotebookBackend:
    """Only what the proxy asks of a backend: where the notebook is."""

    base_url: str

    def notebook_endpoint(self, spec: WorkloadSpec) -> NotebookEndpoint:
        return NotebookEndpoint(base_url=self.base_url, token=TOKEN)


async def echo(connection: ServerConnection) -> None:
    path = connection.request.path if connection.request else ""
    async for message in connection:
        await connection.send(f"{path} got {message!s} {TOKEN}")


def require_token(connection: ServerConnection, request: Request) -> Response | None:
    if request.headers.get("Authorization") != f"token {TOKEN}":
        return connection.respond(403, "token required\n")
    if "sessionid" in (request.headers.get("Cookie") or ""):
        return connection.respond(400, "platform cookie leaked\n")
    return None


@pytest_asyncio.fixture
async def upstream() -> AsyncIterator[Server]:
    async with serve(echo, "127.0.0.1", 0, process_request=require_token) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        set_backend(cast(ClusterBackend, OneNotebookBackend(f"http://127.0.0.1:{port}/")))
        yield server
    set_backend(None)


@pytest_asyncio.fixture
async def world_async(db: Any) -> World:
    return await database_sync_to_async(World)()


def running_notebook(world: World, state: str = "running") -> Job:
    return Job.objects.create(
        tenant=world.tenant_a, owner=world.user("a", Role.MEMBER), name="nb", kind="notebook",
        pool=make_pool(name="nb"), state=state,
        spec={
            "image": "quay.io/jupyter/base-notebook:latest",
            "replica_groups": [{"name": "notebook", "replicas": 1}],
            "notebook": {"flavor": "jupyter"},
        },
    )  # fmt: skip


async def socket_for(world: World, tenant: str, role: Role, job: Job) -> WebsocketCommunicator:
    user = world.user(tenant, role)
    _row, token = await database_sync_to_async(create_token)(user=user, name="ws")
    return WebsocketCommunicator(
        application, f"/notebooks/{job.pk}/api/kernels/k1/channels?session_id=s1",
        headers=[(b"origin", b"http://127.0.0.1:8000"), (b"host", b"127.0.0.1:8000"),
                 (b"cookie", b"sessionid=secret; _xsrf=abc")],
        subprotocols=[f"bearer.{token}"],
    )  # fmt: skip


async def test_owner_talks_to_the_kernel_socket_with_the_token_added(
    world_async: World, upstream: Server
) -> None:
    job = await database_sync_to_async(running_notebook)(world_async)
    comm = await socket_for(world_async, "a", Role.MEMBER, job)
    connected, _ = await comm.connect()
    assert connected
    await comm.send_to(text_data="hello")
    answer = await comm.receive_from(timeout=5)
    # Path and query reach the notebook; the token it echoes back is cut out.
    assert answer == "/api/kernels/k1/channels?session_id=s1 got hello "
    await comm.disconnect()


async def test_other_tenant_and_stopped_notebooks_are_refused(
    world_async: World, upstream: Server
) -> None:
    job = await database_sync_to_async(running_notebook)(world_async)
    stopped = await database_sync_to_async(running_notebook)(world_async, "cancelled")
    for tenant, role, target, code in (
        ("b", Role.MEMBER, job, 4404),
        ("a", Role.VIEWER, job, 4403),
        ("a", Role.MEMBER, stopped, 4409),
    ):
        comm = await socket_for(world_async, tenant, role, target)
        assert await comm.connect() == (False, code)
        await comm.disconnect()  # let the refused consumer finish
