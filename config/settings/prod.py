"""Production: PostgreSQL and Redis are required, secrets come from the environment."""

from config import env
from config.settings.base import *  # noqa: F403 - settings modules extend the base by design

DEBUG = False
SECRET_KEY = env.require_str("ZS_SECRET_KEY")
if env.get_optional_str("DATABASE_URL") is None:
    raise env.ConfigError("DATABASE_URL must be set in production")
if env.get_optional_str("REDIS_URL") is None:
    raise env.ConfigError("REDIS_URL must be set in production")

SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = True
# Probes and scrapes reach the pod over plain HTTP inside the cluster: /healthz, /readyz and
# /metrics are answered before the redirect (apps/core/probes.py).
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SECURE_HSTS_SECONDS = 31536000
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SECURE_CONTENT_TYPE_NOSNIFF = True
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
