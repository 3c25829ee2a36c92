from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from apps.core import demo


class Command(BaseCommand):
    help = "Create the demo admin, tenants, members and simulated cluster (idempotent)."

    def handle(self, *args: Any, **options: Any) -> None:
        if settings.SETTINGS_MODULE.endswith(".prod"):
            raise CommandError("seed_demo creates known passwords; it never runs in production.")
        cluster = demo.seed()
        self.stdout.write(
            f"Demo data ready: cluster {cluster.name} with {demo.demo_gpu_count()} accelerators."
        )
        self.stdout.write(
            "Log in as admin (platform admin), alice / bob / victor (tenant vision: admin, "
            f"member, viewer) or carol / dave (tenant nlp); password: {demo.DEMO_PASSWORD}"
        )
