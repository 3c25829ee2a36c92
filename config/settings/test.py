"""Tests: real PostgreSQL and Redis at 127.0.0.1 unless DATABASE_URL / REDIS_URL say otherwise."""

import os

from config.settings.base import *  # noqa: F403 - settings modules extend the base by design
from config.settings.base import database_from_url

SECRET_KEY = "test-only-key"  # noqa: S105 - never used outside the test run
DEBUG = False
DATABASES = {
    "default": database_from_url(
        os.environ.get("DATABASE_URL") or "postgres://postgres@127.0.0.1:5432/zhisuan"
    )
}
# One test database per pytest process, so parallel runs (developers, helpers, CI) never share.
DATABASES["default"]["TEST"] = {"NAME": f"test_zhisuan_{os.getpid()}"}
# Threads of database_sync_to_async must not keep connections that block test DB teardown.
DATABASES["default"]["CONN_MAX_AGE"] = 0
# The pytest process itself uses plain connections (pytest-django wraps tests in transactions
# per connection); the processes the reliability tests start use the pool of the base settings.
DATABASES["default"].get("OPTIONS", {}).pop("pool", None)
TEST_REDIS_URL = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0"
# Tests call the relay, reconciler and scheduler explicitly (deterministic order); queued task
# messages go to the in-process memory broker, where no worker consumes them. Tests that need
# a real worker and broker start them explicitly.
CELERY_BROKER_URL = "memory://"
CELERY_TASK_ALWAYS_EAGER = False
# Channel groups per pytest run too: two runs on one Redis would hear each other's broadcasts
# (a "pools" listener of one run got the other run's pool). Processes a test starts inherit it.
CHANNEL_PREFIX = os.environ.setdefault("ZS_TEST_CHANNEL_PREFIX", f"zs-test-{os.getpid()}")
CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "channels_redis.core.RedisChannelLayer",
        "CONFIG": {"hosts": [TEST_REDIS_URL], "prefix": CHANNEL_PREFIX},
    },
    "telemetry": {
        "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
        "CONFIG": {"hosts": [TEST_REDIS_URL], "prefix": CHANNEL_PREFIX},
    },
}
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast tests only
REST_FRAMEWORK = {
    **REST_FRAMEWORK,  # noqa: F405
    "DEFAULT_THROTTLE_RATES": {"login": "1000/min", "tokens": "1000/min"},
}
