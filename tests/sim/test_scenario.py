"""Pools grown or shrunk for a what-if replay (apps/scheduling/sim/scenario.py)."""

import pytest

from apps.scheduling.core import Node, Quota, ReplicaGroup
from apps.scheduling.sim.scenario import (
    COPY_SPREAD_S,
    LoadChange,
    Maintenance,
    NodeChange,
    ScenarioError,
    guarantee_problems,
    maintenance,
    requota,
    resize,
    scale_load,
)
from apps.scheduling.sim.workload import NodeFailure, SimJob


def _node(i: int, pool: str = "c/a800", *, leaf: str = "", count: int = 8, **kw) -> Node:
    return Node(
        node_id=str(i),
        pool=pool,
        accelerator_model=kw.pop("model", "A800"),
        accelerator_count=count,
        cpu_milli=128_000,
        memory_mib=1 << 20,
        leaf_switch=leaf,
        scalable_unit="su0" if leaf else "",
        spine="spine0",
        labels={"zone": "x"},
        **kw,
    )


CLUSTER = (
    _node(1, leaf="l0"),
    _node(2, leaf="l0"),
    _node(3, leaf="l0"),
    _node(4, leaf="l1"),
    _node(5, leaf="l1", count=4, model="H100"),  # the odd one out: not copied
    _node(6, "c/infer", count=2),
)


def test_added_nodes_copy_the_common_shape_in_new_leaves_and_sus_of_the_largest_size():
    out = resize(CLUSTER, [NodeChange("c/a800", 4)])
    assert out[: len(CLUSTER)] == CLUSTER  # the real nodes are untouched
    added = out[len(CLUSTER) :]
    assert [n.node_id for n in added] == [f"whatif-c-a800-{i}" for i in range(4)]
    assert {(n.accelerator_model, n.accelerator_count) for n in added} == {("A800", 8)}
    assert all(n.pool == "c/a800" and n.labels == {"zone": "x"} for n in added)
    assert all(n.healthy and not n.cordoned and n.free_devices is None for n in added)
    # l0 has three nodes, so new leaves hold three; su0 has all five, so one new SU.
    assert [n.leaf_switch for n in added] == ["whatif-c-a800-leaf0"] * 3 + ["whatif-c-a800-leaf1"]
    assert {n.scalable_unit for n in added} == {"whatif-c-a800-su0"}
    # Seven more: a second SU after five.
    more = resize(CLUSTER, [NodeChange("c/a800", 7)])[len(CLUSTER) :]
    assert [n.scalable_unit[-3:] for n in more] == ["su0"] * 5 + ["su1"] * 2
    assert {n.spine for n in added} == {"spine0"}


def test_a_pool_without_topology_grows_without_one():
    [added] = resize(CLUSTER, [NodeChange("c/infer", 1)])[len(CLUSTER) :]
    assert (added.accelerator_count, added.leaf_switch, added.scalable_unit) == (2, "", "")


def test_removed_nodes_are_the_pools_last():
    out = resize(CLUSTER, [NodeChange("c/a800", -2), NodeChange("c/infer", -1)])
    assert [n.node_id for n in out] == ["1", "2", "3"]
    assert resize(CLUSTER, []) == CLUSTER


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ([NodeChange("c/a800", -6)], "pool c/a800 has 5 nodes; cannot remove 6"),
        ([NodeChange("c/none", 2)], "pool c/none has no node to copy"),
        ([NodeChange("c/a800", 1), NodeChange("c/a800", -1)], "changed more than once"),
    ],
)
def test_changes_that_cannot_be_made_say_why(changes, message):
    with pytest.raises(ScenarioError, match=message):
        resize(CLUSTER, changes)


def _quota(tenant: str, guarantee: int, borrow: int = 0, pool: str = "c/a800") -> Quota:
    return Quota(tenant=tenant, pool=pool, accelerator_model="A800", guarantee=guarantee,
                 borrow_limit=borrow)  # fmt: skip


def test_requota_sets_a_quota_in_place_or_adds_one():
    quotas = (_quota("vision", 16, 8), _quota("nlp", 8))
    out = requota(quotas, [_quota("nlp", 4, 12), _quota("speech", 2)])
    assert out == (_quota("vision", 16, 8), _quota("nlp", 4, 12), _quota("speech", 2))
    assert requota(quotas, []) == quotas
    with pytest.raises(ScenarioError, match="changed more than once"):
        requota(quotas, [_quota("nlp", 1), _quota("nlp", 2)])


def test_guarantees_are_checked_where_a_quota_changed():
    # c/a800 has four 8-GPU A800 nodes (and an H100 node, another model).
    a800 = [n for n in CLUSTER if n.pool == "c/a800" and n.accelerator_model == "A800"]
    assert sum(n.accelerator_count for n in a800) == 32
    quotas = (_quota("vision", 20), _quota("nlp", 12))
    assert guarantee_problems(CLUSTER, quotas, [_quota("nlp", 12)]) == []
    raised = requota(quotas, [_quota("nlp", 13)])
    [problem] = guarantee_problems(CLUSTER, raised, [_quota("nlp", 13)])
    assert str(problem) == (
        "Guarantees in c/a800 for A800 would total 33, but the replayed pool has 32."
    )
    # The template and its values, for the API to say it in its reader's language.
    assert problem.template.startswith("Guarantees in {pool} for {model} would total {total}")
    assert problem.values == {"pool": "c/a800", "model": "A800", "total": 33, "capacity": 32}
    # A pool shrunk under its guarantees is replayed as it is when no quota there changed.
    shrunk = resize(CLUSTER, [NodeChange("c/a800", -3)])
    assert guarantee_problems(shrunk, quotas, []) == []
    assert guarantee_problems(shrunk, quotas, [_quota("other", 0, pool="c/infer")]) == []


