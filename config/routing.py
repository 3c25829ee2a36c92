from django.urls import path, re_path

from apps.core.consumers import EventsConsumer
from apps.jobs.notebook_socket import NotebookSocketProxy
from apps.telemetry.consumers import TelemetryConsumer

websocket_urlpatterns = [
    path("ws/v1/events/", EventsConsumer.as_asgi()),
    path("ws/v1/telemetry/", TelemetryConsumer.as_asgi()),
    # Jupyter kernels and code-server, through the notebook proxy (apps/jobs/notebook_socket).
    re_path(r"^notebooks/(?P<job_id>[0-9]+)/(?P<path>.*)$", NotebookSocketProxy.as_asgi()),
]
