"""``/notebooks/<job id>/...``: the authenticated reverse proxy in front of every notebook.

The browser signs in to the platform only. This view checks who may open the notebook
(``apps.jobs.notebooks``), asks the cluster backend where it listens, adds the notebook's
token on the way up and streams the answer back. The token never reaches the browser: it is not
in the URL, and any copy of it in a response (JupyterLab's page config carries one) is cut out.

Websockets (Jupyter kernels) go through ``apps.jobs.notebook_socket`` with the same checks.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from http.cookies import CookieError, SimpleCookie

import httpx
from asgiref.sync import sync_to_async
from django.http import HttpRequest, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect
from django.utils.http import url_has_allowed_host_and_scheme, urlencode
from django.views.decorators.csrf import csrf_exempt

from apps.accounts.models import User
from apps.clusters.backends import NotebookEndpoint
from apps.jobs.notebook_pages import page
from apps.jobs.notebooks import Refusal, endpoint_for, notebook_for

logger = logging.getLogger(__name__)

# Headers that describe one connection, not the message (RFC 9110 7.6.1), plus ones we set.
_HOP_BY_HOP = frozenset(
    {
        "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te",
        "trailer", "transfer-encoding", "upgrade", "host", "content-length",
        "accept-encoding", "content-encoding", "authorization",
    }
)  # fmt: skip
# The platform's own cookies stay with the platform: the notebook is the owner's code.
_PLATFORM_COOKIES = frozenset({"sessionid", "csrftoken"})
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_TIMEOUT = httpx.Timeout(10.0, read=300.0)  # long reads: kernels and file downloads
_VSCODE_COOKIE = "code-server-session"
_vscode_sessions: dict[str, str] = {}  # upstream base URL -> code-server session cookie


def _same_origin(request: HttpRequest) -> bool:
    """Whether a state-changing request comes from the platform's own pages. The proxy cannot
    use Django's CSRF token (JupyterLab does not send it), and the injected token would exempt
    the request from Jupyter's own XSRF check, so the origin is checked here."""
    origin = request.headers.get("Origin")
    if origin:
        return url_has_allowed_host_and_scheme(
            origin + "/", allowed_hosts={request.get_host()}, require_https=request.is_secure()
        )
    return request.headers.get("Sec-Fetch-Site", "same-origin") in {"same-origin", "none"}


def _upstream_headers(request: HttpRequest, endpoint: NotebookEndpoint) -> dict[str, str]:
    headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP_BY_HOP}
    headers.pop("Cookie", None)
    cookies = [
        f"{name}={value}"
        for name, value in request.COOKIES.items()
        if name not in _PLATFORM_COOKIES and name != _VSCODE_COOKIE
    ]
    if endpoint.flavor == "vscode" and endpoint.base_url in _vscode_sessions:
        cookies.append(f"{_VSCODE_COOKIE}={_vscode_sessions[endpoint.base_url]}")
    if cookies:
        headers["Cookie"] = "; ".join(cookies)
    headers["Accept-Encoding"] = "identity"  # plain bodies, so the token can be cut out
    headers["Authorization"] = f"token {endpoint.token}"
    headers["X-Forwarded-Host"] = request.get_host()
    headers["X-Forwarded-Proto"] = request.scheme or "http"
    return headers


async def _vscode_login(client: httpx.AsyncClient, endpoint: NotebookEndpoint) -> None:
    """code-server has no token header: log in once with the token as its password and keep
    the session cookie on the platform side."""
    if endpoint.base_url in _vscode_sessions:
        return
    answer = await client.post(endpoint.base_url + "login", data={"password": endpoint.token})
    cookie = answer.cookies.get(_VSCODE_COOKIE)
    if cookie:
        _vscode_sessions[endpoint.base_url] = cookie


def _scrub(data: bytes, secret: bytes) -> bytes:
    while secret in data:
        data = data.replace(secret, b"")
    return data


async def _stream(
    upstream: httpx.Response, client: httpx.AsyncClient, token: str
) -> AsyncIterator[bytes]:
    """The upstream body with every copy of the token removed, even one split across chunks:
    the last ``len(token) - 1`` bytes wait for the next chunk before they are sent."""
    secret = token.encode()
    keep = len(secret) - 1
    pending = b""
    try:
        async for chunk in upstream.aiter_raw():
            pending = _scrub(pending + chunk, secret)
            if len(pending) > keep:
                yield pending[: len(pending) - keep]
                pending = pending[len(pending) - keep :]
        if pending:
            yield pending
    finally:
        await upstream.aclose()
        await client.aclose()


@csrf_exempt  # checked by origin instead, see _same_origin
async def notebook_proxy(
    request: HttpRequest, job_id: str, path: str | None = None
) -> HttpResponseBase:
    if not path:  # JupyterLab's relative links need the trailing slash
        return redirect(f"/notebooks/{job_id}/")
    path = path[1:]
    user = await request.auser()
    if not user.is_authenticated:
        if request.method in _SAFE_METHODS:
            return redirect(f"/login?{urlencode({'next': request.get_full_path()})}")
        return page(request, 401, "signIn")
    if request.method not in _SAFE_METHODS and not _same_origin(request):
        return page(request, 403, "crossSite")
    assert isinstance(user, User)
    try:
        job = await sync_to_async(notebook_for)(user, int(job_id))
        endpoint = await sync_to_async(endpoint_for)(job)
    except Refusal as refusal:
        return page(request, refusal.status, refusal.key, **refusal.args_)

    url = endpoint.base_url + path
    if request.META.get("QUERY_STRING"):
        url += "?" + request.META["QUERY_STRING"]
    client = httpx.AsyncClient(timeout=_TIMEOUT, follow_redirects=False)
    try:
        if endpoint.flavor == "vscode":
            await _vscode_login(client, endpoint)
        upstream_request = client.build_request(
            request.method or "GET",
            url,
            headers=_upstream_headers(request, endpoint),
            content=request.body,
        )
        upstream = await client.send(upstream_request, stream=True)
    except httpx.HTTPError as exc:
        await client.aclose()
        logger.warning("notebook %s unreachable at %s: %s", job.pk, endpoint.base_url, exc)
        return page(request, 502, "noAnswer", name=job.name)

    response = StreamingHttpResponse(
        _stream(upstream, client, endpoint.token), status=upstream.status_code
    )
    for name, value in upstream.headers.multi_items():
        if name.lower() in _HOP_BY_HOP or name.lower() == "set-cookie":
            continue
        response[name] = value.replace(endpoint.token, "")
    _pass_cookies(upstream, response, endpoint.token)
    return response


def _pass_cookies(upstream: httpx.Response, response: HttpResponseBase, token: str) -> None:
    """Hand the notebook's cookies (Jupyter's ``_xsrf``...) to the browser, except any that
    would replace the platform's own."""
    for raw in upstream.headers.get_list("set-cookie"):
        jar: SimpleCookie = SimpleCookie()
        try:
            jar.load(raw.replace(token, ""))
        except CookieError:
            continue
        for name, morsel in jar.items():
            if name not in _PLATFORM_COOKIES:
                response.cookies[name] = morsel
