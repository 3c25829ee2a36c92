"""Opening a notebook through the platform: /notebooks/<id>/ proxies to the notebook with its
token added server-side. On the simulated cluster the notebook is a real local HTTP server, so
these tests make a real HTTP hop through the proxy."""

from __future__ import annotations

from html import unescape
from typing import Any

import httpx
import pytest
from asgiref.sync import async_to_sync
from django.test import AsyncClient
from django.utils.translation import override

from apps.accounts.models import User
from apps.clusters.backends.kubernetes.backend import KubernetesBackend
from apps.clusters.backends.kubernetes.manifests import render_notebook
from apps.clusters.backends.sim_notebook import SIMULATED_TITLE
from apps.jobs.models import Job, JobState, state_word
from apps.jobs.workload import build, notebook_token
from apps.tenancy.models import Role
from tests.conftest import World
from tests.factories import make_membership, make_user
from tests.jobs.conftest import Cluster, notebook_body, tick, training_body
from tests.ui_catalogue import section

pytestmark = pytest.mark.django_db


class Browser:
    """A signed-in browser. The proxy is an async view whose body streams from an upstream
    connection, so request and body are read in one event loop, as under the ASGI server
    (``async_to_sync`` from this thread keeps the test's database connection)."""

    def __init__(self, user: User | None) -> None:
        self.client = AsyncClient()
        if user is not None:
            self.client.force_login(user)

    def request(self, method: str, path: str, **extra: Any) -> tuple[Any, bytes]:
        async def go() -> tuple[Any, bytes]:
            response = await getattr(self.client, method)(path, **extra)
            if getattr(response, "streaming", False):
                body = b"".join([part async for part in response.streaming_content])
            else:
                body = bytes(response.content)
            return response, body

        return async_to_sync(go)()

    def get(self, path: str, **extra: Any) -> tuple[Any, bytes]:
        return self.request("get", path, **extra)


def status_of(user: User, path: str) -> int:
    return int(Browser(user).get(path)[0].status_code)


def start_notebook(world: World, client_for: Any, cluster: Cluster, **overrides: Any) -> Job:
    api = client_for(world.user("a", Role.MEMBER))
    response = api.post(
        "/api/v1/tenants/tenant-a/jobs/", notebook_body(cluster, **overrides), format="json"
    )
    assert response.status_code == 201, response.json()
    job_id = response.json()["id"]
    assert response.json()["open_url"] is None  # queued: nothing to open yet
    tick(cluster)
    tick(cluster, 6)
    job = Job.objects.get(pk=job_id)
    assert job.state == "running"
    return job


def test_owner_opens_the_simulated_notebook_through_the_proxy(
    world: World, client_for: Any, cluster: Cluster
) -> None:
    job = start_notebook(world, client_for, cluster)
    api = client_for(world.user("a", Role.MEMBER))
    listed = api.get(f"/api/v1/tenants/tenant-a/jobs/{job.pk}/").json()
    assert listed["open_url"] == f"/notebooks/{job.pk}/"

    response, body = Browser(world.user("a", Role.MEMBER)).get(listed["open_url"])
    assert response.status_code == 200
    page = body.decode()
    assert SIMULATED_TITLE in page
    assert "explore" in page and "quay.io/jupyter/base-notebook:latest" in page
    assert "1 x nvidia.com/gpu" in page
    assert cluster.backend.notebook_server_count() == 1

    # The page really came from the notebook's own server, which refuses callers without
    # the token: the proxy added it.
    endpoint = cluster.backend.notebook_endpoint(build(job))
    assert endpoint.simulated and endpoint.base_url.startswith("http://127.0.0.1:")
    assert httpx.get(endpoint.base_url).status_code == 403
    token = notebook_token(job)
    assert token not in page
    assert all(token not in str(value) for value in response.headers.values())


def test_json_below_the_prefix_is_proxied_with_the_query(world, client_for, cluster) -> None:
    job = start_notebook(world, client_for, cluster)
    response, body = Browser(world.user("a", Role.MEMBER)).get(
        f"/notebooks/{job.pk}/api/status?x=1"
    )
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert b'"simulated": true' in body


