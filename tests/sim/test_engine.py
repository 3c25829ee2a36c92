"""The event loop against hand-computed timelines."""

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from apps.scheduling.sim import Simulator
from apps.scheduling.sim import policies as pol
from apps.scheduling.sim.scenario import scale_load
from apps.scheduling.sim.workload import NodeFailure

from .helpers import job, workload

ROOT = Path(__file__).resolve().parents[2]


def run(w, spec, **kw):
    sim = Simulator(w, spec, seed=1, **kw)
    result = sim.run()
    return sim, result


def test_a_gang_waits_for_a_completion_then_runs_its_duration():
    w = workload([job("a", 0, 8, duration=100), job("b", 10, 8, replicas=2, duration=50)])
    sim, result = run(w, pol.best_fit())
    a, b = sim.by_id["a"], sim.by_id["b"]
    assert (a.first_start, a.end) == (0, 100)
    assert (b.first_start, b.end) == (100, 150)
    assert result.summary["completed"] == 2
    assert result.waits["2-8"] == [0] and result.waits["9-64"] == [90]


def test_preemption_requeues_from_the_last_checkpoint_with_a_restart_cost():
    low = job("low", 0, 8, priority=4, duration=1000, ckpt=100, restart=10)
    high = job("high", 250, 8, priority=1, duration=100)
    sim, result = run(workload([low, high], 1), pol.volcano())
    lo, hi = sim.by_id["low"], sim.by_id["high"]
    assert (hi.first_start, hi.end) == (250, 350)
    # 250 s of work, checkpoint at 200: 50 s x 8 GPUs lost; 800 s left after a 10 s restart.
    assert lo.preemptions == 1 and lo.end == 350 + 10 + 800
    assert abs(result.summary["preempt_lost_gpu_h"] - 50 * 8 / 3600) < 1e-9
    assert result.summary["preemptions"] == 1


def test_a_preempted_job_and_its_load_copy_keep_apart():
    # "low" is preempted, so the core knows its second run as "low~1"; a what-if copy of
    # it ("low+1") must not be taken for that run.
    low = job("low", 0, 8, priority=4, duration=1000, ckpt=100, restart=10)
    high = job("high", 250, 8, priority=1, duration=100)
    jobs, change = scale_load((low, high), 2.0, seed=1, horizon=10_000.0)
    assert change.added == 2 and {j.job_id for j in jobs} >= {"low+1", "high+1"}
    sim, result = run(workload(list(jobs), 1), pol.volcano())
    assert result.summary["completed"] == 4
    assert sum(r.preemptions for r in sim.runs) >= 1


@pytest.mark.parametrize(
    ("ids", "message"), [(["a", "a"], "not unique"), (["a~1"], "may not contain '~'")]
)
def test_job_ids_must_be_unique_and_free_of_the_part_mark(ids, message):
    with pytest.raises(ValueError, match=message):
        Simulator(workload([job(i, 0, 1) for i in ids]), pol.best_fit())


def test_a_node_failure_kills_its_jobs_and_the_repair_brings_it_back():
    x = job("x", 0, 8, duration=500, ckpt=100, restart=20)
    fail = (NodeFailure(150, "n00000", 100),)
    sim, result = run(workload([x], 1, failures=fail), pol.ours(quotas=False))
    r = sim.by_id["x"]
    assert r.failures == 1
    # Down from 150 to 250; 100 s saved, 400 s left after a 20 s restart.
    assert r.end == 250 + 20 + 400
    assert abs(result.summary["failure_lost_gpu_h"] - 50 * 8 / 3600) < 1e-9


def test_a_cordon_keeps_running_work_and_takes_no_new_work_until_repaired():
    x = job("x", 0, 4, duration=500)
    y = job("y", 200, 4, duration=100)
    cordon = (NodeFailure(100, "n00000", 300, drain_after=None),)
    sim, result = run(workload([x, y], 1, failures=cordon), pol.ours(quotas=False))
    # x runs on through the cordon; y, which fits beside it, waits for the node to be back
    # in service at 400.
    assert (sim.by_id["x"].end, sim.by_id["x"].failures) == (500, 0)
    assert sim.by_id["y"].first_start == 400
    assert result.summary["failure_lost_gpu_h"] == 0


def test_a_cordon_escalated_to_a_drain_stops_its_work_at_the_drain():
    x = job("x", 0, 8, duration=500, ckpt=100, restart=20)
    escalated = (NodeFailure(100, "n00000", 300, drain_after=150),)
    sim, result = run(workload([x], 1, failures=escalated), pol.ours(quotas=False))
    r = sim.by_id["x"]
    # Stopped at 250 (50 s since its checkpoint at 200 lost), back at 400: 300 s left.
    assert r.failures == 1 and r.end == 400 + 20 + 300
    assert abs(result.summary["failure_lost_gpu_h"] - 50 * 8 / 3600) < 1e-9


