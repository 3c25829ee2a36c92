from django.apps import AppConfig


class TelemetryConfig(AppConfig):
    name = "apps.telemetry"
    label = "telemetry"
    verbose_name = "Telemetry"
    default_auto_field = "django.db.models.BigAutoField"
