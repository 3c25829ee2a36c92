"""``ZS_SCHEDULER_POLICY``: the admission loop runs the preset it names.

The small cluster of ``tests/jobs/conftest.py`` (two leaves of two 8-GPU nodes) with one node
busy in each leaf: a 16-GPU soft-topology gang fits only across the two leaves. The core's
defaults place it there at once; the tuned preset (the simulator's "ours") waits for one leaf,
up to its topology patience."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import override_settings
from django.utils import timezone

from apps.clusters.models import Node
from apps.jobs.models import Job, JobState
from apps.scheduling import core
from apps.scheduling.core.presets import PRESETS, preset, tuned
from apps.scheduling.loop import live_policy, run_cycle
from apps.scheduling.models import Hold
from apps.scheduling.snapshot import build
from apps.tenancy.models import Role
from config.env import ConfigError, get_choice
from tests.conftest import World
from tests.factories import make_running
from tests.jobs.conftest import Cluster, training_body

pytestmark = pytest.mark.django_db


def _one_busy_node_per_leaf(world: World, cluster: Cluster, client_for) -> None:
    client = client_for(world.user("b", Role.MEMBER))
    for name in ("n0", "n2"):
        body = training_body(
            cluster.pool, name=f"fill-{name}",
            replica_groups=[{"name": "worker", "replicas": 1, "accelerators": 8}],
        )  # fmt: skip
        response = client.post("/api/v1/tenants/tenant-b/jobs/", body, format="json")
        assert response.status_code == 201, response.json()
        make_running(Job.objects.get(pk=response.json()["id"]), Node.objects.get(name=name))


def _gang(world: World, cluster: Cluster, client_for) -> Job:
    client = client_for(world.user("a", Role.MEMBER))
    response = client.post(
        "/api/v1/tenants/tenant-a/jobs/", training_body(cluster.pool), format="json"
    )
    assert response.status_code == 201, response.json()
    return Job.objects.get(pk=response.json()["id"])


@pytest.mark.parametrize("name", ["standard", "tuned"])
def test_the_loop_runs_the_named_preset(
    world: World, cluster: Cluster, client_for, name: str
) -> None:
    _one_busy_node_per_leaf(world, cluster, client_for)
    job = _gang(world, cluster, client_for)
    with override_settings(SCHEDULER_POLICY=name):
        report = run_cycle()
    job.refresh_from_db()
    if name == "standard":
        assert report.admitted == 1 and job.state != JobState.QUEUED
        assert set(job.allocations.values_list("node__name", flat=True)) == {"n1", "n3"}
    else:
        assert report.admitted == 0 and job.state == JobState.QUEUED
        assert not job.allocations.exists()
        assert job.pending_code == "topology", job.pending_message
        assert "under one leaf switch" in job.pending_message
        assert "topology patience" in job.pending_message


def test_live_policy_is_sized_to_the_cluster(world: World, cluster: Cluster) -> None:
    snapshot = build(timezone.now())
    with override_settings(SCHEDULER_POLICY="standard"):
        assert live_policy(snapshot.snapshot) == core.Policy()
    with override_settings(SCHEDULER_POLICY="tuned"):
        policy = live_policy(snapshot.snapshot)
    assert policy == tuned(devices=32)
    assert policy.topology_patience == timedelta(hours=5) and policy.max_holds == 2
    assert tuned(devices=10_000).max_holds == 4  # one hold per 2,500 devices


def test_an_unknown_preset_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="choose from standard, tuned"):
        preset("fastest")
    monkeypatch.setenv("ZS_SCHEDULER_POLICY", "fastest")
    with pytest.raises(ConfigError, match="ZS_SCHEDULER_POLICY must be one of standard, tuned"):
        get_choice("ZS_SCHEDULER_POLICY", "standard", PRESETS)


def _held_gang(world: World, cluster: Cluster, client_for, monkeypatch: pytest.MonkeyPatch) -> Job:
    """n0, n1 and n2 run tenant-b's work declared for 3 h, 1 h and no limit; a 3 x 8 gang of
    tenant-a that has waited an hour. The tuned preset holds n3, n1 and n0 for it."""
    now = timezone.now().replace(microsecond=0)
    monkeypatch.setattr(timezone, "now", lambda: now)
    client = client_for(world.user("b", Role.MEMBER))
    for name, limit_h in (("n0", 3), ("n1", 1), ("n2", None)):
        body = training_body(
            cluster.pool, name=f"fill-{name}", max_runtime_s=limit_h and limit_h * 3600,
            replica_groups=[{"name": "worker", "replicas": 1, "accelerators": 8}],
        )  # fmt: skip
        response = client.post("/api/v1/tenants/tenant-b/jobs/", body, format="json")
        assert response.status_code == 201, response.json()
        make_running(Job.objects.get(pk=response.json()["id"]), Node.objects.get(name=name))
    gang = _gang(world, cluster, client_for)
    three = {"name": "worker", "replicas": 3, "accelerators": 8}
    Job.objects.filter(pk=gang.pk).update(
        spec={**gang.spec, "replica_groups": [three]}, submitted_at=now - timedelta(hours=1)
    )
    return gang


def test_a_held_gang_is_told_when_its_nodes_drain_by_declared_limits(
    world: World, cluster: Cluster, client_for, monkeypatch: pytest.MonkeyPatch
) -> None:
    gang = _held_gang(world, cluster, client_for, monkeypatch)
    with override_settings(SCHEDULER_POLICY="tuned"):
        run_cycle()
    gang.refresh_from_db()
    assert gang.pending_code == "reserved", gang.pending_message
    # n3 is free, n1's work ends within 1 h and n0's within 3 h; n2's declared no limit.
    assert gang.pending_message.endswith(
        "; the runtime limits of the work on them free them within 3h00m"
    )


def test_work_whose_limit_ends_before_the_held_nodes_drain_backfills_them(
    world: World, cluster: Cluster, client_for, monkeypatch: pytest.MonkeyPatch
) -> None:
    gang = _held_gang(world, cluster, client_for, monkeypatch)
    client = client_for(world.user("a", Role.MEMBER))
    ids = {}
    for name, limit_h in (("quick", 1), ("slow", 5)):
        body = training_body(
            cluster.pool, name=name, max_runtime_s=limit_h * 3600,
            replica_groups=[{"name": "worker", "replicas": 1, "accelerators": 1}],
        )  # fmt: skip
        response = client.post("/api/v1/tenants/tenant-a/jobs/", body, format="json")
        assert response.status_code == 201, response.json()
        ids[name] = response.json()["id"]
    with override_settings(SCHEDULER_POLICY="tuned"):
        run_cycle()
    gang.refresh_from_db()
    assert gang.pending_code == "reserved", gang.pending_message
    assert "(or to work declared to end within 3h00m)" in Hold.objects.get(job=gang).reason
    # Only n3 has free devices, and it is held: the job limited to 1 h leaves it before
    # the gang could start; the one limited to 5 h would keep the gang waiting.
    quick, slow = (Job.objects.get(pk=ids[name]) for name in ("quick", "slow"))
    assert quick.state != JobState.QUEUED
    assert set(quick.allocations.values_list("node__name", flat=True)) == {"n3"}
    assert slow.state == JobState.QUEUED
    assert slow.pending_code == "held", slow.pending_message
