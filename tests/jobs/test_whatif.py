"""What-if replay of the cluster's own history (apps/scheduling/whatif.py, manage.py whatif)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from apps.jobs.models import Job, JobKind, JobState
from apps.quotas.models import Quota
from apps.scheduling import whatif
from apps.scheduling.models import WhatIfRun
from apps.scheduling.sim.scenario import ScenarioError
from apps.scheduling.snapshot import pool_keys
from tests.factories import make_node, make_pool, make_tenant

pytestmark = pytest.mark.django_db
T0 = datetime(2026, 11, 2, tzinfo=UTC)
H = 3600.0


def _job(tenant, pool, name, *, gpus=8, replicas=1, kind=JobKind.TRAINING, submitted,
         admitted=None, finished=None, limit_h=None, max_wait_h=None) -> Job:  # fmt: skip
    at = T0 + timedelta(hours=submitted)
    return Job.objects.create(
        tenant=tenant,
        name=name,
        kind=kind,
        pool=pool,
        priority=2,
        spec={
            "replica_groups": [{"name": "worker", "replicas": replicas, "accelerators": gpus}],
            "topology": {"mode": "soft"},
        },
        state=JobState.SUCCEEDED if finished is not None else JobState.RUNNING,
        submitted_at=at,
        admitted_at=None if admitted is None else T0 + timedelta(hours=admitted),
        finished_at=None if finished is None else T0 + timedelta(hours=finished),
        max_runtime_s=None if limit_h is None else int(limit_h * H),
        max_wait_s=None if max_wait_h is None else int(max_wait_h * H),
    )


@pytest.fixture
def history_db():
    tenant = make_tenant("vision")
    pool = make_pool()
    for i in range(4):
        make_node(pool=pool, leaf_switch=f"leaf{i // 2}", cordoned=(i == 0))
    Quota.objects.create(
        tenant=tenant, pool=pool, accelerator_model="A800", guarantee=16, borrow_limit=16
    )
    _job(tenant, pool, "before", submitted=-2, admitted=-2, finished=1, limit_h=4)  # at T0
    _job(tenant, pool, "old", submitted=-5, admitted=-5, finished=-1)  # over before T0
    _job(tenant, pool, "pair", replicas=2, submitted=1, admitted=1.5, finished=3.5, limit_h=8,
         max_wait_h=0.25)  # fmt: skip
    _job(tenant, pool, "nb", gpus=1, kind=JobKind.NOTEBOOK, submitted=2, admitted=2)
    Job.objects.create(
        tenant=tenant, name="never", kind=JobKind.TRAINING, pool=pool, spec={},
        state=JobState.CANCELLED, submitted_at=T0 + timedelta(hours=3),
    )  # fmt: skip
    _job(tenant, pool, "late", submitted=9, admitted=9, finished=12)  # ends after the window
    _job(tenant, pool, "after", submitted=11, admitted=11)
    return pool


def test_history_becomes_a_workload_of_what_ran(history_db):
    history = whatif.history_workload(T0, T0 + timedelta(hours=10))
    w = history.workload
    by_name = {Job.objects.get(pk=int(j.job_id)).name: j for j in w.jobs}
    assert sorted(by_name) == ["before", "late", "nb", "pair"]
    assert (by_name["before"].submit, by_name["before"].duration) == (0.0, 1 * H)
    assert (by_name["pair"].submit, by_name["pair"].duration) == (1 * H, 2 * H)
    assert by_name["pair"].gpus == 16
    assert by_name["nb"].duration is None  # still running: until the window ends
    assert by_name["late"].duration is None  # finished after the window
    # The replay's scheduler knows what the product's did: the declared limits, what is left
    # of them for work running at T0 (admitted 2 h before, 4 h limit), and no more.
    assert not w.exact_runtimes
    assert (by_name["before"].runtime_limit, by_name["pair"].runtime_limit) == (2 * H, 8 * H)
    assert by_name["nb"].runtime_limit is None and by_name["late"].runtime_limit is None
    assert history.never_started == 1
    assert w.horizon == w.measure_until == 10 * H
    # Today's cordon says nothing about the past: every node is schedulable.
    assert len(w.nodes) == 4 and all(n.healthy and not n.cordoned for n in w.nodes)
    assert [(q.guarantee, q.borrow_limit) for q in w.quotas] == [(16, 16)]
    # Its topology, not the benchmarks' reference one, says which jobs fit a leaf or an SU.
    assert (w.meta["nodes_per_leaf"], w.meta["nodes_per_su"]) == (2, 4)
    # As it happened: "pair" waited 30 minutes; the job running at T0 is not counted.
    assert history.actual_waits["9-64"].count == 1
    assert history.actual_waits["9-64"].mean == 0.5 * H
    assert history.actual_waits["2-8"].count == 1  # "late"; "before" came before the window
    # GPU-hours held inside the window: "before" 8 x 1 h, "pair" 16 x 2 h, "nb" 1 x 8 h,
    # "late" 8 x 1 h (it ran on past the end), of 32 GPUs x 10 h.
    assert history.actual_allocation == pytest.approx((8 + 32 + 8 + 8) / 320)
    assert history.actual_late == 1  # "pair" waited 30 minutes of its 15
    assert history.actual_tenant_use == {"vision": pytest.approx(5.6)}  # 56 GPU-hours / 10 h
    # Over time, every 3 minutes (10 h / 200): held GPUs of 32 and jobs waiting.
    series = {round(t / H, 2): (a * 32, n) for t, a, n in history.actual_series}
    assert len(series) == 200 and min(series) == 0 and max(series) == 9.95
    assert series[0] == (8, 0)  # "before"
    assert series[1.0] == (0, 1)  # "before" ended; "pair" submitted, waiting
    assert series[1.5] == (16, 0)  # "pair" admitted
    assert series[2.5] == (17, 0)  # and the notebook
    assert series[9.5] == (9, 0)  # the notebook and "late"


def test_replay_runs_each_policy_on_the_history(history_db):
    history = whatif.history_workload(T0, T0 + timedelta(hours=10))
    results = whatif.replay(history, ["ours", "fifo-spread"])
    assert [r.policy for r in results] == ["ours", "fifo-spread"]
    for r in results:
        assert r.summary["jobs"] == 4
        assert r.summary["completed"] == 2  # "before" and "pair"; the others run to the end
        # 32 GPUs: 8 busy for the first hour, 16 more for two hours from 1 h, the
        # notebook's 1 from 2 h on, "late" from 9 h: at least that much allocation.
        assert r.summary["alloc_window"] > (8 * 1 + 16 * 2 + 1 * 7 + 8 * 0.9) / (32 * 10)
    with pytest.raises(ValueError, match="unknown policy"):
        whatif.replay(history, ["ours", "round-robin"])


def test_whatif_command_prints_policies_and_real_waits(history_db, monkeypatch):
    monkeypatch.setattr(timezone, "now", lambda: T0 + timedelta(hours=10))
    out = StringIO()
    call_command("whatif", "--hours", "10", "--policies", "ours,volcano", stdout=out)
    text = out.getvalue()
    assert "## What-if: 4 jobs" in text and "1 never started" in text
    assert "| Ours (all switches + fragmentation-aware) | Volcano-like" in text
    assert "| 9-64 (1 jobs) | 30.0 m / 30.0 m / 30.0 m |" in text
    assert "As it happened: 17.5% of the accelerators allocated on average, 1 jobs" in text
    assert "GPUs in use by tenant, mean over the window: vision 5.6" in text
    with pytest.raises(CommandError, match="unknown policy round-robin"):
        call_command("whatif", "--policies", "ours,round-robin", stdout=StringIO())
    with pytest.raises(CommandError, match="--hours must be positive"):
        call_command("whatif", "--hours", "0", stdout=StringIO())


URL = "/api/v1/scheduling/what-if/"


def test_only_platform_admins_run_or_read_replays(world, client_for, history_db):
    from apps.tenancy.models import Role

    run = WhatIfRun.objects.create(hours=1, policies=["ours"])
    for role in (Role.TENANT_ADMIN, Role.MEMBER, Role.VIEWER):
        client = client_for(world.user("a", role))
        assert client.get(URL).status_code == 403
        assert client.get(f"{URL}{run.pk}/").status_code == 403
        assert client.post(URL, {"hours": 1}, format="json").status_code == 403
    assert WhatIfRun.objects.count() == 1


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"hours": 0}, "hours"),
        ({"hours": 24 * 91}, "hours"),
        ({"hours": "a week"}, "hours"),
        ({"policies": []}, "policies"),
        ({"policies": ["ours", "round-robin"]}, "policies"),
        ({"policies": ["ours", "ours"]}, "policies"),
        ({"seed": -1}, "seed"),
    ],
)
def test_bad_requests_get_field_errors(world, client_for, body, field):
    response = client_for(world.platform_admin).post(URL, body, format="json")
    assert response.status_code == 400
    assert field in response.json()["errors"]
    assert not WhatIfRun.objects.exists()


def test_a_replay_runs_in_a_worker_and_reports_progress_and_results(
    world, client_for, history_db, monkeypatch, django_capture_on_commit_callbacks
):
    monkeypatch.setattr(timezone, "now", lambda: T0 + timedelta(hours=10))
    started: list[int] = []
    monkeypatch.setattr("apps.scheduling.tasks.whatif_replay.delay", started.append)
    client = client_for(world.platform_admin)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(URL, {"hours": 10, "policies": ["ours", "best-fit"]}, format="json")
    assert response.status_code == 201
    body = response.json()
    assert (body["state"], body["progress"], body["result"]) == ("pending", 0.0, None)
    assert body["seed"] == 0 and body["policies"] == ["ours", "best-fit"]
    assert started == [body["id"]]  # handed to a worker once the request committed
    # Progress is saved as the replay goes: halfway through the first of two policies is 25%.
    seen: list[float] = []
    real_replay = whatif.replay

    def replay(history, names, *, seed=0, progress=None):
        progress(0.5, "halfway")
        seen.append(WhatIfRun.objects.get(pk=body["id"]).progress)
        return real_replay(history, names, seed=seed, progress=progress)

    monkeypatch.setattr(whatif, "replay", replay)
    run = whatif.execute(body["id"])
    assert seen == [0.25, 0.75]
    assert run.state == "done" and run.progress == 1.0 and run.finished_at is not None
    assert (run.window_start, run.window_end) == (T0, T0 + timedelta(hours=10))
    result = client.get(f"{URL}{body['id']}/").json()["result"]
    assert (result["jobs"], result["never_started"], result["nodes"]) == (4, 1, 4)
    assert result["actual_waits"]["9-64"] == {
        "count": 1, "mean_s": 1800.0, "p95_s": 1800.0, "p99_s": 1800.0
    }  # fmt: skip
    assert (result["actual_allocation"], result["actual_late_jobs"]) == (0.175, 1)
    assert result["actual_tenant_use"] == {"vision": pytest.approx(5.6)}
    assert [p["policy"] for p in result["policies"]] == ["ours", "best-fit"]
    assert result["live_policy"] == "standard"  # ZS_SCHEDULER_POLICY's default
    ours = result["policies"][0]
    assert ours["completed"] == 2 and ours["one_leaf"] == [1, 1]
    assert set(ours["waits"]) == {"1", "2-8", "9-64"}  # the notebook, 8-GPU jobs, the pair
    [vision] = ours["tenants"]
    assert (vision["tenant"], vision["guarantee_gpus"]) == ("vision", 16)
    # Every job starts as it arrives in the replay and runs as long as it really held its
    # GPUs, all inside the window, so the replay holds what really was held: the two
    # measures, worked out apart, agree.
    assert vision["mean_used_gpus"] == pytest.approx(result["actual_tenant_use"]["vision"])
    assert ours["allocation"] == pytest.approx(result["actual_allocation"])
    assert vision["short_when_demanding"] == 0  # it never waited below its guarantee
    assert result["actual_series"][0] == {"t_h": 0.0, "allocation": 0.25, "waiting": 0}
    assert len(result["actual_series"]) == len(ours["series"]) == 200
    # The replay samples at the same times; at 2.5 h both have the pair and the notebook running.
    assert [p["t_h"] for p in ours["series"]] == [p["t_h"] for p in result["actual_series"]]
    assert ours["series"][50] == {"t_h": 2.5, "allocation": 17 / 32, "waiting": 0}
    # After "late" arrives at 9 h nothing happens (the rest runs to the end): the replay's
    # last sample stands for the rest of the window.
    assert ours["series"][-1] == {"t_h": 9.95, "allocation": 9 / 32, "waiting": 0}
    assert whatif.execute(body["id"]).finished_at == run.finished_at  # done: left alone


def test_a_failed_replay_says_why(world, history_db, monkeypatch):
    given: list[object] = []

    def broken(start, end, keys=None):
        given.append(keys)
        raise ValueError("the history could not be read")

    monkeypatch.setattr(whatif, "history_workload", broken)
    run = WhatIfRun.objects.create(hours=1, policies=["ours"])
    run = whatif.execute(run.pk)
    assert run.state == "failed" and run.message == "the history could not be read"
    # The run reads the pools' keys once and hands them on.
    assert given == [pool_keys()]


def test_a_run_stored_before_the_real_allocation_was_measured_still_reads(world, client_for):
    old = {"jobs": 0, "never_started": 0, "nodes": 1, "accelerators": 8, "actual_waits": {},
           "policies": []}  # fmt: skip
    run = WhatIfRun.objects.create(hours=1, policies=["ours"], state="done", result=old)
    response = client_for(world.platform_admin).get(f"{URL}{run.pk}/")
    assert response.status_code == 200
    result = response.json()["result"]
    assert result["accelerators"] == 8 and "actual_allocation" not in result


def test_actual_series_counts_what_was_held_and_waiting_at_each_sample():
    # 2 h window: a sample every 36 s (200 of them, the last before the end). 1,000 milli
    # held from 0 to 1 h and 2,000 from 30 min on; a job waits from 36 s to 108 s.
    held = [(0.0, 3600.0, 1000), (1800.0, 7200.0, 2000), (50.0, 50.0, 4000)]  # last: empty
    series = whatif.actual_series(held, [(36.0, 108.0)], 7200.0, 4000)
    assert len(series) == 200 and series[-1][0] == 7164.0
    at = {t: (a, n) for t, a, n in series}
    assert at[0.0] == (0.25, 0) and at[36.0] == (0.25, 1) and at[72.0] == (0.25, 1)
    assert at[108.0] == (0.25, 0)  # admitted at 108 s: no longer waiting
    assert at[1800.0] == (0.75, 0) and at[3600.0] == (0.5, 0)  # ends count at their time
    assert whatif.actual_series(held, [], 7200.0, 0)[0] == (0.0, 0.0, 0)  # no capacity


def test_a_replay_on_a_shrunk_cluster_leaves_what_no_longer_fits_waiting(history_db):
    pool_id = history_db.pk
    history = whatif.changed(
        whatif.history_workload(T0, T0 + timedelta(hours=10)),
        whatif.pool_changes([{"pool": pool_id, "nodes": -3}], pool_keys()),
    )
    key = history.workload.nodes[0].pool
    assert history.node_changes == [{"pool": key, "nodes": -3, "accelerators": -24}]
    assert len(history.workload.nodes) == 1
    assert (history.workload.meta["nodes_per_leaf"], history.workload.meta["nodes_per_su"]) == (
        1,
        1,
    )
    [ours] = whatif.replay(history, ["ours"])
    # One 8-GPU node: "pair" (two 8-GPU replicas) never fits, and "late" (8 GPUs, at 9 h)
    # finds the notebook's GPU taken: two jobs never start.
    assert ours.summary["never_started"] == 2
    result = whatif.result_of(history, [ours])
    assert (result["nodes"], result["accelerators"]) == (1, 8)
    assert result["policies"][0]["not_started"] == 2
    # What really happened is of the cluster as it was: 56 GPU-hours of 32 GPUs x 10 h.
    assert result["actual_allocation"] == pytest.approx(56 / 320)
    with pytest.raises(ScenarioError, match="has 4 nodes; cannot remove 5"):
        whatif.changed(
            whatif.history_workload(T0, T0 + timedelta(hours=1)),
            whatif.pool_changes([{"pool": pool_id, "nodes": -5}], pool_keys()),
        )
    with pytest.raises(ScenarioError, match="resource pool 999999 no longer exists"):
        whatif.pool_changes([{"pool": 999999, "nodes": 1}], pool_keys())


def test_an_api_replay_on_a_grown_cluster(
    world, client_for, history_db, monkeypatch, django_capture_on_commit_callbacks
):
    monkeypatch.setattr(timezone, "now", lambda: T0 + timedelta(hours=10))
    monkeypatch.setattr("apps.scheduling.tasks.whatif_replay.delay", lambda pk: None)
    client = client_for(world.platform_admin)
    body = {
        "hours": 10,
        "policies": ["ours"],
        "node_changes": [{"pool": history_db.pk, "nodes": 2}],
    }
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(URL, body, format="json")
    assert response.status_code == 201
    assert response.json()["node_changes"] == [{"pool": history_db.pk, "nodes": 2}]
    whatif.execute(response.json()["id"])
    result = client.get(f"{URL}{response.json()['id']}/").json()["result"]
    assert (result["nodes"], result["accelerators"]) == (6, 48)
    [change] = result["capacity_changes"]
    assert (change["nodes"], change["accelerators"]) == (2, 16)
    [ours] = result["policies"]
    # Every job starts as it arrives either way, so the replay holds the same 56
    # GPU-hours, now of 48 GPUs x 10 h; as it happened stays of the real 32.
    assert ours["allocation"] == pytest.approx(56 / 480)
    assert result["actual_allocation"] == pytest.approx(56 / 320)
    assert ours["not_started"] == 0


@pytest.mark.parametrize(
    ("changes", "where"),
    [
        ([{"pool": "POOL", "nodes": 0}], "nodes"),
        ([{"pool": "POOL", "nodes": -5}], "nodes"),  # it has 4
        ([{"pool": "POOL", "nodes": 20_000}], "nodes"),
        ([{"pool": 999_999, "nodes": 1}], "pool"),
        ([{"pool": "EMPTY", "nodes": 1}], "pool"),  # no node to copy
        ([{"pool": "POOL", "nodes": 1}, {"pool": "POOL", "nodes": 2}], None),
        ("four more", None),
    ],
)
def test_bad_node_changes_get_field_errors(world, client_for, history_db, changes, where):
    empty = make_pool(name="empty")
    ids = {"POOL": history_db.pk, "EMPTY": empty.pk}
    if isinstance(changes, list):
        changes = [{**c, "pool": ids.get(c["pool"], c["pool"])} for c in changes]
    response = client_for(world.platform_admin).post(
        URL, {"hours": 1, "node_changes": changes}, format="json"
    )
    assert response.status_code == 400
    errors = response.json()["errors"]["node_changes"]
    if where:
        assert where in errors["0"]  # the first change's field
    assert not WhatIfRun.objects.exists()


def test_whatif_command_resizes_pools(history_db, monkeypatch):
    monkeypatch.setattr(timezone, "now", lambda: T0 + timedelta(hours=10))
    out = StringIO()
    call_command(
        "whatif", "--hours", "10", "--policies", "ours", "--nodes", f"{history_db.name}=-3",
        stdout=out,
    )  # fmt: skip
    text = out.getvalue()
    assert "on 1 nodes (8 accelerators)" in text
    assert "Replayed with -3 nodes (-24 accelerators) in" in text
    # On one node "pair" and "late" never start: "before" holds 8 GPUs for 1 h and the
    # notebook 1 from 2 h on, 16 GPU-hours over 10 h; really 56 GPU-hours were held.
    assert "GPUs allocated on average: ours 1.6; as it happened 5.6" in text
    for bad, why in [
        ("gpu-pool", "expected POOL=N"),
        (f"{history_db.name}=0", "expected POOL=N"),
        ("nowhere=2", "nowhere is not a pool"),
        (f"{history_db.pk}=-9", "has 4 nodes; cannot remove 9"),
    ]:
        with pytest.raises(CommandError, match=why):
            call_command("whatif", "--nodes", bad, stdout=StringIO())


def test_a_replay_with_a_tighter_quota_makes_the_notebook_wait(history_db):
    history = whatif.history_workload(T0, T0 + timedelta(hours=10))
    [before] = whatif.replay(history, ["ours"])
    tight = whatif.changed(
        history,
        quotas=whatif.quota_changes(
            [{"tenant": "vision", "pool": history_db.pk, "accelerator_model": "A800",
              "guarantee": 16, "borrow_limit": 0}],
            pool_keys(),
        ),
    )  # fmt: skip
    [q] = tight.workload.quotas
    assert (q.guarantee, q.borrow_limit) == (16, 0)
    assert tight.quota_changes == [
        {"tenant": "vision", "pool": q.pool, "accelerator_model": "A800", "guarantee": 16,
         "borrow_limit": 0, "was_guarantee": 16, "was_borrow_limit": 16}
    ]  # fmt: skip
    [after] = whatif.replay(tight, ["ours"])
    # At 2 h the notebook (1 GPU) finds "pair" holding all 16 GPUs vision may hold now, so
    # it waits until "pair" ends, about an hour later; with 16 to borrow it started at once.
    assert before.summary["wait_1"].mean < 120
    assert 0.9 * H < after.summary["wait_1"].mean < 1.1 * H
    with pytest.raises(ScenarioError, match="would total 40, but the replayed pool has 32"):
        whatif.changed(history, quotas=[replace(q, guarantee=40)])
    # With two more nodes the pool has 48: a guarantee of 40 fits.
    grown = whatif.changed(
        history, whatif.pool_changes([{"pool": history_db.pk, "nodes": 2}], pool_keys()),
        [replace(q, guarantee=40)],
    )  # fmt: skip
    assert grown.workload.quotas[0].guarantee == 40


def test_an_api_replay_with_a_quota_change(
    world, client_for, history_db, monkeypatch, django_capture_on_commit_callbacks
):
    monkeypatch.setattr(timezone, "now", lambda: T0 + timedelta(hours=10))
    monkeypatch.setattr("apps.scheduling.tasks.whatif_replay.delay", lambda pk: None)
    client = client_for(world.platform_admin)
    change = {"tenant": "vision", "pool": history_db.pk, "accelerator_model": "A800",
              "guarantee": 16, "borrow_limit": 0}  # fmt: skip
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            URL, {"hours": 10, "policies": ["ours"], "quota_changes": [change]}, format="json"
        )
    assert response.status_code == 201
    assert response.json()["quota_changes"] == [change]
    whatif.execute(response.json()["id"])
    result = client.get(f"{URL}{response.json()['id']}/").json()["result"]
    [made] = result["quota_changes"]
    assert (made["tenant"], made["borrow_limit"], made["was_borrow_limit"]) == ("vision", 0, 16)
    assert result["policies"][0]["waits"]["1"]["mean_s"] > 0.9 * H


@pytest.mark.parametrize(
    ("change", "where"),
    [
        ({"accelerator_model": "H100"}, "0"),  # the pool has none
        ({"guarantee": 33}, None),  # the pool has 32
        ({"guarantee": -1}, "0"),
        ({"tenant": "nobody"}, "0"),
    ],
)
def test_bad_quota_changes_get_field_errors(world, client_for, history_db, change, where):
    body = {"tenant": "vision", "pool": history_db.pk, "accelerator_model": "A800",
            "guarantee": 16, "borrow_limit": 0} | change  # fmt: skip
    client = client_for(world.platform_admin)
    response = client.post(URL, {"hours": 1, "quota_changes": [body]}, format="json")
    assert response.status_code == 400
    errors = response.json()["errors"]["quota_changes"]
    if where:
        assert where in errors
    else:
        assert errors == [
            f"Guarantees in {history_db.cluster.name}/{history_db.name} for A800 would total "
            "33, but the replayed pool has 32."
        ]
    twice = client.post(URL, {"hours": 1, "quota_changes": [body, body]}, format="json")
    assert twice.status_code == 400
    assert not WhatIfRun.objects.exists()


def test_a_scenario_s_problem_is_said_in_the_reader_s_language(world, client_for, history_db):
    body = {"tenant": "vision", "pool": history_db.pk, "accelerator_model": "A800",
            "guarantee": 33, "borrow_limit": 0}  # fmt: skip
    client = client_for(world.platform_admin)
    client.cookies["zs_lang"] = "zh"
    response = client.post(URL, {"hours": 1, "quota_changes": [body]}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"]["quota_changes"] == [
        f"{history_db.cluster.name}/{history_db.name} 中 A800 的保障总量将为 33，"  # noqa: RUF001
        "但重放的资源池只有 32。"
    ]


def test_whatif_command_sets_quotas(history_db, monkeypatch):
    monkeypatch.setattr(timezone, "now", lambda: T0 + timedelta(hours=10))
    out = StringIO()
    call_command("whatif", "--hours", "10", "--policies", "ours",
                 "--quota", f"vision:{history_db.name}:A800=16+0", stdout=out)  # fmt: skip
    assert "Replayed with vision's quota of A800 in" in out.getvalue()
    assert "at 16 guaranteed + 0 to borrow (was 16 + 16)" in out.getvalue()
    for bad, why in [
        ("vision:A800=16+0", "expected TENANT:POOL:MODEL=G"),
        (f"vision:{history_db.name}:A800=16", "expected TENANT:POOL:MODEL=G"),
        (f"nobody:{history_db.name}:A800=1+0", "no tenant nobody"),
        (f"vision:{history_db.name}:A800=99+0", "would total 99"),
    ]:
        with pytest.raises(CommandError, match=why):
            call_command("whatif", "--quota", bad, stdout=StringIO())


def test_a_replay_with_twice_the_work_copies_what_arrived_not_what_ran_at_the_start(
    history_db,
):
    history = whatif.history_workload(T0, T0 + timedelta(hours=10))
    [before] = whatif.replay(history, ["ours"])
    doubled = whatif.changed(history, load=2.0, seed=5)
    names = {str(j.pk): j.name for j in Job.objects.all()}
    ids = [j.job_id for j in doubled.workload.jobs]
    # "before" was running when the window opened: the cluster's state, not arriving work.
    copied = sorted(names[i.split("+")[0]] for i in ids if "+" in i)
    assert copied == ["late", "nb", "pair"]
    assert doubled.load_change == {"factor": 2.0, "jobs_added": 3, "jobs_dropped": 0}
    assert doubled.carried == history.carried and len(history.carried) == 1
    assert whatif.changed(history, load=2.0, seed=5) == doubled  # the seed decides
    [after] = whatif.replay(doubled, ["ours"])
    # Two 16-GPU pairs fit the 32 GPUs with "before" gone by 1 h: more work is held.
    assert after.summary["jobs"] == 7
    assert after.summary["alloc_window"] > before.summary["alloc_window"] + 32 / 320
    half = whatif.changed(history, load=0.1, seed=5)
    assert half.load_change is not None and half.load_change["jobs_added"] == 0
    assert len(half.workload.jobs) == 4 - half.load_change["jobs_dropped"]
    assert whatif.changed(history).load_change is None


def test_an_api_replay_with_more_work(
    world, client_for, history_db, monkeypatch, django_capture_on_commit_callbacks
):
    monkeypatch.setattr(timezone, "now", lambda: T0 + timedelta(hours=10))
    monkeypatch.setattr("apps.scheduling.tasks.whatif_replay.delay", lambda pk: None)
    client = client_for(world.platform_admin)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            URL, {"hours": 10, "policies": ["ours"], "load_factor": 3}, format="json"
        )
    assert response.status_code == 201
    assert response.json()["load_factor"] == 3.0
    whatif.execute(response.json()["id"])
    result = client.get(f"{URL}{response.json()['id']}/").json()["result"]
    assert result["load_change"] == {"factor": 3.0, "jobs_added": 6, "jobs_dropped": 0}
    assert result["jobs"] == 10
    plain = client.post(URL, {"hours": 1}, format="json").json()
    assert plain["load_factor"] == 1.0
    for bad in (0, 0.05, 5.5, "lots", None):
        response = client.post(URL, {"hours": 1, "load_factor": bad}, format="json")
        assert response.status_code == 400
        assert "load_factor" in response.json()["errors"]
    assert WhatIfRun.objects.count() == 2


def test_whatif_command_scales_the_load(history_db, monkeypatch):
    monkeypatch.setattr(timezone, "now", lambda: T0 + timedelta(hours=10))
    out = StringIO()
    call_command("whatif", "--hours", "10", "--policies", "ours", "--load", "2", stdout=out)
    text = out.getvalue()
    assert "## What-if: 7 jobs" in text
    assert "Replayed with 2 times the arriving work: 3 copies of jobs added, 0 jobs left" in text
    for bad in ("0", "6", "1,1", "lots"):
        with pytest.raises(CommandError, match=r"expected a factor from 0\.1 to 5"):
            call_command("whatif", "--load", bad, stdout=StringIO())


def test_whatif_command_sweeps_sizes_and_loads_in_one_table(history_db, monkeypatch):
    monkeypatch.setattr(timezone, "now", lambda: T0 + timedelta(hours=10))
    out = StringIO()
    call_command("whatif", "--hours", "10", "--policies", "ours,fifo-spread",
                 "--nodes", f"{history_db.name}=0,-3", "--load", "1,2", stdout=out)  # fmt: skip
    text = out.getvalue()
    assert "## What-if: 4 replays of 4 jobs" in text
    rows = {
        tuple(cells[:2]): cells
        for line in text.splitlines()
        if line.startswith("| ") and not line.startswith("| replay")
        for cells in [[c.strip() for c in line.strip("|").split("|")]]
    }
    key = pool_keys()[history_db.pk]
    assert set(rows) == {
        (case, policy)
        for case in ("as it is", "as it is, work x2", f"{key} -3", f"{key} -3, work x2")
        for policy in ("ours", "fifo-spread")
    }
    # As it is, the replay holds the 56 GPU-hours that really ran (5.6 GPUs over 10 h);
    # on one node 16 GPU-hours (see test_whatif_command_resizes_pools).
    assert rows[("as it is", "ours")][2:5] == ["32", "17.5%", "5.6"]
    assert rows[(f"{key} -3", "ours")][2:5] == ["8", "20.0%", "1.6"]
    assert rows[(f"{key} -3", "ours")][-2] == "2"  # "pair" and "late" never start
    # Twice the work on the whole cluster holds more than as it is.
    assert float(rows[("as it is, work x2", "ours")][4]) > 5.6
    assert "As it happened, on 32 accelerators: 17.5% allocated on average (5.6 GPUs)" in text
    for bad in (f"{history_db.name}=4,4", f"{history_db.name}=4,x"):
        with pytest.raises(CommandError, match="expected POOL=N"):
            call_command("whatif", "--nodes", bad, stdout=StringIO())


def test_whatif_command_gives_means_over_seeds(history_db, monkeypatch):
    monkeypatch.setattr(timezone, "now", lambda: T0 + timedelta(hours=10))
    out = StringIO()
    call_command("whatif", "--hours", "10", "--policies", "ours", "--load", "2",
                 "--seed", "0-2", stdout=out)  # fmt: skip
    text = out.getvalue()
    # One question under three seeds is a series too: the means, one row.
    assert "## What-if: 1 replays under 3 seeds each (the means) of 4 jobs" in text
    [row] = [line for line in text.splitlines() if line.startswith("| as it is, work x2 |")]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1:3] == ["ours", "32"]
    # Twice the work holds more than the 17.5% that ran, under every seed's copies.
    assert float(cells[3].rstrip("%")) > 17.5
    for bad in ("x", "3-1", "-1", "0,0", "0-200"):
        with pytest.raises(CommandError, match="expected a whole number from 0"):
            call_command("whatif", "--seed", bad, stdout=StringIO())


def test_the_live_default_is_replayed_and_named(history_db, monkeypatch, settings):
    history = whatif.history_workload(T0, T0 + timedelta(hours=10))
    [standard] = whatif.replay(history, ["standard"])
    # The core's defaults with the workload's quotas: what the product runs unless told
    # otherwise, so an operator sees what ZS_SCHEDULER_POLICY=tuned (ours) would change.
    assert standard.policy == "standard" and standard.summary["jobs"] == 4
    assert whatif.POLICIES[:2] == ("ours", "standard")
    monkeypatch.setattr(timezone, "now", lambda: T0 + timedelta(hours=10))
    out = StringIO()
    call_command("whatif", "--hours", "10", "--policies", "ours,standard", stdout=out)
    assert (
        "The product's scheduler runs ZS_SCHEDULER_POLICY=standard, which is standard here"
        in out.getvalue()
    )
    settings.SCHEDULER_POLICY = "tuned"
    assert whatif.result_of(history, [standard])["live_policy"] == "ours"


def test_the_result_says_which_policies_kept_the_quotas(history_db):
    # Ours and standard keep the window's quota (16 + 16); the baselines are modelled
    # without quotas, and on a cluster with none nothing keeps any.
    history = whatif.history_workload(T0, T0 + timedelta(hours=10))
    names = ["ours", "standard", "fifo-spread", "best-fit", "volcano"]
    result = whatif.result_of(history, whatif.replay(history, names))
    assert [(p["policy"], p["keeps_quotas"]) for p in result["policies"]] == [
        ("ours", True),
        ("standard", True),
        ("fifo-spread", False),
        ("best-fit", False),
        ("volcano", False),
    ]
    bare = replace(history, workload=replace(history.workload, quotas=()))
    result = whatif.result_of(bare, whatif.replay(bare, ["ours", "fifo-spread"]))
    assert [p["keeps_quotas"] for p in result["policies"]] == [False, False]


def test_a_pipeline_step_is_replayed_after_its_steps_and_waits_from_its_release():
    tenant = make_tenant("nlp")
    pool = make_pool()
    for _ in range(2):
        make_node(pool=pool, leaf_switch="leaf0")
    old = _job(tenant, pool, "old-prep", submitted=-3, admitted=-3, finished=-2)
    prep = _job(tenant, pool, "prep", submitted=0, admitted=0, finished=2)
    train = _job(tenant, pool, "train", submitted=0.5, admitted=2.5, finished=5)
    # Submitted at 0.5 behind prep, let in at 2, admitted at 2.5: it waited 0.5 h in the
    # queue, not 2 h.
    Job.objects.filter(pk=train.pk).update(released_at=T0 + timedelta(hours=2))
    train.after.set([prep])
    # Its only step ended before the window: it joins the replay when it joined the queue.
    late = _job(tenant, pool, "tuned", submitted=1, admitted=1.5, finished=3)
    Job.objects.filter(pk=late.pk).update(released_at=T0 + timedelta(hours=1.25))
    late.after.set([old])
    history = whatif.history_workload(T0, T0 + timedelta(hours=8))
    by_name = {Job.objects.get(pk=int(j.job_id)).name: j for j in history.workload.jobs}
    assert by_name["train"].after == (str(prep.pk),)
    assert by_name["train"].submit == 0.5 * H  # the replay decides when it joins
    assert (by_name["tuned"].after, by_name["tuned"].submit) == ((), 1.25 * H)
    # As it happened: prep 0, train 0.5 h (from its release), tuned 0.25 h.
    assert history.actual_waits["2-8"].count == 3
    assert history.actual_waits["2-8"].mean == pytest.approx((0 + 0.5 + 0.25) * H / 3)
    [result] = whatif.replay(history, ["best-fit"])
    # Replayed, train starts when prep completes (2 h run), 1.5 h after its submit; its
    # wait counts from there: nothing waits at all on two free nodes.
    assert result.summary["wait_2-8"].count == 3 and result.summary["wait_2-8"].mean == 0
    assert result.summary["completed"] == 3
