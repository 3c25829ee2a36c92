"""Editing quotas safely: guarantees never add up to more than the pool has."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Sum
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.clusters.models import Node, ResourcePool
from apps.quotas.models import Quota
from apps.quotas.selectors import FULL, usage_milli
from apps.scheduling.models import SchedulerLock
from apps.tenancy.models import Tenant


def pool_capacity(pool: ResourcePool, accelerator_model: str) -> int:
    """Schedulable devices of the model in the pool (hot spares are held back)."""
    total = Node.objects.filter(
        pool=pool, accelerator_model=accelerator_model, is_spare=False
    ).aggregate(n=Sum("accelerator_count"))["n"]
    return int(total or 0)


def guaranteed(pool_id: int, accelerator_model: str, *, but: Tenant | None = None) -> int:
    """What the pool's quotas guarantee of the model, all together or ``but`` one tenant's."""
    quotas = Quota.objects.filter(pool_id=pool_id, accelerator_model=accelerator_model)
    if but is not None:
        quotas = quotas.exclude(tenant=but)
    return int(quotas.aggregate(n=Sum("guarantee"))["n"] or 0)


def validate_guarantees(
    *, pool: ResourcePool, accelerator_model: str, tenant: Tenant, guarantee: int
) -> None:
    """Raise a field error if this guarantee grows and would push the pool's total past its
    capacity. An unchanged or smaller guarantee passes: capacity can drop under the
    guarantees (a node removed, a fault's cordon), and that must not block edits of other
    fields (borrow limit, weight) or a cut that moves back towards the invariant."""
    current = (
        Quota.objects.filter(tenant=tenant, pool=pool, accelerator_model=accelerator_model)
        .values_list("guarantee", flat=True)
        .first()
    )
    if current is not None and guarantee <= current:
        return
    capacity = pool_capacity(pool, accelerator_model)
    if capacity == 0:
        raise ValidationError(
            {
                "accelerator_model": [
                    _("Pool {pool} has no {model} devices.").format(
                        pool=pool.name, model=accelerator_model
                    )
                ]
            }
        )
    others = guaranteed(pool.pk, accelerator_model, but=tenant)
    if others + guarantee > capacity:
        raise ValidationError(
            {
                "guarantee": [
                    _(
                        "Guarantees in {pool} for {model} would total {total}, but the pool has "
                        "{capacity} ({left} left to guarantee)."
                    ).format(
                        pool=pool.name,
                        model=accelerator_model,
                        total=others + guarantee,
                        capacity=capacity,
                        left=capacity - others,
                    )
                ]
            }
        )


def validate_covers_usage(
    *, tenant: Tenant, pool: ResourcePool, accelerator_model: str, limit: int
) -> None:
    """Raise a field error if guarantee + borrow limit would be below what the tenant holds:
    used <= guarantee + borrow limit must hold at all times, and only admission may add use."""
    used = usage_milli().get((tenant.pk, pool.pk, accelerator_model), 0)
    if used > limit * FULL:
        raise ValidationError(
            {
                "borrow_limit": [
                    _(
                        "{tenant} holds {used} {model} devices in {pool}; guarantee + borrow "
                        "limit cannot be cut below that."
                    ).format(
                        tenant=tenant.slug,
                        used=f"{used / FULL:g}",
                        model=accelerator_model,
                        pool=pool.name,
                    )
                ]
            }
        )


@transaction.atomic
def set_quota(
    *,
    tenant: Tenant,
    pool: ResourcePool,
    accelerator_model: str,
    guarantee: int,
    borrow_limit: int,
    weight: int = 1,
) -> Quota:
    """Create or update one quota. The pool row is locked so two admins editing guarantees of
    the same pool at once cannot together exceed its capacity."""
    ResourcePool.objects.select_for_update().filter(pk=pool.pk).first()
    validate_guarantees(
        pool=pool, accelerator_model=accelerator_model, tenant=tenant, guarantee=guarantee
    )
    # Admission re-checks quotas under this lock: holding it too means no job can be admitted
    # between the usage check below and the write.
    SchedulerLock.objects.select_for_update().get_or_create(name="admission")
    validate_covers_usage(
        tenant=tenant, pool=pool, accelerator_model=accelerator_model,
        limit=guarantee + borrow_limit,
    )  # fmt: skip
    quota, _created = Quota.objects.update_or_create(
        tenant=tenant,
        pool=pool,
        accelerator_model=accelerator_model,
        defaults={
            "guarantee": guarantee,
            "borrow_limit": borrow_limit,
            "weight": weight,
            "updated_at": timezone.now(),
        },
    )
    transaction.on_commit(_kick_queue_sync)
    return quota


def _kick_queue_sync() -> None:
    from apps.quotas.tasks import sync_cluster_queues

    sync_cluster_queues.delay()
