"""A small REST client for the Zhisuan API (requests, bearer token, JSON errors)."""

from __future__ import annotations

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


class ApiClient:
    """``url`` is the server's base (``https://zhisuan.example.com``); ``tenant`` the slug."""

    def __init__(self, url: str, token: str, tenant: str, *, timeout: float = 10.0) -> None:
        self.url = url.rstrip("/")
        self.tenant = tenant
        self.timeout = timeout
        self.session = requests.Session()
        self.session.headers.update(
            {"Authorization": f"Bearer {token}", "User-Agent": f"zhisuan-sdk/{__version__}"}
        )

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
            raise _error(resp)
        if resp.status_code == 204 or not resp.content:
            return None
        return resp.json()

    def get(self, path: str, **params: Any) -> Any:
        return self.request("GET", path, params=params or None)

    # The server's largest page.
    MAX_PAGE = 500

    def list(self, path: str, limit: int, **params: Any) -> list[Any]:
        """Up to ``limit`` rows of a paginated list, in its order, page after page. The next
        page is asked for by its cursor on ``path`` (not by the absolute ``next`` link, whose
        host a proxy in front of the server may have rewritten)."""
        rows: list[Any] = []
        cursor: str | None = None
        while len(rows) < limit:
            size = min(limit - len(rows), self.MAX_PAGE)
            # requests leaves out a None parameter: the first page is asked without a cursor.
            page = self.get(path, **params, page_size=size, cursor=cursor)
            rows += page["results"]
            cursor = _cursor(page.get("next"))
            if cursor is None:
                break
        return rows[:limit]

    def post(self, path: str, body: Any = None) -> Any:
        return self.request("POST", path, json=body)

    def patch(self, path: str, body: Any) -> Any:
        return self.request("PATCH", path, json=body)


def _error(resp: requests.Response) -> ApiError:
    try:
        body = resp.json()
    except ValueError:
        body = None
    if isinstance(body, dict):
        detail = str(body.get("detail") or resp.reason or "error")
        raw = body.get("errors")
        errors: dict[str, list[str]] = {}
        if isinstance(raw, dict):
            for field, msgs in raw.items():
                errors[str(field)] = (
                    [str(m) for m in msgs] if isinstance(msgs, list) else [str(msgs)]
                )
        return ApiError(resp.status_code, detail, errors)
    text = (resp.text or resp.reason or "error").strip()
    return ApiError(resp.status_code, text[:300])


def _cursor(link: str | None) -> str | None:
    if not link:
        return None
    return parse_qs(urlsplit(link).query).get("cursor", [None])[0]
