"""Quotas per tenant x pool x accelerator model: a guarantee and a borrowing limit (C3)."""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class Quota(models.Model):
    """The tenant may hold ``guarantee + borrow_limit`` devices of the model in the pool.

    Work above the guarantee runs on capacity lent by others and can be reclaimed when a lender
    needs its guarantee. The sum of guarantees per pool and model never exceeds what the pool
    has (checked in ``services.validate_guarantees`` under a lock)."""

    tenant = models.ForeignKey("tenancy.Tenant", on_delete=models.CASCADE, related_name="quotas")
    pool = models.ForeignKey(
        "clusters.ResourcePool", on_delete=models.CASCADE, related_name="quotas"
    )
    accelerator_model = models.CharField(max_length=32)
    guarantee = models.PositiveIntegerField(default=0)
    borrow_limit = models.PositiveIntegerField(default=0)
    weight = models.PositiveSmallIntegerField(
        default=1, help_text="Share weight among tenants borrowing idle capacity."
    )
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "pool", "accelerator_model"], name="uniq_quota"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.tenant.slug}@{self.pool.name}/{self.accelerator_model}"
