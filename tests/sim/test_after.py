"""Pipeline steps in the simulator: a job that starts after others joins the queue when the
last of them completes, as the product's ``Job.after`` does."""

from dataclasses import replace

import pytest

from apps.scheduling.sim import Simulator
from apps.scheduling.sim import policies as pol
from apps.scheduling.sim.scenario import scale_load

from .helpers import job, workload


def run(jobs, nodes=2, **kw):
    sim = Simulator(workload(jobs, nodes, **kw), pol.best_fit(), seed=1)
    return sim, sim.run()


def test_a_step_joins_when_the_last_step_before_it_completes_and_waits_from_then():
    prep = job("prep", 0, 8, duration=100)
    train = job("train", 10, 8, duration=300)
    # Submitted at once, room free: without `after` it would start at 5.
    evaluate = replace(job("eval", 5, 8, duration=50), after=("prep", "train"))
    sim, result = run([prep, train, evaluate], nodes=3)
    assert sim.by_id["eval"].first_start == 310  # train ends at 10 + 300
    assert sim.by_id["eval"].job.submit == 310  # its wait runs from its release
    assert result.waits["2-8"] == [0, 0, 0]
    assert result.summary["completed"] == 3 and result.summary["never_started"] == 0


def test_a_step_submitted_after_its_predecessor_ended_joins_at_its_own_submit():
    prep = job("prep", 0, 8, duration=100)
    evaluate = replace(job("eval", 500, 8, duration=50), after=("prep",))
    sim, _ = run([prep, evaluate])
    assert (sim.by_id["eval"].job.submit, sim.by_id["eval"].first_start) == (500, 500)


def test_a_waiting_step_takes_no_room_and_then_queues_for_room_like_any_job():
    # eval (both nodes) waits for prep; "early" (one node) comes in meanwhile and is not
    # held back by it. Released at 100, eval waits for early's node until 300.
    prep = job("prep", 0, 8, duration=100)
    early = job("early", 50, 8, duration=250)
    evaluate = replace(job("eval", 0, 8, replicas=2, duration=50), after=("prep",))
    sim, result = run([prep, early, evaluate])
    assert sim.by_id["early"].first_start == 50
    assert sim.by_id["eval"].first_start == 300
    assert result.waits["9-64"] == [200]  # from its release at 100, not its submit at 0


def test_a_step_after_a_run_stopped_at_its_runtime_limit_never_joins():
    # The product fails a job at its runtime limit, which cancels the steps after it.
    prep = replace(job("prep", 0, 8, duration=1000), runtime_limit=200.0)
    evaluate = replace(job("eval", 0, 8, duration=50), after=("prep",))
    tail = replace(job("tail", 0, 1, duration=10), after=("eval",))
    sim, result = run([prep, evaluate, tail], horizon=5000.0)
    assert sim.by_id["prep"].end == 200
    assert sim.by_id["eval"].first_start is None and sim.by_id["tail"].first_start is None
    assert set(sim.blocked) == {"eval", "tail"}
    assert result.summary["never_started"] == 2
    assert result.summary["completed"] == 1
    assert all(w == [] for label, w in result.waits.items() if label != "2-8")


def test_a_chain_runs_step_by_step_and_a_preempted_step_is_not_done_until_it_completes():
    a = job("a", 0, 8, priority=4, duration=1000, ckpt=100, restart=10)
    b = replace(job("b", 0, 8, duration=100), after=("a",))
    high = job("high", 250, 8, priority=1, duration=100)
    sim = Simulator(workload([a, b, high], 1), pol.volcano(), seed=1)
    sim.run()
    # a is preempted at 250 by high (ends 350), resumes from its checkpoint at 200 with a
    # 10 s restart: 800 s left, done at 1160; b runs after that.
    assert sim.by_id["a"].preemptions == 1 and sim.by_id["a"].end == 1160
    assert (sim.by_id["b"].first_start, sim.by_id["b"].end) == (1160, 1260)


def test_an_unknown_step_is_a_workload_error():
    evaluate = replace(job("eval", 0, 8), after=("nope",))
    with pytest.raises(ValueError, match="starts after nope"):
        Simulator(workload([evaluate]), pol.best_fit(), seed=1)


def test_a_load_copy_of_a_pipeline_is_a_pipeline_of_copies():
    prep = job("1", 0, 8, duration=100)
    evaluate = replace(job("2", 10, 8, duration=50), after=("1",))
    lone = replace(job("3", 20, 8, duration=50), after=("1",))
    jobs, _ = scale_load((prep, evaluate, lone), 2.0, seed=3, horizon=10_000.0)
    after = {j.job_id: j.after for j in jobs}
    assert after["2"] == ("1",) and after["2+1"] == ("1+1",) and after["3+1"] == ("1+1",)
    # Half the load: a step whose predecessor was dropped holds nothing back.
    for seed in range(20):
        jobs, _ = scale_load((prep, evaluate, lone), 0.5, seed=seed, horizon=10_000.0)
        ids = {j.job_id for j in jobs}
        assert all(set(j.after) <= ids for j in jobs)
        if "1" not in ids and "2" in ids:
            assert dict((j.job_id, j.after) for j in jobs)["2"] == ()
            break
    else:
        pytest.fail("no seed dropped the first step and kept the second")
