"""The Celery application. Broker: Redis in production, ``memory://`` in the embedded default."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.dev")

app = Celery("zhisuan")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
