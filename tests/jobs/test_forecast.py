"""Expected start times of queued jobs: worked out from the cluster in the database, stored
on each queued job, shown by the API, and dropped when the job leaves the queue."""

from __future__ import annotations

import pytest
from django.utils import timezone

from apps.clusters.models import Node
from apps.jobs.models import Job, JobState
from apps.jobs.services import transition
from apps.scheduling import forecast
from apps.tenancy.models import Role
from tests.conftest import World
from tests.factories import make_running
from tests.jobs.conftest import Cluster, training_body

pytestmark = pytest.mark.django_db
H = 3600


def _submit(client, cluster: Cluster, tenant: str, name: str, **overrides: object) -> Job:
    body = training_body(
        cluster.pool, name=name, topology={"mode": "none"},
        replica_groups=[{"name": "worker", "replicas": 1, "accelerators": 8}], **overrides,
    )  # fmt: skip
    response = client.post(f"/api/v1/tenants/{tenant}/jobs/", body, format="json")
    assert response.status_code == 201, response.json()
    return Job.objects.get(pk=response.json()["id"])


def _full_pool(world: World, cluster: Cluster, client_for) -> None:
    """Every node runs 8 GPUs of tenant-b's P3 work (which nothing preempts), declared to end
    in 1, 2, 3 and 4 hours."""
    client = client_for(world.user("b", Role.MEMBER))
    for i in range(4):
        job = _submit(client, cluster, "tenant-b", f"fill-{i}", priority=3,
                      max_runtime_s=(i + 1) * H)  # fmt: skip
        make_running(job, Node.objects.get(name=f"n{i}"))


def test_queued_jobs_learn_when_they_start(world: World, cluster: Cluster, client_for) -> None:
    _full_pool(world, cluster, client_for)
    client = client_for(world.user("a", Role.MEMBER))
    first = _submit(client, cluster, "tenant-a", "first", max_runtime_s=2 * H)
    open_ended = _submit(client, cluster, "tenant-a", "open-ended")
    third = _submit(client, cluster, "tenant-a", "third", max_runtime_s=H)
    assert Job.objects.filter(state=JobState.QUEUED).count() == 3
    # The fills were admitted a moment before ``now``: their ends are a moment before the
    # whole hours.
    now = timezone.now()
    done = forecast.refresh(now)
    assert (done.queued, done.forecast) == (3, 3)
    jobs = Job.objects.filter(pk__in=[first.pk, open_ended.pk, third.pk])
    assert {j.expected_start_as_of for j in jobs} == {now}
    starts = {j.name: j.expected_start_at for j in jobs if j.expected_start_at is not None}
    waits = {name: round((at - now).total_seconds() / 60) for name, at in starts.items()}
    # first takes n0 at 1 h; open-ended n1 at 2 h; third n2 at 3 h (first ends at 3 h too).
    assert waits == {"first": 60, "open-ended": 120, "third": 180}

    body = client.get(f"/api/v1/tenants/tenant-a/jobs/{third.pk}/").json()
    assert body["expected_start_as_of"] is not None
    assert body["expected_start_at"] == starts["third"].isoformat().replace("+00:00", "Z")
    listed = client.get("/api/v1/tenants/tenant-a/jobs/").json()["results"]
    assert {j["name"]: j["expected_start_at"] is not None for j in listed} == {
        "first": True, "open-ended": True, "third": True,
    }  # fmt: skip
    # The pool's queue gives every entry's forecast, other tenants' jobs included (like
    # their size and priority, it says nothing of whose they are).
    other = client_for(world.user("b", Role.MEMBER))
    queue = other.get(f"/api/v1/pools/{cluster.pool.pk}/queue/").json()
    assert [(e["name"], e["expected_start_at"]) for e in queue] == [
        (None, starts[name].isoformat().replace("+00:00", "Z"))
        for name in ("first", "open-ended", "third")
    ]


def test_no_estimate_behind_work_without_an_end(world: World, cluster: Cluster, client_for) -> None:
    client = client_for(world.user("b", Role.MEMBER))
    for i in range(4):  # no runtime limit: nothing says when these end
        make_running(_submit(client, cluster, "tenant-b", f"fill-{i}", priority=3),
                     Node.objects.get(name=f"n{i}"))  # fmt: skip
    waiting = _submit(client_for(world.user("a", Role.MEMBER)), cluster, "tenant-a", "w",
                      max_runtime_s=H)  # fmt: skip
    now = timezone.now()
    assert forecast.refresh(now).forecast == 0
    waiting.refresh_from_db()
    assert (waiting.expected_start_at, waiting.expected_start_as_of) == (None, now)


def test_a_job_leaving_the_queue_drops_its_forecast(
    world: World, cluster: Cluster, client_for
) -> None:
    _full_pool(world, cluster, client_for)
    job = _submit(client_for(world.user("a", Role.MEMBER)), cluster, "tenant-a", "w",
                  max_runtime_s=H)  # fmt: skip
    forecast.refresh()
    job.refresh_from_db()
    assert job.expected_start_at is not None
    transition(job, JobState.CANCELLED, reason="Cancelled")
    left = Job.objects.get(pk=job.pk)
    assert (left.expected_start_at, left.expected_start_as_of) == (None, None)
    # The next refresh writes nothing into a job that is no longer queued.
    assert forecast.refresh().queued == 0
    job.refresh_from_db()
    assert job.expected_start_as_of is None


def test_refresh_if_due_runs_once_per_interval(world: World, cluster: Cluster) -> None:
    forecast._last[0] = float("-inf")
    assert forecast.refresh_if_due(60.0) is not None
    assert forecast.refresh_if_due(60.0) is None
    assert forecast.refresh_if_due(0.0) is not None
