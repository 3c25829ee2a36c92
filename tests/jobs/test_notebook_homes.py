"""A notebook's files outlive it: Restart mounts the same home volume, Delete files removes it,
and the retention setting removes homes nobody used for a while (apps/jobs/homes.py)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from apps.audit.models import AuditEntry
from apps.governance.services import sweep
from apps.jobs import homes
from apps.jobs.models import Job, JobEvent, OutboxEntry
from apps.jobs.relay import relay
from apps.tenancy.models import Role
from tests.conftest import World
from tests.jobs.conftest import Cluster, notebook_body, tick, training_body

pytestmark = pytest.mark.django_db

BASE = "/api/v1/tenants/tenant-a/jobs"


def started_notebook(client, cluster: Cluster) -> dict[str, Any]:
    response = client.post(f"{BASE}/", notebook_body(cluster), format="json")
    assert response.status_code == 201, response.json()
    tick(cluster)
    tick(cluster, 6)
    job = client.get(f"{BASE}/{response.json()['id']}/").json()
    assert job["state"] == "running"
    return job


def stop(client, cluster: Cluster, job_id: int) -> None:
    assert client.post(f"{BASE}/{job_id}/cancel/").json()["state"] == "cancelled"
    tick(cluster)


def restart(client, job_id: int):
    return client.post(f"{BASE}/{job_id}/restart/")


def restarted_once(client, cluster: Cluster) -> tuple[dict[str, Any], dict[str, Any]]:
    """A notebook that ran and stopped, and its restart, admitted (it mounts the first's home)."""
    first = started_notebook(client, cluster)
    stop(client, cluster, first["id"])
    second = restart(client, first["id"]).json()
    tick(cluster)
    return first, second


def test_restarts_mount_the_first_notebooks_home_and_a_clone_gets_a_new_one(
    world: World, client_for, cluster: Cluster
) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    first = started_notebook(client, cluster)
    assert first["home_job"] == first["id"] and first["home_deleted_at"] is None
    stop(client, cluster, first["id"])
    assert cluster.backend.notebook_homes == {first["id"]: "tenant-a"}  # kept after the stop

    second = restart(client, first["id"])
    assert second.status_code == 201, second.json()
    second_id = second.json()["id"]
    assert second.json()["home_job"] == first["id"] and second.json()["state"] == "queued"
    [said] = JobEvent.objects.filter(job_id=second.json()["id"], reason="RestartedWithFiles")
    assert (
        said.message == f"restarted by A-Member; mounts the home folder of notebook #{first['id']}"
    )
    assert second.json()["spec"]["notebook"] == {
        "flavor": "jupyter",
        "storage_gib": 5,
        "home_job": first["id"],
    }
    tick(cluster)
    tick(cluster, 6)
    assert Job.objects.get(pk=second_id).state == "running"
    [work] = [w for w in cluster.backend._workloads.values() if w.spec.job_id == second_id]
    assert work.spec.notebook is not None and work.spec.notebook.home_job_id == first["id"]
    stop(client, cluster, second_id)

    # A restart of the restart mounts the same volume: the chain shares one home.
    third = restart(client, second_id).json()
    assert third["home_job"] == first["id"]
    stop(client, cluster, third["id"])
    # A clone is a copy with an empty home of its own.
    clone = client.post(f"{BASE}/{third['id']}/clone/").json()
    assert clone["home_job"] == clone["id"] and "home_job" not in clone["spec"]["notebook"]
    assert AuditEntry.objects.filter(object_type="jobs.job", action="create").count() == 4


def test_only_one_notebook_of_a_home_runs_at_a_time(
    world: World, client_for, cluster: Cluster
) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    first = started_notebook(client, cluster)
    running = restart(client, first["id"])
    assert running.status_code == 409
    assert running.json()["detail"] == "Notebook explore is running; stop it first."

    stop(client, cluster, first["id"])
    second = restart(client, first["id"]).json()
    again = restart(client, first["id"])  # the second one is queued and holds the home
    assert again.status_code == 409
    assert again.json()["detail"] == (
        f"Notebook #{second['id']} (queued) already uses this home volume."
    )
    assert Job.objects.filter(kind="notebook").count() == 2


def test_who_may_restart_and_delete_files(world: World, client_for, cluster: Cluster) -> None:
    owner = world.user("a", Role.MEMBER)
    first = started_notebook(client_for(owner), cluster)
    stop(client_for(owner), cluster, first["id"])
    other = client_for(world.user("a", Role.VIEWER))
    for path in ("restart", "delete-home"):
        refused = other.post(f"{BASE}/{first['id']}/{path}/")
        assert refused.status_code == 403, path
    outsider = client_for(world.user("b", Role.TENANT_ADMIN))
    assert outsider.post(f"{BASE}/{first['id']}/restart/").status_code == 404

    # A tenant admin may restart it; the notebook and its files stay the owner's.
    admin = client_for(world.user("a", Role.TENANT_ADMIN))
    restarted = restart(admin, first["id"])
    assert restarted.status_code == 201 and restarted.json()["owner"] == owner.username

    training = client_for(owner).post(f"{BASE}/", training_body(cluster.pool), format="json")
    not_a_notebook = restart(client_for(owner), training.json()["id"])
    assert not_a_notebook.status_code == 400
    assert not_a_notebook.json()["errors"] == {"kind": ["Only notebooks have a home volume."]}


def test_delete_files_removes_the_volume_for_the_whole_chain(
    world: World, client_for, cluster: Cluster
) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    first, second = restarted_once(client, cluster)
    busy = client.post(f"{BASE}/{first['id']}/delete-home/")
    assert busy.status_code == 409
    assert busy.json()["detail"] == (
        f"Notebook #{second['id']} (dispatching) uses this home volume; stop it first."
    )
    assert cluster.backend.notebook_homes == {first["id"]: "tenant-a"}

    stop(client, cluster, second["id"])
    deleted = client.post(f"{BASE}/{second['id']}/delete-home/")  # from any job of the chain
    assert deleted.status_code == 200 and deleted.json()["home_deleted_at"] is not None
    first_now = client.get(f"{BASE}/{first['id']}/").json()
    assert first_now["home_deleted_at"] == deleted.json()["home_deleted_at"]
    relay()
    assert cluster.backend.notebook_homes == {}
    [entry] = OutboxEntry.objects.filter(action="delete_home")
    assert entry.job_id == first["id"] and entry.state == "done"

    again = client.post(f"{BASE}/{first['id']}/delete-home/")
    assert again.status_code == 200
    assert OutboxEntry.objects.filter(action="delete_home").count() == 1
    gone = restart(client, second["id"])
    assert gone.status_code == 409
    assert gone.json()["detail"] == "Its home volume was deleted; clone it to start with a new one."
    assert client.post(f"{BASE}/{second['id']}/clone/").status_code == 201
    assert AuditEntry.objects.filter(object_id=str(second["id"]), action="update").count() == 2
    # Each notebook of the chain says why its files are gone.
    for job_id in (first["id"], second["id"]):
        [event] = JobEvent.objects.filter(job_id=job_id, reason="HomeDeleted")
        assert event.message == "files in the home folder deleted by A-Member"
        assert (event.message_key, event.message_args) == ("homeDeletedBy", {"actor": "A-Member"})


def test_a_notebook_that_never_started_made_no_volume(
    world: World, client_for, cluster: Cluster
) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    queued = client.post(f"{BASE}/", notebook_body(cluster), format="json").json()
    client.post(f"{BASE}/{queued['id']}/cancel/")
    restarted = restart(client, queued["id"]).json()
    assert restarted["home_job"] == restarted["id"]  # nothing to mount: a new home
    assert not JobEvent.objects.filter(reason="RestartedWithFiles").exists()
    client.post(f"{BASE}/{restarted['id']}/cancel/")
    assert client.post(f"{BASE}/{queued['id']}/delete-home/").status_code == 200
    assert not OutboxEntry.objects.filter(action="delete_home").exists()  # no cluster call


def test_retention_deletes_homes_whose_last_notebook_ended_long_ago(
    world: World, client_for, cluster: Cluster, settings: Any
) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    first, second = restarted_once(client, cluster)
    tick(cluster, 6)
    stop(client, cluster, second["id"])
    now = timezone.now()
    Job.objects.filter(pk=first["id"]).update(finished_at=now - timedelta(days=40))
    Job.objects.filter(pk=second["id"]).update(finished_at=now - timedelta(days=29))

    assert homes.expire(now, days=30) == 0  # the restart used it 29 days ago
    assert homes.expire(now + timedelta(days=2), days=30) == 1
    assert set(Job.objects.filter(home_deleted_at__isnull=False).values_list("pk", flat=True)) == {
        first["id"],
        second["id"],
    }
    relay()
    assert cluster.backend.notebook_homes == {}
    assert homes.expire(now + timedelta(days=2), days=30) == 0  # once
    assert (
        list(JobEvent.objects.filter(reason="HomeDeleted").values_list("message", flat=True))
        == ["files in the home folder deleted: no notebook used them for 30 days"] * 2
    )


def test_the_governance_sweep_applies_the_retention_setting(
    world: World, client_for, cluster: Cluster, settings: Any
) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    first = started_notebook(client, cluster)
    stop(client, cluster, first["id"])
    Job.objects.filter(pk=first["id"]).update(finished_at=timezone.now() - timedelta(days=8))
    settings.NOTEBOOK_HOME_RETENTION_DAYS = 0  # keep every home
    assert sweep().homes_deleted == 0
    settings.NOTEBOOK_HOME_RETENTION_DAYS = 7
    assert sweep().homes_deleted == 1
    assert Job.objects.get(pk=first["id"]).home_deleted_at is not None
