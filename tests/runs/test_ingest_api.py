"""Metric ingest over the API: idempotence, validation, tenant isolation, roles."""

from __future__ import annotations

import pytest

from apps.runs.models import MetricKey, MetricPoint, MetricRollup
from apps.runs.services import create_run
from apps.tenancy.models import Role
from tests.factories import make_membership, make_user
from tests.runs.conftest import batch, metrics_url

pytestmark = pytest.mark.django_db
# No checkpoint request is pending: the answer says so.
NOTHING_ASKED = {"checkpoint_requested_at": None, "checkpoint_request_reason": ""}


def _stored(run) -> list[tuple[str, int, float]]:
    keys = dict(MetricKey.objects.filter(run=run).values_list("id", "name"))
    rows = MetricPoint.objects.filter(key_id__in=keys).values_list("key_id", "step", "value")
    return sorted((keys[k], s, v) for k, s, v in rows)


def test_ingest_stores_points_and_summaries(world, runs, client_for):
    client = client_for(world.user("a", Role.MEMBER))
    resp = client.post(metrics_url(runs.a), batch(range(100), loss=10.0, lr=0.5), format="json")
    assert resp.status_code == 200, resp.json()
    assert resp.json() == {"received": 200, "stored": 200, "duplicates": 0, **NOTHING_ASKED}
    loss = MetricKey.objects.get(run=runs.a, name="loss")
    assert (loss.count, loss.first_step, loss.last_step, loss.last_value) == (100, 0, 99, 109.0)
    assert len(_stored(runs.a)) == 200
    # Rollups at the finest level (8 steps): 13 buckets per key over steps 0..99.
    fine = MetricRollup.objects.filter(key=loss, level=3).order_by("bucket")
    assert fine.count() == 13
    first = fine.first()
    assert first is not None
    assert (first.vmin, first.smin, first.vmax, first.smax, first.n) == (10.0, 0, 17.0, 7, 8)


def test_resending_the_same_batch_stores_no_duplicates(world, runs, client_for):
    client = client_for(world.user("a", Role.MEMBER))
    body = batch(range(50), loss=1.0)
    assert client.post(metrics_url(runs.a), body, format="json").json()["stored"] == 50
    before = _stored(runs.a)
    rollups = list(MetricRollup.objects.values_list("level", "bucket", "vmin", "vmax", "n"))
    again = client.post(metrics_url(runs.a), body, format="json")
    assert again.json() == {"received": 50, "stored": 0, "duplicates": 50, **NOTHING_ASKED}
    assert _stored(runs.a) == before
    assert list(MetricRollup.objects.values_list("level", "bucket", "vmin", "vmax", "n")) == rollups
    assert MetricKey.objects.get(run=runs.a, name="loss").count == 50


def test_overlapping_batch_keeps_first_values_and_adds_new_steps(world, runs, client_for):
    client = client_for(world.user("a", Role.MEMBER))
    client.post(metrics_url(runs.a), batch(range(0, 10), loss=0.0), format="json")
    resp = client.post(metrics_url(runs.a), batch(range(5, 15), loss=100.0), format="json")
    assert resp.json() == {"received": 10, "stored": 5, "duplicates": 5, **NOTHING_ASKED}
    values = {s: v for _, s, v in _stored(runs.a)}
    assert values[5] == 5.0 and values[14] == 114.0
    key = MetricKey.objects.get(run=runs.a, name="loss")
    assert (key.count, key.last_step, key.last_value) == (15, 14, 114.0)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"points": []}, "points"),
        ({"points": [{"step": -1, "values": {"loss": 1}}]}, "points.0.step"),
        ({"points": [{"step": 1.5, "values": {"loss": 1}}]}, "points.0.step"),
        ({"points": [{"step": True, "values": {"loss": 1}}]}, "points.0.step"),
        ({"points": [{"step": 1, "values": {"loss": "NaN"}}]}, "points.0.values.loss"),
        ({"points": [{"step": 1, "values": {"loss": None}}]}, "points.0.values.loss"),
        ({"points": [{"step": 1, "values": {"loss": False}}]}, "points.0.values.loss"),
        ({"points": [{"step": 1, "values": {"loss": 10**400}}]}, "points.0.values.loss"),
        ({"points": [{"step": 1, "values": {"bad key!": 1.0}}]}, "points.0.values.bad key!"),
        ({"points": [{"step": 1, "values": {"/loss": 1.0}}]}, "points.0.values./loss"),
        # a trailing newline made a second "loss" series that no chart could read
        ({"points": [{"step": 1, "values": {"loss\n": 1.0}}]}, "points.0.values.loss\n"),
        ({"points": [{"step": 1, "values": {}}]}, "points.0.values"),
        ({"points": [{"step": 1}]}, "points.0.values"),
        ({"points": ["x"]}, "points.0"),
        ({"points": [{"step": 2**53, "values": {"loss": 1}}]}, "points.0.step"),
        ({"points": [{"step": s, "values": {"a": 1.0}} for s in range(10_001)]}, "points"),
    ],
)
def test_bad_points_are_a_400_with_field_errors_and_store_nothing(
    world, runs, client_for, body, field
):
    client = client_for(world.user("a", Role.MEMBER))
    resp = client.post(metrics_url(runs.a), body, format="json")
    assert resp.status_code == 400
    assert resp.json()["detail"] == "Invalid input."
    assert field in resp.json()["errors"]
    assert MetricPoint.objects.count() == 0


