"""Seed the fault catalogue with the defaults operators then edit."""

from django.db import migrations


def seed(apps, schema_editor):
    from apps.health.catalogue import DEFAULT_RULES

    FaultRule = apps.get_model("health", "FaultRule")
    for spec in DEFAULT_RULES:
        FaultRule.objects.get_or_create(
            code=spec.code,
            defaults={
                "severity": spec.severity,
                "action": spec.action,
                "description": spec.description,
                "remediation": spec.remediation,
            },
        )


class Migration(migrations.Migration):
    dependencies = [("health", "0001_initial")]
    operations = [migrations.RunPython(seed, migrations.RunPython.noop)]
