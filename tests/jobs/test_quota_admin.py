"""The Django admin enforces the same quota rule as the API."""

from __future__ import annotations

import pytest

from apps.quotas.admin import QuotaForm
from apps.quotas.models import Quota
from tests.conftest import World
from tests.jobs.conftest import Cluster

pytestmark = pytest.mark.django_db


def test_admin_form_refuses_guarantees_over_capacity(world: World, cluster: Cluster) -> None:
    quota = Quota.objects.get(tenant=world.tenant_a)
    data = {"tenant": world.tenant_a.pk, "pool": cluster.pool.pk, "accelerator_model": "A800",
            "guarantee": 20, "borrow_limit": 0, "weight": 1}  # fmt: skip
    form = QuotaForm(data=data, instance=quota)
    assert not form.is_valid()
    assert "pool has 32" in form.errors["guarantee"][0]
    form = QuotaForm(data={**data, "guarantee": 16}, instance=quota)
    assert form.is_valid(), form.errors
