from django.apps import AppConfig


class QuotasConfig(AppConfig):
    name = "apps.quotas"
    label = "quotas"
    verbose_name = "Quotas"
