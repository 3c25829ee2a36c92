"""Production: PostgreSQL and Redis are required, secrets come from the environment."""

from config import env
from config.settings.base import *  # noqa: F403 - settings modules extend the base by design
from config.settings.base import BASE_DIR

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
# So do the machines that post to the API from inside the cluster, through the web Service
# (http://zhisuan-web.zhisuan-system.svc): the SDK in training jobs (the runs API, with a job
# token; the tenant NetworkPolicy lets jobs reach only the platform's namespace, not the
# ingress) and the node agents (health reports, with a node token). A redirect would not
# protect them (the token has already been sent) and turns their POST into a GET to an https
# port the Service does not serve, so every report and metric upload failed.
SECURE_REDIRECT_EXEMPT = [r"^api/v1/tenants/[a-z0-9-]+/runs/", r"^api/v1/health/report/$"]
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SECURE_HSTS_SECONDS = 31536000
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SECURE_CONTENT_TYPE_NOSNIFF = True
# collectstatic runs when the image is built (platform/images/Dockerfile); the files live in
# the image, outside ZS_DATA_DIR, which the Deployments mount as an empty volume. Without the
# manifest every admin page answered 500 ("Missing staticfiles manifest entry").
STATIC_ROOT = BASE_DIR / "static"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
