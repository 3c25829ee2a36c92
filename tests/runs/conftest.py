"""A run in tenant a (owned by a's member) and one in tenant b."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from apps.runs.models import Run
from apps.runs.services import create_run
from apps.tenancy.models import Role
from tests.conftest import World


@dataclass
class Runs:
    a: Run
    b: Run


@pytest.fixture
def runs(world: World) -> Runs:
    return Runs(
        a=create_run(tenant=world.tenant_a, owner=world.user("a", Role.MEMBER), name="sft"),
        b=create_run(tenant=world.tenant_b, owner=world.user("b", Role.MEMBER), name="pretrain"),
    )


def metrics_url(run: Run) -> str:
    return f"/api/v1/tenants/{run.tenant.slug}/runs/{run.pk}/metrics/"


def batch(steps: range, **keys: float) -> dict[str, object]:
    """Points at ``steps`` with value ``base + step`` for each ``key=base``."""
    return {"points": [{"step": s, "values": {k: b + s for k, b in keys.items()}} for s in steps]}
