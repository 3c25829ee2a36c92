from django.apps import AppConfig


class HealthConfig(AppConfig):
    name = "apps.health"
    label = "health"
    verbose_name = "Node health and fault self-healing"

    def ready(self) -> None:
        from apps.health.api import schema  # noqa: F401 - registers the OpenAPI auth extension