def test_missing_trailing_slash_redirects(world, client_for, cluster) -> None:
    job = start_notebook(world, client_for, cluster)
    response, _ = Browser(world.user("a", Role.MEMBER)).get(f"/notebooks/{job.pk}")
    assert response.status_code == 302 and response["Location"] == f"/notebooks/{job.pk}/"


def test_tenant_admin_may_open_it_but_not_another_member_or_viewer(
    world, client_for, cluster
) -> None:
    job = start_notebook(world, client_for, cluster)
    url = f"/notebooks/{job.pk}/"
    detail = f"/api/v1/tenants/tenant-a/jobs/{job.pk}/"
    assert client_for(world.user("a", Role.TENANT_ADMIN)).get(detail).json()["open_url"] == url
    assert client_for(world.user("a", Role.VIEWER)).get(detail).json()["open_url"] is None
    assert status_of(world.user("a", Role.TENANT_ADMIN), url) == 200
    assert status_of(world.platform_admin, url) == 200
    response, body = Browser(world.user("a", Role.VIEWER)).get(url)
    assert response.status_code == 403
    assert SIMULATED_TITLE.encode() not in body
    colleague = make_user("a-member-2")
    make_membership(tenant=world.tenant_a, user=colleague, role=Role.MEMBER)
    assert status_of(colleague, url) == 403


def test_another_tenant_gets_404(world, client_for, cluster) -> None:
    job = start_notebook(world, client_for, cluster)
    for role in Role:
        assert status_of(world.user("b", role), f"/notebooks/{job.pk}/") == 404
    assert status_of(world.user("b", Role.MEMBER), "/notebooks/999999/") == 404


def test_anonymous_is_sent_to_login(world, client_for, cluster) -> None:
    job = start_notebook(world, client_for, cluster)
    response, _ = Browser(None).get(f"/notebooks/{job.pk}/")
    assert response.status_code == 302
    assert response["Location"].startswith("/login?next=")


def test_not_running_notebook_is_409_and_its_server_stops(world, client_for, cluster) -> None:
    api = client_for(world.user("a", Role.MEMBER))
    created = api.post("/api/v1/tenants/tenant-a/jobs/", notebook_body(cluster), format="json")
    job_id = created.json()["id"]
    owner = Browser(world.user("a", Role.MEMBER))
    response, body = owner.get(f"/notebooks/{job_id}/")  # queued
    assert response.status_code == 409
    assert b"not running" in body

    tick(cluster)
    tick(cluster, 6)
    assert owner.get(f"/notebooks/{job_id}/")[0].status_code == 200
    assert cluster.backend.notebook_server_count() == 1
    assert api.post(f"/api/v1/tenants/tenant-a/jobs/{job_id}/cancel/").status_code == 200
    tick(cluster)
    assert cluster.backend.notebook_server_count() == 0
    assert owner.get(f"/notebooks/{job_id}/")[0].status_code == 409
    assert api.get(f"/api/v1/tenants/tenant-a/jobs/{job_id}/").json()["open_url"] is None


def test_refusal_pages_speak_the_readers_language(world, client_for, cluster) -> None:
    api = client_for(world.user("a", Role.MEMBER))
    created = api.post("/api/v1/tenants/tenant-a/jobs/", notebook_body(cluster), format="json")
    url = f"/notebooks/{created.json()['id']}/"
    owner = Browser(world.user("a", Role.MEMBER))
    # The browser's language when the dashboard never said (no cookie).
    response, body = owner.get(url, headers={"Accept-Language": "zh-CN,zh;q=0.9,en;q=0.8"})
    assert response.status_code == 409 and response["Content-Language"] == "zh-CN"
    assert "开发环境 explore 当前状态为“排队中”，未在运行。" in body.decode()  # noqa: RUF001
    assert "<html lang='zh-CN'>" in body.decode() and "返回开发环境列表" in body.decode()
    # The dashboard's choice wins over the browser's.
    owner.client.cookies["zs_lang"] = "en"
    response, body = owner.get(url, headers={"Accept-Language": "zh-CN"})
    assert b"Notebook explore is queued, not running." in body
    viewer = Browser(world.user("a", Role.VIEWER))
    viewer.client.cookies["zs_lang"] = "zh"
    response, body = viewer.get(url)
    assert response.status_code == 403
    assert "只有开发环境的所有者或租户管理员可以打开它。" in body.decode()
    viewer.client.cookies["zs_lang"] = "fr"  # not one of ours: the browser's, then English
    assert "Only the notebook's owner or a tenant admin can open it." in unescape(
        viewer.get(url)[1].decode()
    )


