"""A small REST client for the Zhisuan API (requests, bearer token, JSON errors)."""

from __future__ import annotations

import builtins
from typing import Any
from urllib.parse import parse_qs, urlsplit

import requests

from zhisuan import __version__


class ApiError(Exception):
    """The API answered with an error status. ``errors`` holds field errors of a 400."""

    def __init__(self, status: int, detail: str, errors: dict[str, list[str]] | None = None):
        super().__init__(f"HTTP {status}: {detail}")
        self.status = status
        self.detail = detail
        self.errors = errors or {}

    @property
    def retryable(self) -> bool:
        return self.status >= 500 or self.status in (408, 425, 429)


class NotApiError(ApiError):
    """The server answered, but not as the Zhisuan API: a page that is not JSON (a wrong base
    URL, a proxy's error page). Only the status and content type are kept, never the body."""

    def __init__(self, status: int, content_type: str, url: str) -> None:
        self.content_type = content_type or "no content type"
        self.url = url
        super().__init__(status, f"not a Zhisuan API answer ({self.content_type})")


class ApiClient:
    """``url`` is the server's base (``https://zhisuan.example.com``); ``tenant`` the slug."""

    def __init__(self, url: str, token: str, tenant: str, *, timeout: float = 10.0) -> None:
        self.url = url.rstrip("/")
        self.tenant = tenant
        self.timeout = timeout
        self._token = token
        self.session = requests.Session()
        self.session.headers.update(
            {"Authorization": f"Bearer {token}", "User-Agent": f"zhisuan-sdk/{__version__}"}
        )

    def clone(self, *, timeout: float | None = None) -> ApiClient:
        """The same server, token and tenant on a session of its own, for another thread (a
        requests.Session is not meant to be shared between threads)."""
        return ApiClient(self.url, self._token, self.tenant, timeout=timeout or self.timeout)

    def tenant_path(self, path: str) -> str:
        return f"/api/v1/tenants/{self.tenant}/{path.lstrip('/')}"

    def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: dict[str, Any] | None = None,
        timeout: float | None = None,
    ) -> Any:
        """JSON of a 2xx answer; raises ApiError for an error answer and
        requests.RequestException when the server cannot be reached."""
        resp = self.session.request(
            method,
            f"{self.url}{path}",
            json=json,
            params=params,
            timeout=timeout or self.timeout,
        )
        if resp.status_code >= 400:
            raise _error(resp, self.url)
        if resp.status_code == 204 or not resp.content:
            return None
        try:
            return resp.json()
        except ValueError:
            raise _not_api(resp, self.url) from None

    def get(self, path: str, **params: Any) -> Any:
        return self.request("GET", path, params=params or None)

    def get_text(self, path: str) -> str:
        """The body of a 2xx answer that is not JSON (a CSV export); ApiError otherwise."""
        resp = self.session.get(f"{self.url}{path}", timeout=self.timeout)
        if resp.status_code >= 400:
            raise _error(resp, self.url)
        resp.encoding = resp.encoding or "utf-8"
        return resp.text

    # The server's largest page.
    MAX_PAGE = 500

    def list(self, path: str, limit: int, **params: Any) -> list[Any]:
        """Up to ``limit`` rows of a paginated list, in its order, page after page. The next
        page is asked for by its cursor on ``path`` (not by the absolute ``next`` link, whose
        host a proxy in front of the server may have rewritten)."""
        return self.list_more(path, limit, **params)[0]

    def list_more(self, path: str, limit: int, **params: Any) -> tuple[builtins.list[Any], bool]:
        """``list``, and whether the list has more rows than ``limit``."""
        rows: builtins.list[Any] = []
        cursor: str | None = None
        while len(rows) < limit:
            size = min(limit - len(rows), self.MAX_PAGE)
            # requests leaves out a None parameter: the first page is asked without a cursor.
            page = self.get(path, **params, page_size=size, cursor=cursor)
            rows += page["results"]
            cursor = _cursor(page.get("next"))
            if cursor is None:
                break
        return rows[:limit], len(rows) > limit or cursor is not None

    def post(self, path: str, body: Any = None) -> Any:
        return self.request("POST", path, json=body)

    def patch(self, path: str, body: Any) -> Any:
        return self.request("PATCH", path, json=body)


def _error(resp: requests.Response, base: str) -> ApiError:
    try:
        body = resp.json()
    except ValueError:
        body = None
    if not isinstance(body, dict):
        return _not_api(resp, base)
    detail = str(body.get("detail") or resp.reason or "error")
    errors: dict[str, list[str]] = {}
    raw = body.get("errors")
    if isinstance(raw, dict):
        _flatten(raw, "", errors)
    return ApiError(resp.status_code, detail, errors)


def _not_api(resp: requests.Response, base: str) -> NotApiError:
    content_type = resp.headers.get("Content-Type", "").split(";")[0].strip()
    return NotApiError(resp.status_code, content_type, base)


def _flatten(raw: Any, path: str, out: dict[str, list[str]]) -> None:
    """Nested field errors, one path per leaf: ``{"replica_groups": {"0": {"gpus": [m]}}}``
    (or ``[{}, {"gpus": [m]}]``) gives ``replica_groups[0].gpus`` (``[1]``): ``[m]``. DRF's
    ``non_field_errors`` stands for the object around it: ``replica_groups``, or ``""`` (the
    whole request) at the top."""
    if isinstance(raw, dict):
        for key, value in raw.items():
            key = str(key)
            if key == "non_field_errors":  # DRF's name for "the object as a whole": its path
                sub = path
            elif not path:
                sub = key
            elif key.isdigit():
                sub = f"{path}[{key}]"
            else:
                sub = f"{path}.{key}"
            _flatten(value, sub, out)
    elif isinstance(raw, list):
        for index, value in enumerate(raw):
            if isinstance(value, (dict, list)):
                _flatten(value, f"{path}[{index}]", out)
            else:
                out.setdefault(path, []).append(str(value))
    else:
        out.setdefault(path, []).append(str(raw))


def _cursor(link: str | None) -> str | None:
    if not link:
        return None
    return parse_qs(urlsplit(link).query).get("cursor", [None])[0]
