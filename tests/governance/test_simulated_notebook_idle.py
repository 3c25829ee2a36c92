"""The demo's notebook story end to end on the simulated telemetry: a notebook left open reads
idle through the real source, rollups and utilization provider, so the sweep warns it; a
training job on the same node stays busy and is left alone."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.governance.models import IdleFlag
from apps.governance.services import sweep
from apps.jobs.models import JobKind
from apps.telemetry.aggregate import RateTracker, build_state
from apps.telemetry.collector import owners_of
from apps.telemetry.inventory import load_inventory
from apps.telemetry.rollup import Rollups
from apps.telemetry.sources.simulated import SimulatedSource
from tests.conftest import World
from tests.factories import make_node, make_pool
from tests.telemetry.helpers import running_job

pytestmark = pytest.mark.django_db

TICK_S = 10


def test_an_open_notebook_is_warned_and_a_training_job_is_not(world: World) -> None:
    node = make_node(pool=make_pool(), name="gpu-00")
    notebook = running_job(world, "a", node, [0])
    training = running_job(world, "b", node, [1, 2])
    now = timezone.now()
    started = now - timedelta(hours=2)
    running_since = {"started_at": started, "state_changed_at": started}
    type(notebook).objects.filter(pk=notebook.pk).update(kind=JobKind.NOTEBOOK, **running_since)
    type(training).objects.filter(pk=training.pk).update(**running_since)

    # 70 minutes of collection (the default notebook idle period is 1 h), up to now.
    first = now.timestamp() - 70 * 60
    clock = iter(first + TICK_S * i for i in range(70 * 60 // TICK_S + 1))
    inventory = load_inventory()
    assert [g.interactive for g in inventory.gpus if g.job_id] == [True, False, False]
    source = SimulatedSource(inventory=lambda: inventory, seed=1, clock=lambda: next(clock))
    owners, rates, rollups = owners_of(inventory), RateTracker(), Rollups()
    for _ in range(70 * 60 // TICK_S + 1):
        collection = source.collect()
        rollups.feed(build_state(collection, owners, rates.rates(collection)))
    rollups.flush()

    result = sweep()
    assert result.warned == 1
    flag = IdleFlag.objects.get()
    assert flag.job_id == notebook.pk and flag.state == "warned"
    assert flag.peak_util_pct is not None and flag.peak_util_pct < 10
    assert not IdleFlag.objects.filter(job_id=training.pk).exists()
