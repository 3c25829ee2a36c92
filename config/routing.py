from django.urls import path

from apps.core.consumers import EventsConsumer
from apps.telemetry.consumers import TelemetryConsumer

websocket_urlpatterns = [
    path("ws/v1/events/", EventsConsumer.as_asgi()),
    path("ws/v1/telemetry/", TelemetryConsumer.as_asgi()),
]