def test_non_finite_floats_are_rejected():
    # JSON has no NaN/Infinity, but Python's json module writes and reads them.
    from apps.runs.api.serializers import parse_points

    for bad in (float("nan"), float("inf"), -float("inf")):
        points, errors = parse_points({"points": [{"step": 1, "values": {"x": bad}}]})
        assert points == [] and errors == {"points.0.values.x": ["Must be a finite number."]}


def test_one_bad_value_rejects_the_whole_batch(world, runs, client_for):
    client = client_for(world.user("a", Role.MEMBER))
    body = batch(range(10), loss=1.0)
    body["points"][3]["values"]["loss"] = "oops"  # type: ignore[index]
    assert client.post(metrics_url(runs.a), body, format="json").status_code == 400
    assert MetricPoint.objects.count() == 0


def test_another_tenants_run_is_a_404_and_nothing_changes(world, runs, client_for):
    client = client_for(world.user("a", Role.TENANT_ADMIN))
    # tenant b's run under tenant a's URL, and under tenant b's URL
    wrong_url = f"/api/v1/tenants/{world.tenant_a.slug}/runs/{runs.b.pk}/metrics/"
    assert client.post(wrong_url, batch(range(3), loss=1.0), format="json").status_code == 404
    assert client.get(wrong_url).status_code == 404
    assert (
        client.post(metrics_url(runs.b), batch(range(3), loss=1.0), format="json").status_code
        == 404
    )
    assert client.get(f"/api/v1/tenants/{world.tenant_a.slug}/runs/{runs.b.pk}/").status_code == 404
    assert MetricPoint.objects.count() == 0


def test_viewer_reads_but_cannot_ingest(world, runs, client_for):
    member = client_for(world.user("a", Role.MEMBER))
    member.post(metrics_url(runs.a), batch(range(3), loss=1.0), format="json")
    viewer = client_for(world.user("a", Role.VIEWER))
    assert (
        viewer.post(metrics_url(runs.a), batch(range(3, 6), loss=1.0), format="json").status_code
        == 403
    )
    resp = viewer.get(metrics_url(runs.a), {"keys": "loss"})
    assert resp.status_code == 200
    assert resp.json()["series"]["loss"]["steps"] == [0, 1, 2]


def test_anonymous_is_a_401(runs, client_for):
    assert client_for(None).get(metrics_url(runs.a)).status_code == 401


def test_run_list_detail_create_and_patch(world, runs, client_for):
    client = client_for(world.user("a", Role.MEMBER))
    base = f"/api/v1/tenants/{world.tenant_a.slug}/runs/"
    listed = client.get(base).json()["results"]
    assert [r["id"] for r in listed] == [runs.a.pk]
    created = client.post(
        base, {"name": "sweep-1", "config": {"lr": 3e-4}, "tags": ["sweep", "7b"]}, format="json"
    )
    assert created.status_code == 201, created.json()
    rid = created.json()["id"]
    patched = client.patch(
        f"{base}{rid}/",
        {"config": {"batch": 512}, "tags": ["sweep"], "state": "finished"},
        format="json",
    )
    assert patched.status_code == 200, patched.json()
    assert patched.json()["config"] == {"lr": 3e-4, "batch": 512}
    assert patched.json()["tags"] == ["sweep"]
    assert patched.json()["state"] == "finished"
    bad = client.patch(f"{base}{rid}/", {"tags": ["no spaces allowed"]}, format="json")
    assert bad.status_code == 400 and "tags" in bad.json()["errors"]


