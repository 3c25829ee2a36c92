"""Recording audit entries. Called by the base viewset for every API write."""

from __future__ import annotations

import json
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder
from django.db import models
from django.forms.models import model_to_dict

from apps.accounts.models import User
from apps.audit.models import AuditAction, AuditEntry
from apps.tenancy.models import Tenant

# Fields that must never reach the audit log, whatever the model.
_REDACTED = frozenset({"password", "digest"})


def snapshot(instance: models.Model) -> dict[str, Any]:
    """A JSON-safe copy of the instance's concrete fields, secrets redacted."""
    data = model_to_dict(instance, fields=[f.name for f in instance._meta.concrete_fields])
    clean = {k: ("<redacted>" if k in _REDACTED else v) for k, v in data.items()}
    result: dict[str, Any] = json.loads(json.dumps(clean, cls=DjangoJSONEncoder))
    return result


def record(
    *,
    actor: User,
    action: AuditAction,
    instance: models.Model,
    tenant: Tenant | None,
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
) -> AuditEntry:
    return AuditEntry.objects.create(
        tenant=tenant,
        actor=actor,
        actor_name=actor.get_username(),
        action=action,
        object_type=instance._meta.label_lower,
        object_id=str(instance.pk),
        object_repr=str(instance)[:200],
        before=before,
        after=after,
    )