def _jobs(n: int, *, every: float = 600.0) -> tuple[SimJob, ...]:
    group = (ReplicaGroup(name="w", replicas=1, accelerators=1),)
    running = SimJob("run", 0.0, "t", "c/a800", 3, group, duration=50.0)
    arriving = [
        SimJob(f"j{i}", every * (i + 1), "t", "c/a800", 3, group, duration=100.0 + i)
        for i in range(n)
    ]
    return (running, *arriving)


def test_scale_load_keeps_the_whole_part_and_draws_the_rest():
    jobs = _jobs(1000)
    horizon = 601_000.0
    out, change = scale_load(jobs, 1.3, seed=7, horizon=horizon, carried=frozenset({"run"}))
    assert change.factor == 1.3 and change.dropped == 0
    assert len(out) == 1001 + change.added
    assert 250 < change.added < 350  # about 30% of 1000 arriving jobs
    originals = {j.job_id: j for j in jobs}
    assert set(originals) <= {j.job_id for j in out}  # every original is kept
    copies = [j for j in out if "+" in j.job_id]
    assert len(copies) == change.added and not any(j.job_id.startswith("run") for j in copies)
    for c in copies:
        source = originals[c.job_id.split("+")[0]]
        # The same work: only the name and the arrival (within the spread) differ.
        assert (c.tenant, c.priority, c.groups, c.duration) == (
            source.tenant, source.priority, source.groups, source.duration)  # fmt: skip
        assert abs(c.submit - source.submit) <= COPY_SPREAD_S and 0 <= c.submit < horizon
    assert [j.submit for j in out] == sorted(j.submit for j in out)
    # The same seed gives the same jobs; another seed, others.
    again, _ = scale_load(jobs, 1.3, seed=7, horizon=horizon, carried=frozenset({"run"}))
    assert again == out
    other, _ = scale_load(jobs, 1.3, seed=8, horizon=horizon, carried=frozenset({"run"}))
    assert other != out


def test_scale_load_under_one_drops_arriving_jobs_and_keeps_running_ones():
    jobs = _jobs(1000)
    out, change = scale_load(jobs, 0.5, seed=1, horizon=1e6, carried=frozenset({"run"}))
    assert change.added == 0 and 400 < change.dropped < 600
    assert len(out) == 1001 - change.dropped and out[0].job_id == "run"
    # Two and a half: two of each, and a third for about half.
    out, change = scale_load(jobs, 2.5, seed=1, horizon=1e6, carried=frozenset({"run"}))
    assert 1400 < change.added < 1600 and change.dropped == 0
    assert sum(1 for j in out if j.job_id.endswith("+1")) == 1000
    # A copy never arrives before the window or at its end.
    [_, late] = _jobs(1, every=1000.0)
    out, _ = scale_load((late,), 3.0, seed=2, horizon=1001.0)
    assert all(0.0 <= j.submit <= 1000.0 for j in out) and len(out) == 3


def test_scale_load_by_one_changes_nothing_and_bad_factors_say_why():
    jobs = _jobs(20)
    assert scale_load(jobs, 1.0, seed=3, horizon=1e5) == (jobs, LoadChange(1.0, 0, 0))
    for factor in (0.0, -1.0, 5.5):
        with pytest.raises(ScenarioError, match="load factor must be above 0 and at most 5"):
            scale_load(jobs, factor, seed=3, horizon=1e5)


def test_a_jobs_draw_does_not_depend_on_the_jobs_before_it():
    # The window moved: the first ten jobs left. The rest are copied as they were.
    jobs = _jobs(200)
    out, _ = scale_load(jobs, 1.5, seed=4, horizon=1e6)
    later, _ = scale_load(jobs[11:], 1.5, seed=4, horizon=1e6)
    assert [
        j for j in out if j.job_id.split("+")[0] not in {"run", *(f"j{i}" for i in range(10))}
    ] == list(later)


def test_maintenance_windows_take_a_pools_servers_in_order():
    windows = [
        Maintenance("c/a800", 2, 3600.0, 8.0),
        Maintenance("c/infer", 1, 0.0, 1.5, drain=False),
        Maintenance("c/a800", 2, 7200.0, 8.0),  # the next two: a rolling upgrade
    ]
    assert maintenance(CLUSTER, windows) == (
        NodeFailure(3600.0, "1", 8 * 3600.0, drain_after=0.0),
        NodeFailure(3600.0, "2", 8 * 3600.0, drain_after=0.0),
        NodeFailure(0.0, "6", 1.5 * 3600.0, drain_after=None),  # cordoned only
        NodeFailure(7200.0, "3", 8 * 3600.0, drain_after=0.0),
        NodeFailure(7200.0, "4", 8 * 3600.0, drain_after=0.0),
    )
    assert maintenance(CLUSTER, []) == ()


@pytest.mark.parametrize(
    ("windows", "message"),
    [
        ([Maintenance("c/a800", 6, 0.0, 1.0)], "c/a800 has 5 nodes; its maintenance windows"),
        ([Maintenance("c/a800", 3, 0.0, 1.0), Maintenance("c/a800", 3, 9.0, 1.0)], "ask for 6"),
        ([Maintenance("c/none", 1, 0.0, 1.0)], "c/none has 0 nodes"),
        ([Maintenance("c/a800", 1, 0.0, 0.0)], "positive length"),
        ([Maintenance("c/a800", 0, 0.0, 1.0)], "needs a node"),
    ],
)
def test_maintenance_that_cannot_be_made_says_why(windows, message):
    with pytest.raises(ScenarioError, match=message):
        maintenance(CLUSTER, windows)