def test_runs_are_found_by_part_of_their_name(world, client_for):
    """A sweep of hundreds of runs: the dashboard finds the few it wants by name."""
    for name in ("lr-sweep-3e-4", "LR-sweep-1e-3", "baseline"):
        create_run(tenant=world.tenant_a, owner=None, name=name)
    create_run(tenant=world.tenant_b, owner=None, name="lr-sweep-b")
    client = client_for(world.user("a", Role.VIEWER))
    base = f"/api/v1/tenants/{world.tenant_a.slug}/runs/"
    found = client.get(f"{base}?name=lr-SWEEP").json()["results"]
    assert [r["name"] for r in found] == ["LR-sweep-1e-3", "lr-sweep-3e-4"]
    assert client.get(f"{base}?name=nothing").json()["results"] == []


def test_a_patch_of_a_run_without_owner_or_job_answers_them_as_null(world, client_for):
    """Both fields read through a null foreign key; a partial update must not drop them."""
    run = create_run(tenant=world.tenant_a, owner=None, name="orphan")
    client = client_for(world.user("a", Role.TENANT_ADMIN))
    patched = client.patch(
        f"/api/v1/tenants/{world.tenant_a.slug}/runs/{run.pk}/", {"tags": ["x"]}, format="json"
    )
    assert patched.status_code == 200, patched.json()
    assert patched.json()["tags"] == ["x"]
    assert (patched.json()["owner"], patched.json()["job_state"]) == (None, None)


def test_run_list_has_no_n_plus_one(world, client_for):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from apps.runs.services import create_run, ingest_metrics

    client = client_for(world.user("a", Role.MEMBER))
    url = f"/api/v1/tenants/{world.tenant_a.slug}/runs/"

    def queries() -> int:
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(url).status_code == 200
        return len(ctx.captured_queries)

    def add_run(i: int) -> None:
        run = create_run(tenant=world.tenant_a, owner=world.user("a", Role.MEMBER), name=f"r{i}")
        ingest_metrics(run=run, points=[("loss", 1, 1.0), ("lr", 1, 0.1)])

    add_run(0)
    one = queries()
    for i in range(1, 8):
        add_run(i)
    assert queries() == one


def test_a_malformed_run_id_is_a_404_not_a_500(world, client_for):
    client = client_for(world.user("a", Role.MEMBER))
    for method in (client.get, client.post):
        resp = method("/api/v1/tenants/tenant-a/runs/%C2%9D%22/metrics/", {}, format="json")
        assert resp.status_code == 404


def test_a_nul_character_anywhere_in_a_body_is_a_400(world, client_for):
    client = client_for(world.user("a", Role.MEMBER))
    for body in (
        {"name": "r", "config": {"lr": "3e-4\u0000"}},
        {"name": "r", "config": {"\u0000": 1}},
    ):
        resp = client.post("/api/v1/tenants/tenant-a/runs/", body, format="json")
        assert resp.status_code == 400, resp.content
        assert "NUL" in resp.json()["detail"]


def test_only_the_owner_or_a_tenant_admin_changes_a_run(world, runs, client_for):
    """Another member reads a run but cannot rename it, edit its config or state, add metrics
    or register a checkpoint (which would choose where the owner's job resumes from), as
    they cannot cancel the owner's job."""
    other = make_user("a-member-2")
    make_membership(tenant=world.tenant_a, user=other, role=Role.MEMBER)
    client = client_for(other)
    base = f"/api/v1/tenants/{world.tenant_a.slug}/runs/{runs.a.pk}/"
    ckpt = {"step": 1, "path": "/elsewhere", "rank": 0, "world_size": 1, "shard_bytes": 1}
    for method, url, body in (
        ("patch", base, {"name": "mine", "config": {"lr": 9}, "state": "failed"}),
        ("post", metrics_url(runs.a), batch(range(1), loss=-1.0)),
        ("post", f"{base}checkpoints/", ckpt),
    ):
        resp = getattr(client, method)(url, body, format="json")
        assert resp.status_code == 403, resp.json()
        assert resp.json()["detail"] == "Only the run's owner or a tenant admin can change it."
    assert client.get(base).status_code == 200
    runs.a.refresh_from_db()
    assert (runs.a.name, runs.a.state, runs.a.config) == ("sft", "running", {})
    assert not runs.a.checkpoints.exists() and not runs.a.keys.exists()
    admin = client_for(world.user("a", Role.TENANT_ADMIN))
    assert admin.patch(base, {"tags": ["ok"]}, format="json").status_code == 200
    owner = client_for(world.user("a", Role.MEMBER))
    assert (
        owner.post(metrics_url(runs.a), batch(range(1), loss=1.0), format="json").status_code == 200
    )
