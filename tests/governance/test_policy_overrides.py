"""A tenant's idle policy keeps only the rules the tenant set: the others follow the platform
default, loosened or tightened later, and any rule (or all) can go back to the default."""

from __future__ import annotations

from importlib import import_module

import pytest
from django.apps import apps as django_apps

from apps.audit.models import AuditEntry
from apps.governance.models import IdlePolicy
from apps.governance.policy import effective_policy
from apps.tenancy.models import Role
from tests.conftest import World

pytestmark = pytest.mark.django_db
POLICY = "/api/v1/tenants/tenant-a/governance/policy/"
DEFAULT = "/api/v1/governance/default-policy/"


def test_a_later_looser_default_reaches_the_rules_the_tenant_left_alone(world, client_for):
    root = client_for(world.platform_admin)
    admin = client_for(world.user("a", Role.TENANT_ADMIN))
    assert (
        root.put(DEFAULT, {"grace_s": 1200, "training_idle_s": 3600}, format="json").status_code
        == 200
    )
    answer = admin.patch(POLICY, {"grace_s": 900}, format="json").json()
    assert answer["overrides"] == ["grace_s"] and answer["customized"] is True
    row = IdlePolicy.objects.get(tenant=world.tenant_a)
    assert (row.grace_s, row.training_idle_s, row.queue_action) == (900, None, "")
    # The platform loosens its default: the tenant follows it where it set nothing.
    root.put(DEFAULT, {"grace_s": 3600, "training_idle_s": 4 * 3600}, format="json")
    effective = admin.get(POLICY).json()["effective"]
    assert (effective["grace_s"], effective["training_idle_s"]) == (900, 4 * 3600)


def test_the_dashboards_full_form_does_not_pin_the_default(world, client_for) -> None:
    """The settings form sends every rule; those equal to the default keep following it."""
    admin = client_for(world.user("a", Role.TENANT_ADMIN))
    effective = admin.get(POLICY).json()["effective"]
    form = {**effective, "notebook_idle_s": 1800}
    answer = admin.patch(POLICY, form, format="json").json()
    assert answer["overrides"] == ["notebook_idle_s"]
    # Setting a rule back to the default's value returns it to the default.
    answer = admin.patch(POLICY, {"notebook_idle_s": 3600}, format="json").json()
    assert answer["overrides"] == [] and answer["customized"] is False


def test_reset_one_rule_or_all_of_them(world, client_for) -> None:
    admin = client_for(world.user("a", Role.TENANT_ADMIN))
    admin.patch(POLICY, {"grace_s": 600, "max_extensions": 1, "queue_action": "escalate",
                         "max_runtime_s": 86400}, format="json")  # fmt: skip
    answer = admin.patch(POLICY, {"reset": ["grace_s"]}, format="json")
    assert answer.status_code == 200
    assert answer.json()["overrides"] == ["max_extensions", "queue_action", "max_runtime_s"]
    assert answer.json()["effective"]["grace_s"] == 1800
    every = ["util_threshold_pct", "training_idle_s", "notebook_idle_s", "grace_s",
             "max_extensions", "extension_s", "queue_action", "max_runtime_s"]  # fmt: skip
    entries = AuditEntry.objects.filter(object_type="governance.idlepolicy").count()
    answer = admin.patch(POLICY, {"reset": every}, format="json").json()
    assert answer["overrides"] == [] and answer["customized"] is False
    assert answer["effective"] == {**answer["default"], "webhook_url": ""}
    assert AuditEntry.objects.filter(object_type="governance.idlepolicy").count() == entries + 1
    # Resetting what already follows the default changes nothing and records nothing.
    assert admin.patch(POLICY, {"reset": every}, format="json").status_code == 200
    assert AuditEntry.objects.filter(object_type="governance.idlepolicy").count() == entries + 1


def test_reset_is_for_admins_and_checks_its_names(world, client_for) -> None:
    admin = client_for(world.user("a", Role.TENANT_ADMIN))
    member = client_for(world.user("a", Role.MEMBER))
    assert member.patch(POLICY, {"reset": ["grace_s"]}, format="json").status_code == 403
    bad = admin.patch(POLICY, {"reset": ["webhook_url", "nope"]}, format="json")
    assert bad.status_code == 400 and "reset" in bad.json()["errors"]
    both = admin.patch(POLICY, {"reset": ["grace_s"], "grace_s": 600}, format="json")
    assert both.status_code == 400
    assert both.json()["errors"] == {"reset": ["grace_s: set and reset in one request."]}
    assert not IdlePolicy.objects.exists()


def test_the_migration_forgets_copied_defaults_and_keeps_tightened_rules(world) -> None:
    """Rows written before: every rule copied. Those equal to the default now follow it."""
    migration = import_module(
        "apps.governance.migrations.0005_tenant_policy_keeps_only_what_it_sets"
    )
    IdlePolicy.objects.create(
        tenant=world.tenant_a, util_threshold_pct=10.0, training_idle_s=3600,
        notebook_idle_s=3600, grace_s=1800, max_extensions=2, extension_s=3600,
        queue_action="escalate", max_runtime_s=None,
    )  # fmt: skip
    migration.forget_copied_defaults(django_apps, None)
    row = IdlePolicy.objects.get(tenant=world.tenant_a)
    assert (row.training_idle_s, row.queue_action) == (3600, "escalate")
    assert (row.util_threshold_pct, row.grace_s, row.max_extensions) == (None, None, None)
    assert effective_policy(world.tenant_a).grace_s == 1800
    migration.copy_defaults_back(django_apps, None)
    row.refresh_from_db()
    assert (row.grace_s, row.training_idle_s, row.queue_action) == (1800, 3600, "escalate")


def test_a_tenant_never_gets_looser_than_a_tightened_default(world: World, client_for) -> None:
    root = client_for(world.platform_admin)
    admin = client_for(world.user("a", Role.TENANT_ADMIN))
    admin.patch(POLICY, {"grace_s": 1200}, format="json")
    root.put(DEFAULT, {"grace_s": 600}, format="json")
    assert admin.get(POLICY).json()["effective"]["grace_s"] == 600
