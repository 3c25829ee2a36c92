"""The watch path: events move jobs at once; an expired cursor falls back to a full re-list."""

from __future__ import annotations

import pytest

from apps.jobs.models import Job, WatchCursor
from apps.jobs.relay import relay
from apps.jobs.watcher import watch_once
from apps.scheduling.loop import run_cycle
from apps.tenancy.models import Role
from tests.conftest import World
from tests.jobs.conftest import Cluster, training_body

pytestmark = pytest.mark.django_db


def test_watch_events_move_jobs_and_expired_cursor_relists(
    world: World, client_for, cluster: Cluster, caplog
):
    client = client_for(world.user("a", Role.MEMBER))
    body = training_body(cluster.pool, env={"ZS_SIM_DURATION_S": "30"})
    job_id = client.post("/api/v1/tenants/tenant-a/jobs/", body, format="json").json()["id"]
    assert watch_once(cluster.backend, timeout_s=0) == 0  # first call lists and stores a cursor
    first_cursor = WatchCursor.objects.get().resource_version
    run_cycle()
    relay()
    cluster.clock.advance(6)
    assert watch_once(cluster.backend, timeout_s=0) == 1
    assert Job.objects.get(pk=job_id).state == "running"
    assert WatchCursor.objects.get().resource_version != first_cursor

    # The cursor expires (history trimmed past it): the watcher re-lists instead of failing.
    cluster.backend.history_limit = 1
    WatchCursor.objects.update(resource_version="1")
    cluster.clock.advance(40)
    cluster.backend.list_status()  # the cluster moves on; older events fall out of history
    with caplog.at_level("INFO", logger="zhisuan.watch"):
        assert watch_once(cluster.backend, timeout_s=0) == 1
    assert "watch cursor 1 expired; re-listing" in caplog.text
    assert Job.objects.get(pk=job_id).state == "succeeded"