def test_a_failure_on_a_node_already_out_of_service_is_ignored():
    x = job("x", 0, 8, duration=500)
    twice = (NodeFailure(100, "n00000", 300, drain_after=None), NodeFailure(150, "n00000", 10))
    sim, _ = run(workload([x], 1, failures=twice), pol.ours(quotas=False))
    assert (sim.by_id["x"].end, sim.by_id["x"].failures) == (500, 0)


def test_without_gang_a_partial_placement_holds_devices_until_the_rest_fits():
    w = workload([job("a", 0, 4, duration=100), job("b", 1, 8, replicas=2, duration=50)])
    sim, _ = run(w, pol.fifo_spread())
    b = sim.by_id["b"]
    assert (b.first_start, b.end) == (100, 150)
    # From 1 to 100 the cluster holds 4 + 8 of 16 GPUs (no warm-up; window ends at 1).
    assert sim.recorder.allocated == 0


def test_one_shot_drops_what_does_not_fit_and_records_the_arrival_curve():
    jobs = [
        job("a", 0, 6, duration=None),
        job("b", 1, 4, duration=None),
        job("c", 2, 2, duration=None),
    ]
    w = workload(jobs, 1, one_shot=True)
    sim, result = run(w, pol.best_fit())
    assert [sim.by_id[j].status for j in "abc"] == ["running", "dropped", "running"]
    assert result.curve == [(75.0, 75.0), (125.0, 75.0), (150.0, 100.0)]
    assert result.summary["dropped"] == 1


def test_same_seed_same_result_and_runs_do_not_share_state(tmp_path):
    from apps.scheduling.sim.llm import llm_workload

    toml = ROOT / "bench" / "llm_workload.toml"
    w1 = llm_workload(toml, 7, jobs=300, gpus=512)
    w2 = llm_workload(toml, 7, jobs=300, gpus=512)
    assert w1.jobs == w2.jobs and w1.failures == w2.failures
    a = Simulator(w1, pol.ours(), seed=7, cycle_interval=30).run()
    Simulator(w1, pol.volcano(), seed=7, cycle_interval=30).run()  # in between: no effect
    b = Simulator(w2, pol.ours(), seed=7, cycle_interval=30).run()
    assert a.summary == b.summary and a.curve == b.curve
    assert llm_workload(toml, 8, jobs=300, gpus=512).jobs != w1.jobs


def test_progress_is_reported():
    seen = []
    w = workload([job(f"j{i}", i, 1) for i in range(10)])
    Simulator(w, pol.best_fit(), progress=lambda f, msg: seen.append(f)).run()
    assert seen[0] == 0.1 or seen[0] <= 0.1
    assert seen[-1] == 1.0 and seen == sorted(seen)


def test_the_simulator_imports_no_framework():
    code = (
        "import sys, apps.scheduling.sim, apps.scheduling.sim.llm, apps.scheduling.sim.loaders\n"
        "import apps.scheduling.sim.report\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'django', 'celery', 'kubernetes', 'rest_framework', 'numpy', 'matplotlib'})\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == ""


def test_a_run_ends_at_its_runtime_limit():
    limited = replace(job("a", 0, 8, duration=1000, restart=10), runtime_limit=300)
    after = job("b", 5, 8, duration=50)
    sim, result = run(workload([limited, after], 1), pol.best_fit())
    assert sim.by_id["a"].end == 300  # stopped there, as the product stops it
    assert (sim.by_id["b"].first_start, sim.by_id["b"].end) == (300, 350)
    assert result.summary["completed"] == 2


def test_the_core_is_told_real_run_times_or_only_the_declared_limits():
    # "big" needs three nodes of two: it waits to the end, and its pending job is what the
    # core was told.
    big = replace(job("big", 0, 8, replicas=3, duration=500, restart=20), runtime_limit=7200)
    open_ended = job("svc", 0, 8, replicas=3, duration=None)
    for exact, told in ((True, 500.0), (False, 7200.0)):  # a first run has no restart
        w = replace(workload([big, open_ended], 2), exact_runtimes=exact)
        sim, _ = run(w, pol.ours(quotas=False))
        pending = sim.by_id["big"].pending
        assert pending is not None and pending.expected_runtime is not None
        assert pending.expected_runtime.total_seconds() == told
        assert sim.by_id["svc"].pending.expected_runtime is None
