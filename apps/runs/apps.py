from django.apps import AppConfig


class RunsConfig(AppConfig):
    name = "apps.runs"
    label = "runs"
    verbose_name = "Training runs"

    def ready(self) -> None:
        from apps.runs import schema  # noqa: F401 - registers the OpenAPI auth extension