def test_sentences_name_job_states_as_the_dashboard_does() -> None:
    dashboard = section("jobState", "zh")
    assert set(dashboard) == set(JobState.values)
    for state in JobState.values:
        with override("zh-hans"):
            assert state_word(state) == dashboard[state], state
        with override("en"):
            assert state_word(state) == state


def test_training_job_is_not_a_notebook(world, client_for, cluster) -> None:
    api = client_for(world.user("a", Role.MEMBER))
    job = api.post("/api/v1/tenants/tenant-a/jobs/", training_body(cluster.pool), format="json")
    assert status_of(world.user("a", Role.MEMBER), f"/notebooks/{job.json()['id']}/") == 404


def test_cross_site_post_is_refused(world, client_for, cluster) -> None:
    job = start_notebook(world, client_for, cluster)
    response, _ = Browser(world.user("a", Role.MEMBER)).request(
        "post", f"/notebooks/{job.pk}/api/kernels", data=b"{}",
        content_type="application/json", headers={"Origin": "https://evil.example"},
    )  # fmt: skip
    assert response.status_code == 403
    # The same request from the platform's own origin reaches the notebook (whose simulated
    # server answers GET only, hence http.server's 501).
    response, _ = Browser(world.user("a", Role.MEMBER)).request(
        "post", f"/notebooks/{job.pk}/api/kernels", data=b"{}",
        content_type="application/json", headers={"Origin": "http://testserver"},
    )  # fmt: skip
    assert response.status_code == 501


def test_token_split_across_chunks_is_cut_out() -> None:
    import asyncio

    from apps.jobs.notebook_proxy import _stream

    token = "t0k3n-abcdefghijklmnop"
    chunks = [b"<p>before t0k3n-abc", b"defghij", b"klmnop after</p>", b"and " + token.encode()]

    async def collect() -> bytes:
        transport = httpx.MockTransport(lambda request: httpx.Response(200))
        client = httpx.AsyncClient(transport=transport)

        async def body() -> Any:
            for chunk in chunks:
                yield chunk

        upstream = httpx.Response(200, content=body())
        return b"".join([part async for part in _stream(upstream, client, token)])

    result = asyncio.run(collect())
    assert result == b"<p>before  after</p>and "


def test_kubernetes_backend_resolves_the_service_dns_name(world: World, cluster: Cluster) -> None:
    owner = world.user("a", Role.MEMBER)
    job = Job.objects.create(
        tenant=world.tenant_a, owner=owner, name="nb", kind="notebook", pool=cluster.pool,
        state="running",
        spec={
            "image": "quay.io/jupyter/base-notebook:latest",
            "replica_groups": [{"name": "notebook", "replicas": 1, "accelerators": 0}],
            "notebook": {"flavor": "jupyter", "storage_gib": 5},
        },
    )  # fmt: skip
    spec = build(job)
    backend = KubernetesBackend(api_client=None)
    endpoint = backend.notebook_endpoint(spec)
    assert endpoint.base_url == f"http://zs-nb-{job.pk}.zs-tenant-a.svc:8888/notebooks/{job.pk}/"
    assert endpoint.token == notebook_token(job) and not endpoint.simulated
    # JupyterLab is told to serve under exactly the prefix the proxy keeps.
    statefulset = render_notebook(spec)[-1]
    args = statefulset["spec"]["template"]["spec"]["containers"][0]["args"]
    assert f"--ServerApp.base_url=/notebooks/{job.pk}/" in args

    job.spec = {**job.spec, "notebook": {"flavor": "vscode", "storage_gib": 5}}
    endpoint = backend.notebook_endpoint(build(job))
    assert endpoint.base_url == f"http://zs-nb-{job.pk}.zs-tenant-a.svc:8080/"
    assert endpoint.flavor == "vscode"

    # A notebook stored without a size gets the API's default home volume, not a smaller one.
    job.spec = {**job.spec, "notebook": {"flavor": "jupyter"}}
    claim = render_notebook(build(job))[-1]["spec"]["volumeClaimTemplates"][0]
    assert claim["spec"]["resources"]["requests"]["storage"] == "20Gi"
