from django.apps import AppConfig


class InferenceConfig(AppConfig):
    name = "apps.inference"
    label = "inference"
    verbose_name = "Inference services"
