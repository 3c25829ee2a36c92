"""Effective idle policy of a tenant: the platform default, tightened by the tenant's own row.

"Tighter" per field: a higher utilization threshold, shorter idle periods, a shorter grace,
fewer and shorter extensions, a lower runtime cap (none is the loosest). A tenant row holds only
the rules the tenant set (null: follow the default), so a default loosened later reaches every
rule the tenant left alone. The rules it set are validated against the default when written,
and merged field by field (strictest wins) when read, so a default tightened later still binds
tenants whose rows were written under the older, looser default.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

from django.utils.translation import gettext as _

from apps.governance.models import IdlePolicy, QueueAction
from apps.governance.rules import BUILTIN_RULE
from apps.jobs.models import JobKind
from apps.tenancy.models import Tenant

# Direction of "stricter" for each numeric field: +1 means larger is stricter.
STRICTER: dict[str, int] = {
    "util_threshold_pct": +1,
    "training_idle_s": -1,
    "notebook_idle_s": -1,
    "grace_s": -1,
    "max_extensions": -1,
    "extension_s": -1,
}
# Sanity bounds (inclusive) for any policy, default or tenant.
LIMITS: dict[str, tuple[float, float]] = {
    "util_threshold_pct": (0.5, 100.0),
    "training_idle_s": (300, 7 * 86400),
    "notebook_idle_s": (300, 7 * 86400),
    "grace_s": (60, 86400),
    "max_extensions": (0, 20),
    "extension_s": (300, 7 * 86400),
    "max_runtime_s": (60, 90 * 86400),
}
# The runtime cap of training jobs and notebooks (``max_runtime_s``; None: no cap) applies
# to these kinds; inference services run until stopped.
CAPPED_KINDS = (JobKind.TRAINING, JobKind.NOTEBOOK)


@dataclass(frozen=True)
class Policy:
    util_threshold_pct: float = BUILTIN_RULE.util_threshold_pct
    training_idle_s: int = BUILTIN_RULE.training_idle_s
    notebook_idle_s: int = BUILTIN_RULE.notebook_idle_s
    grace_s: int = BUILTIN_RULE.grace_s
    max_extensions: int = BUILTIN_RULE.max_extensions
    extension_s: int = BUILTIN_RULE.extension_s
    queue_action: str = QueueAction.EXPIRE
    webhook_url: str = ""
    max_runtime_s: int | None = None

    def idle_s(self, kind: str) -> int:
        return self.notebook_idle_s if kind == JobKind.NOTEBOOK else self.training_idle_s

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


BUILTIN = Policy()


# The rules a tenant may set, each alone; the webhook is the tenant's own, not a rule.
RULES: tuple[str, ...] = (*STRICTER, "queue_action", "max_runtime_s")


def unset(rule: str) -> Any:
    """What a tenant row stores for a rule that follows the default."""
    return "" if rule == "queue_action" else None


def _from_row(row: IdlePolicy) -> Policy:
    """The platform default's row (every rule set; ``max_runtime_s`` null: no cap)."""
    values = {name: getattr(row, name) for name in RULES}
    return replace(
        BUILTIN, **{k: v for k, v in values.items() if v != unset(k) or k == "max_runtime_s"}
    )


def default_policy() -> Policy:
    row = IdlePolicy.objects.filter(is_default=True).first()
    return _from_row(row) if row else BUILTIN


def overrides(row: IdlePolicy | None) -> dict[str, Any]:
    """The rules a tenant row sets (the others follow the default)."""
    if row is None:
        return {}
    return {name: getattr(row, name) for name in RULES if getattr(row, name) != unset(name)}


def strictest(default: Policy, own: Policy) -> Policy:
    """``own`` with every numeric field clamped to be at least as strict as ``default``."""
    merged: dict[str, Any] = {}
    for name, sign in STRICTER.items():
        a, b = getattr(default, name), getattr(own, name)
        merged[name] = max(a, b) if sign > 0 else min(a, b)
    caps = [c for c in (default.max_runtime_s, own.max_runtime_s) if c is not None]
    merged["max_runtime_s"] = min(caps) if caps else None
    return replace(own, **merged)


def effective_policy(tenant: Tenant, default: Policy | None = None) -> Policy:
    default = default or default_policy()
    row = IdlePolicy.objects.filter(tenant=tenant).first()
    if row is None:
        return replace(default, webhook_url="")
    return strictest(default, replace(default, **overrides(row), webhook_url=row.webhook_url))


def runtime_cap(tenant: Tenant, kind: str) -> int | None:
    """The runtime limit a job of ``kind`` in ``tenant`` may declare at most, and gets when
    it declares none (None: no cap)."""
    return effective_policy(tenant).max_runtime_s if kind in CAPPED_KINDS else None


def looser_fields(default: Policy, values: dict[str, Any]) -> dict[str, list[str]]:
    """Field errors for values looser than the platform default."""
    errors: dict[str, list[str]] = {}
    for name, sign in STRICTER.items():
        if name not in values:
            continue
        bound = getattr(default, name)
        if (sign > 0 and values[name] < bound) or (sign < 0 and values[name] > bound):
            said = (
                _("Must be at least the platform default ({bound}).")
                if sign > 0
                else _("Must be at most the platform default ({bound}).")
            )
            errors[name] = [said.format(bound=f"{bound:g}")]
    cap = default.max_runtime_s
    if "max_runtime_s" in values and cap is not None:
        value = values["max_runtime_s"]
        if value is None or value > cap:
            errors["max_runtime_s"] = [
                _("Must be at most the platform default ({bound}).").format(bound=cap)
            ]
    return errors
