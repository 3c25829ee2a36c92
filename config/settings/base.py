"""Settings shared by every environment. Environment-specific modules import and adjust these."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dj_database_url
import django_stubs_ext

from apps.scheduling.core.presets import PRESETS
from config import env

# Lets ModelAdmin[Model], QuerySet[Model] etc. be subscripted at runtime for precise types.
django_stubs_ext.monkeypatch()

BASE_DIR: Path = env.BASE_DIR
DATA_DIR: Path = env.get_path("ZS_DATA_DIR", BASE_DIR / "var")
FRONTEND_DIST: Path = env.get_path("ZS_FRONTEND_DIST", BASE_DIR / "frontend" / "dist")

DEBUG = env.get_bool("ZS_DEBUG", False)
ALLOWED_HOSTS = env.get_list("ZS_ALLOWED_HOSTS", ["127.0.0.1", "localhost"])
CSRF_TRUSTED_ORIGINS = env.get_list(
    "ZS_CSRF_TRUSTED_ORIGINS", ["http://127.0.0.1:8000", "http://localhost:8000"]
)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "channels",
    "apps.core",
    "apps.accounts",
    "apps.tenancy",
    "apps.audit",
    "apps.clusters",
    "apps.quotas",
    "apps.jobs",
    "apps.scheduling",
    "apps.accounting",
    "apps.inference",
    "apps.telemetry",
    "apps.runs",
    "apps.sweeps",
    "apps.health",
    "apps.governance",
]

MIDDLEWARE = [
    "apps.core.metrics.PrometheusMiddleware",
    "apps.core.probes.ProbeEndpointsMiddleware",  # before any Host check: kubelet, Prometheus
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The reader's language for the API's own sentences (field errors above all): the
    # dashboard's zs_lang cookie, else Accept-Language; scripts that send neither get English.
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "config.urls"
ASGI_APPLICATION = "config.asgi.application"
WSGI_APPLICATION = None
AUTH_USER_MODEL = "accounts.User"
LOGIN_URL = "/login"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASE_URL = env.get_optional_str("DATABASE_URL")


def database_from_url(url: str | None) -> dict[str, Any]:
    """A database config from DATABASE_URL, or SQLite under DATA_DIR for the embedded default."""
    if url:
        config: dict[str, Any] = dict(
            dj_database_url.parse(url, conn_max_age=60, conn_health_checks=True)
        )
        pool_size = env.get_int("ZS_DB_POOL_SIZE", 16)
        if str(config["ENGINE"]).endswith("postgresql") and pool_size > 0:
            # Under ASGI every request context gets its own thread, so per-thread persistent
            # connections are unbounded (100 dashboards resyncing at once exhausted the
            # server's connections in the Redis-loss test). A per-process pool caps them;
            # a request waits up to `timeout` seconds for a free connection.
            config["CONN_MAX_AGE"] = 0
            config["CONN_HEALTH_CHECKS"] = False
            config.setdefault("OPTIONS", {})["pool"] = {
                "min_size": 1,
                "max_size": pool_size,
                "timeout": 20,
            }
        return config
    return {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": str(DATA_DIR / "zhisuan.sqlite3"),
        # SQLite serialises writers; a longer timeout keeps the worker thread and the
        # web thread from failing with "database is locked" under the embedded default.
        "OPTIONS": {"timeout": 20, "transaction_mode": "IMMEDIATE"},
    }


DATABASES = {"default": database_from_url(DATABASE_URL)}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
LANGUAGE_COOKIE_NAME = "zs_lang"  # set by the dashboard ("en" or "zh"; "zh" means zh-hans)
LOCALE_PATHS = [BASE_DIR / "locale"]  # locale/zh_Hans: our sentences; Django's and DRF's ship
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = DATA_DIR / "static"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # WhiteNoise warns at start-up when missing
# The built dashboard is served at the site root (index.html, /assets/...).
WHITENOISE_ROOT = FRONTEND_DIST if FRONTEND_DIST.is_dir() else None

REDIS_URL = env.get_optional_str("REDIS_URL")

# --- Celery -----------------------------------------------------------------------------------
CELERY_BROKER_URL = REDIS_URL or "memory://"
CELERY_RESULT_BACKEND = None
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_HIJACK_ROOT_LOGGER = False  # keep the platform's own logging config
CELERY_WORKER_REDIRECT_STDOUTS = False
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, Any] = (
    {"visibility_timeout": 300} if REDIS_URL else {"polling_interval": 0.01}
)

# --- Channels ---------------------------------------------------------------------------------
CHANNEL_LAYERS: dict[str, Any] = (
    {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [REDIS_URL], "capacity": 1000, "expiry": 30},
        },
        # Live telemetry is a broadcast of large frames: Redis pub/sub carries each frame once
        # per web process (not once per socket); at-most-once, as the protocol assumes.
        "telemetry": {
            "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
            "CONFIG": {"hosts": [REDIS_URL]},
        },
    }
    if REDIS_URL
    else {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
)

# --- REST framework ---------------------------------------------------------------------------
REST_FRAMEWORK: dict[str, Any] = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "apps.runs.authentication.JobTokenAuthentication",  # zsj_ tokens; others pass on
        "apps.accounts.authentication.ApiTokenAuthentication",
        "apps.accounts.authentication.CsrfSessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PAGINATION_CLASS": "apps.core.pagination.IdCursorPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "apps.core.errors.json_exception_handler",
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": [
        "apps.core.parsers.StrictJSONParser",
        "apps.core.parsers.StrictFormParser",
        "apps.core.parsers.StrictMultiPartParser",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "login": env.get_str("ZS_THROTTLE_LOGIN", "20/min"),
        "tokens": env.get_str("ZS_THROTTLE_TOKENS", "60/min"),
    },
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}

SPECTACULAR_SETTINGS: dict[str, Any] = {
    "TITLE": "Zhisuan API",
    "DESCRIPTION": "REST API of Zhisuan (智算), an AI compute platform for GPU clusters.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    "SCHEMA_PATH_PREFIX": r"/api/v1",
    # Probe runs and what-if runs share one set of states (pending, running, done, failed).
    "ENUM_NAME_OVERRIDES": {
        "WorkerRunStateEnum": "apps.core.choices.RunState",
        "JobStateEnum": "apps.jobs.models.JobState",
        "JobKindEnum": "apps.jobs.models.JobKind",
        "SweepStateEnum": "apps.sweeps.models.SweepState",
    },
}

TOKEN_TTL_DAYS = env.get_int("ZS_TOKEN_TTL_DAYS", 90)
# A stopped notebook's home volume (its files) is deleted this many days after the last
# notebook that mounts it ended; 0 keeps every one until its owner deletes it (apps/jobs/homes).
NOTEBOOK_HOME_RETENTION_DAYS = max(0, env.get_int("ZS_NOTEBOOK_HOME_RETENTION_DAYS", 30))
# Prices are plain decimals; this names their unit for every screen and export.
CURRENCY = env.get_currency("ZS_CURRENCY", "CNY")
# Governance webhooks may call private, loopback and link-local addresses (apps/governance/webhook).
WEBHOOK_ALLOW_PRIVATE = env.get_bool("ZS_WEBHOOK_ALLOW_PRIVATE", False)
CLUSTER_BACKEND = env.get_str("ZS_CLUSTER_BACKEND", "simulated")
# The admission loop's policy: one of the core's presets (pure Python, no Django import).
SCHEDULER_POLICY = env.get_choice("ZS_SCHEDULER_POLICY", "standard", PRESETS)
TELEMETRY_SOURCE = env.get_str("ZS_TELEMETRY_SOURCE", "simulated")
PROMETHEUS_URL = env.get_str("ZS_PROMETHEUS_URL", "http://127.0.0.1:9090").rstrip("/")
TELEMETRY_SEED = env.get_int("ZS_TELEMETRY_SEED", 0)
# Where the SDK inside a job reaches the API (passed to training jobs as ZS_API_URL).
PUBLIC_API_URL = env.get_str("ZS_PUBLIC_URL", "http://127.0.0.1:8000").rstrip("/")
# The slow-node probe's pods (apps/health/probe_kube.py; other HEALTH_PROBE_* settings there).
HEALTH_PROBE_IMAGE = env.get_str(
    "ZS_HEALTH_PROBE_IMAGE", "registry.example.com/zhisuan/nccl-tests:2.13"
)

SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False  # the dashboard reads it to send X-CSRFToken
SESSION_COOKIE_SAMESITE = "Lax"
X_FRAME_OPTIONS = "DENY"

LOG_LEVEL = env.get_str("ZS_LOG_LEVEL", "INFO").upper()
LOGGING: dict[str, Any] = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        "django.server": {"level": "WARNING"},
        "uvicorn.access": {"level": "WARNING"},
        "celery": {"level": "WARNING"},
    },
}

# Single sign-on with an OpenID Connect provider (apps/accounts/oidc.py): on when ZS_OIDC_ISSUER
# is set. The endpoints are the provider's discovery document's (.well-known/openid-configuration):
# authorization_endpoint, token_endpoint, userinfo_endpoint (optional) and jwks_uri. The
# provider's client must allow the redirect URI <ZS_PUBLIC_URL>/api/v1/auth/oidc/callback/.
OIDC_ISSUER = env.get_str("ZS_OIDC_ISSUER", "")
OIDC_NAME = env.get_str("ZS_OIDC_NAME", "single sign-on")  # the login page's button
OIDC_RP_CLIENT_ID = env.get_str("ZS_OIDC_CLIENT_ID", "")
OIDC_RP_CLIENT_SECRET = env.get_str("ZS_OIDC_CLIENT_SECRET", "")
OIDC_OP_AUTHORIZATION_ENDPOINT = env.get_str("ZS_OIDC_AUTHORIZATION_URL", "")
OIDC_OP_TOKEN_ENDPOINT = env.get_str("ZS_OIDC_TOKEN_URL", "")
OIDC_OP_USER_ENDPOINT = env.get_str("ZS_OIDC_USERINFO_URL", "")
OIDC_OP_JWKS_ENDPOINT = env.get_str("ZS_OIDC_JWKS_URL", "")
OIDC_RP_SIGN_ALGO = env.get_str("ZS_OIDC_SIGN_ALGO", "RS256")
OIDC_RP_SCOPES = env.get_str("ZS_OIDC_SCOPES", "openid email profile")
OIDC_USERNAME_CLAIM = env.get_str("ZS_OIDC_USERNAME_CLAIM", "preferred_username")
OIDC_GROUPS_CLAIM = env.get_str("ZS_OIDC_GROUPS_CLAIM", "groups")
OIDC_ADMIN_GROUP = env.get_str("ZS_OIDC_ADMIN_GROUP", "")  # empty: rights set in Settings, Users
OIDC_USE_PKCE = True
OIDC_TIMEOUT = 10
OIDC_AUTHENTICATION_CALLBACK_URL = "oidc_authentication_callback"
LOGIN_REDIRECT_URL = "/"
LOGIN_REDIRECT_URL_FAILURE = "/login?sso=failed"
AUTHENTICATION_BACKENDS = [
    "django.contrib.auth.backends.ModelBackend",
    *(["apps.accounts.oidc.Backend"] if OIDC_ISSUER else []),
]
