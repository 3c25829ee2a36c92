"""Where the SDK and the CLI find the platform: environment first, then the login file.

Inside a job the platform sets ``ZS_API_URL``, ``ZS_TOKEN``, ``ZS_TENANT``, ``ZS_JOB_ID`` and
``ZS_RUN_ID``. On a laptop ``zs login`` writes ``~/.config/zhisuan/config.json`` (or under
``$XDG_CONFIG_HOME``), readable by its owner only.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path


def config_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "zhisuan" / "config.json"


@dataclass(frozen=True)
class Settings:
    url: str | None
    token: str | None
    tenant: str | None
    job_id: int | None = None
    run_id: int | None = None

    @property
    def complete(self) -> bool:
        return bool(self.url and self.token and self.tenant)


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value else None
    except ValueError:
        return None


def load_file() -> dict[str, str]:
    try:
        data = json.loads(config_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return (
        {k: str(v) for k, v in data.items() if isinstance(v, str)} if isinstance(data, dict) else {}
    )


def save_file(*, url: str, token: str, tenant: str) -> Path:
    return _write({"url": url, "token": token, "tenant": tenant})


def forget_token() -> Path:
    """Remove the stored token (``zs logout``), keeping the server and the tenant."""
    return _write({k: v for k, v in load_file().items() if k != "token"})


def _write(data: dict[str, str]) -> Path:
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2)
    os.replace(tmp, path)
    return path


def load(
    *,
    url: str | None = None,
    token: str | None = None,
    tenant: str | None = None,
    run_id: int | None = None,
) -> Settings:
    """Explicit arguments, then ``ZS_*`` variables, then the login file."""
    env = os.environ
    stored = load_file()
    where = (url or env.get("ZS_API_URL") or stored.get("url") or "").rstrip("/") or None
    # The stored token is for the server it was stored with: `--url` or ZS_API_URL naming
    # another server must not send it there (a typo, a test server, a look-alike host).
    mine = stored.get("token") if where == stored_url(stored) else None
    return Settings(
        url=where,
        token=token or env.get("ZS_TOKEN") or mine or None,
        tenant=tenant or env.get("ZS_TENANT") or stored.get("tenant") or None,
        job_id=_int(env.get("ZS_JOB_ID")),
        run_id=run_id if run_id is not None else _int(env.get("ZS_RUN_ID")),
    )


def stored_url(stored: dict[str, str]) -> str:
    """The server the stored token belongs to, as ``load`` compares it."""
    return (stored.get("url") or "").rstrip("/")


def rank() -> int:
    """This process's rank (torchrun's RANK; 0 when not distributed)."""
    return _int(os.environ.get("RANK")) or 0


def world_size() -> int:
    return _int(os.environ.get("WORLD_SIZE")) or 1


def poll_interval_s() -> float:
    """How long a run that sends nothing waits before it asks for a pending checkpoint request
    (``ZS_CHECKPOINT_POLL_S``, seconds, default 60; at least 0.1)."""
    raw = os.environ.get("ZS_CHECKPOINT_POLL_S", "")
    try:
        return max(0.1, float(raw)) if raw else 60.0
    except ValueError:
        return 60.0
