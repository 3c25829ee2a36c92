"""Typed access to environment variables: the one place settings read the environment.

Every variable the platform understands is declared here with its type and default, so the
README's configuration table and the code cannot drift apart silently (a test checks the
README lists every name in ``DOCUMENTED``).
"""

from __future__ import annotations

import os
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent

# name -> one-line description; the README's configuration table must list every name.
DOCUMENTED: dict[str, str] = {
    "DJANGO_SETTINGS_MODULE": "settings module: config.settings.dev | test | prod",
    "ZS_SECRET_KEY": "Django secret key (required in prod)",
    "ZS_DEBUG": "debug mode (dev default true, prod always false)",
    "ZS_ALLOWED_HOSTS": "comma-separated host names the server answers (default "
    "127.0.0.1,localhost)",
    "ZS_CSRF_TRUSTED_ORIGINS": "comma-separated origins trusted for CSRF and websockets "
    "(default http://127.0.0.1:8000,http://localhost:8000)",
    "ZS_DATA_DIR": "where the embedded default keeps SQLite and other state (default var/)",
    "DATABASE_URL": "database URL; unset in dev means SQLite under ZS_DATA_DIR",
    "ZS_DB_POOL_SIZE": "PostgreSQL connections per process, pooled (default 16; 0: one "
    "persistent connection per thread, unbounded under ASGI)",
    "REDIS_URL": "Redis URL for the Celery broker and the channel layer; unset in dev means "
    "in-process (memory) broker and channel layer",
    "ZS_HOST": "address `manage.py serve` binds (default 127.0.0.1)",
    "ZS_PORT": "port `manage.py serve` binds (default 8000)",
    "ZS_WS_COMPRESSION": "permessage-deflate on websockets (default false: each socket would "
    "compress its own copy of every telemetry frame, the web tier's largest CPU cost)",
    "ZS_EMBEDDED_WORKER": "run a Celery worker thread inside `manage.py serve` (default true "
    "when REDIS_URL is unset)",
    "ZS_CLUSTER_BACKEND": "cluster interface: simulated | kubernetes (default simulated)",
    "ZS_SCHEDULER_POLICY": "scheduling policy of the admission loop: standard (the core's "
    "defaults) | tuned (the settings benchmarked as ours in docs/benchmarks.md; default "
    "standard)",
    "ZS_LOG_LEVEL": "root log level (default INFO)",
    "ZS_TOKEN_TTL_DAYS": "default lifetime of a new API token in days (default 90)",
    "ZS_ALIVE_DIR": "folder where the worker, beat, telemetry collector and autoscaler touch "
    "their liveness files for exec probes (unset: none written; apps/core/alive.py)",
    "ZS_NOTEBOOK_HOME_RETENTION_DAYS": "days a stopped notebook's home volume is kept after "
    "the last notebook using it ended; 0 keeps it until its owner deletes it (default 30)",
    "ZS_THROTTLE_LOGIN": "login attempts allowed per client address (default 20/min)",
    "ZS_THROTTLE_TOKENS": "token API requests allowed per user (default 60/min)",
    "ZS_FRONTEND_DIST": "folder with the built dashboard (default frontend/dist)",
    "ZS_TELEMETRY_SOURCE": "GPU metrics source: simulated | prometheus (default simulated)",
    "ZS_PROMETHEUS_URL": "Prometheus base URL when ZS_TELEMETRY_SOURCE=prometheus "
    "(default http://127.0.0.1:9090)",
    "ZS_TELEMETRY_SEED": "seed of the simulated GPU metrics (default 0)",
    "ZS_CURRENCY": "ISO 4217 code of pool prices and costs, shown beside every amount "
    "(default CNY)",
    "ZS_PUBLIC_URL": "base URL jobs use to reach the API (the SDK's ZS_API_URL; default "
    "http://127.0.0.1:8000)",
    "ZS_HEALTH_PROBE_IMAGE": "image of the slow-node NCCL probe pods on Kubernetes (default "
    "registry.example.com/zhisuan/nccl-tests:2.13, a placeholder: build or mirror your own)",
    "ZS_WEBHOOK_ALLOW_PRIVATE": "let governance webhooks call private, loopback and link-local "
    "addresses (default false: public addresses only, against SSRF)",
    "ZS_OIDC_ISSUER": "single sign-on: the OpenID Connect provider's issuer (the ID token's iss); "
    "set it to turn SSO on (docs/sso.md)",
    "ZS_OIDC_NAME": "single sign-on: what the login page's button names (default single sign-on)",
    "ZS_OIDC_CLIENT_ID": "single sign-on: this platform's client id at the provider",
    "ZS_OIDC_CLIENT_SECRET": "single sign-on: its client secret",
    "ZS_OIDC_AUTHORIZATION_URL": "single sign-on: the provider's authorization_endpoint",
    "ZS_OIDC_TOKEN_URL": "single sign-on: the provider's token_endpoint",
    "ZS_OIDC_USERINFO_URL": "single sign-on: the provider's userinfo_endpoint (empty: the ID "
    "token's claims alone)",
    "ZS_OIDC_JWKS_URL": "single sign-on: the provider's jwks_uri (the ID token's signing keys)",
    "ZS_OIDC_SIGN_ALGO": "single sign-on: the ID token's signing algorithm (default RS256)",
    "ZS_OIDC_SCOPES": "single sign-on: scopes asked for (default openid email profile)",
    "ZS_OIDC_USERNAME_CLAIM": "single sign-on: the claim a new user's username comes from (default "
    "preferred_username)",
    "ZS_OIDC_GROUPS_CLAIM": "single sign-on: the claim listing the person's groups (default "
    "groups)",
    "ZS_OIDC_ADMIN_GROUP": "single sign-on: members of this group are platform admins, others not "
    "(default empty: rights are set in Settings, Users)",
}


class ConfigError(RuntimeError):
    """Raised at start-up when an environment variable is missing or malformed."""


def _check(name: str) -> None:
    if name not in DOCUMENTED:
        raise ConfigError(f"{name} is read but not declared in config.env.DOCUMENTED")


def get_str(name: str, default: str) -> str:
    _check(name)
    return os.environ.get(name, default)


def get_optional_str(name: str) -> str | None:
    _check(name)
    value = os.environ.get(name, "").strip()
    return value or None


def require_str(name: str) -> str:
    value = get_optional_str(name)
    if value is None:
        raise ConfigError(f"environment variable {name} must be set")
    return value


def get_bool(name: str, default: bool) -> bool:
    _check(name)
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    value = raw.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise ConfigError(f"{name} must be a boolean (true/false), got {raw!r}")


def get_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    _check(name)
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    if raw not in choices:
        raise ConfigError(f"{name} must be one of {', '.join(choices)}, got {raw!r}")
    return raw


def get_int(name: str, default: int) -> int:
    _check(name)
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError as exc:
        raise ConfigError(f"{name} must be an integer, got {raw!r}") from exc


def get_currency(name: str, default: str) -> str:
    """A three-letter ISO 4217 currency code, upper-cased."""
    _check(name)
    raw = os.environ.get(name, "").strip() or default
    if len(raw) != 3 or not raw.isascii() or not raw.isalpha():
        raise ConfigError(f"{name} must be a three-letter ISO 4217 code such as CNY, got {raw!r}")
    return raw.upper()


def get_list(name: str, default: list[str]) -> list[str]:
    _check(name)
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return list(default)
    return [item.strip() for item in raw.split(",") if item.strip()]


def get_path(name: str, default: Path) -> Path:
    _check(name)
    raw = os.environ.get(name)
    return Path(raw).resolve() if raw else default
