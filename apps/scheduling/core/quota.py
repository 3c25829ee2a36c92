"""Quota accounting per tenant x pool x accelerator model (capability C3).

Usage is kept in milli-devices so fractional shares count exactly. The ledger is only ever
changed through ``ClusterState`` so every change is on the undo log; this module does not
log anything itself.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable

from .model import FULL_DEVICE_MILLI, Quota
from .text import Text, say

QuotaKey = tuple[str, str, str]  # tenant, pool, accelerator model


def fmt_devices(milli: int) -> str:
    """Human form of a milli-device amount: "8" or "2.5"."""
    if milli % FULL_DEVICE_MILLI == 0:
        return str(milli // FULL_DEVICE_MILLI)
    return f"{milli / FULL_DEVICE_MILLI:g}"


class QuotaLedger:
    """Guarantees, limits and current usage.

    With ``enabled`` false every check passes (usage is still tracked so fair share works).
    A tenant without a quota row for a model has guarantee 0 and may borrow nothing: quotas
    are opt-in per model, and a missing row must not mean "unlimited".
    """

    def __init__(self, quotas: Iterable[Quota], *, enabled: bool) -> None:
        self.enabled = enabled
        self._limits: dict[QuotaKey, tuple[int, int]] = {}
        self.usage: defaultdict[QuotaKey, int] = defaultdict(int)
        self._models_of: defaultdict[tuple[str, str], set[str]] = defaultdict(set)
        for q in quotas:
            key = (q.tenant, q.pool, q.accelerator_model)
            self._limits[key] = (
                max(q.guarantee, 0) * FULL_DEVICE_MILLI,
                max(q.borrow_limit, 0) * FULL_DEVICE_MILLI,
            )
            self._models_of[(q.tenant, q.pool)].add(q.accelerator_model)

    def guarantee(self, key: QuotaKey) -> int:
        return self._limits.get(key, (0, 0))[0]

    def total_guarantee(self, pool: str, model: str) -> int:
        """The guarantees of every tenant for ``model`` in ``pool``, in milli-devices."""
        return sum(g for (_, p, m), (g, _) in self._limits.items() if p == pool and m == model)

    def limit(self, key: QuotaKey) -> int:
        g, b = self._limits.get(key, (0, 0))
        return g + b

    def add(self, key: QuotaKey, delta_milli: int) -> None:
        self.usage[key] += delta_milli
        self._models_of[(key[0], key[1])].add(key[2])

    def check(self, key: QuotaKey, milli: int) -> Text | None:
        """``None`` when ``milli`` more fits under the limit, else a reason a person can act on."""
        if not self.enabled or milli <= 0:
            return None
        tenant, pool, model = key
        if key not in self._limits:
            return say("noQuota", tenant=tenant, model=model, pool=pool)
        g, b = self._limits[key]
        after = self.usage[key] + milli
        if after <= g + b:
            return None
        return say(
            "overQuota",
            tenant=tenant,
            after=fmt_devices(after),
            model=model,
            pool=pool,
            limit=fmt_devices(g + b),
            guarantee=fmt_devices(g),
            borrow=fmt_devices(b),
            used=fmt_devices(self.usage[key]),
        )

    def within_guarantee_after(self, key: QuotaKey, milli: int) -> bool:
        """Whether the tenant stays within its guarantee after taking ``milli`` more."""
        return self.usage[key] + milli <= self.guarantee(key)

    def borrowers(self, pool: str, model: str) -> set[str]:
        """Tenants that hold more of ``model`` in ``pool`` than their guarantee."""
        return {
            t
            for (t, p, m), used in self.usage.items()
            if p == pool and m == model and used > self.guarantee((t, p, m))
        }

    def borrowing(self, key: QuotaKey) -> bool:
        """The tenant holds more than its guarantee, so its newest work is reclaimable."""
        return self.usage[key] > self.guarantee(key)

    def share(self, tenant: str, pool: str) -> float:
        """Dominant share of a tenant in a pool: max over models of usage / guarantee.

        The guarantee is the weight: a tenant using half its guarantee goes before one using
        all of it. Usage without any guarantee ranks after every guaranteed tenant.
        """
        worst = 0.0
        for model in self._models_of.get((tenant, pool), ()):
            key = (tenant, pool, model)
            used = self.usage.get(key, 0)
            if used <= 0:
                continue
            g = self.guarantee(key)
            worst = max(worst, used / g if g > 0 else math.inf)
        return worst
