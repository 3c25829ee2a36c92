"""The what-if series table (apps/scheduling/sim/report.py::sweep_table) on hand-made results."""

from apps.scheduling.sim.metrics import SimResult, wait_stats
from apps.scheduling.sim.report import sweep_table
from apps.scheduling.sim.workload import SIZE_CLASSES


def _result(policy: str, alloc: float, wait_2_8: float | None, late: int, pre: int) -> SimResult:
    summary: dict[str, object] = {f"wait_{c}": wait_stats([]) for c, _, _ in SIZE_CLASSES}
    if wait_2_8 is not None:
        summary["wait_2-8"] = wait_stats([wait_2_8])
    # GPUs held as if 15 were in service whatever the cluster's size: the table's GPUs
    # allocated must come from them, not from the share times the cluster's GPUs.
    summary |= {"alloc_window": alloc, "mean_allocated_window": alloc * 15,
                "late_jobs": late, "never_started": 0, "preemptions": pre,
                "preempt_lost_gpu_h": 10.0 * pre}  # fmt: skip
    return SimResult("w", policy, policy, 0, 0.0, 0.0, 0, summary)


def _rows(text: str) -> list[list[str]]:
    lines = [line for line in text.splitlines() if line.startswith("| ")]
    return [[c.strip() for c in line.strip("|").split("|")] for line in lines]


def test_one_seed_gives_the_values_and_several_the_means_with_the_range_of_the_waits():
    one = sweep_table([("as it is", 16, [[_result("ours", 0.5, 120.0, 2, 1)]])])
    assert _rows(one) == [
        ["replay", "policy", "GPUs", "allocation", "GPUs allocated", "wait 2-8 (mean)",
         "past max wait", "not started", "preemptions / GPU-h lost"],
        ["as it is", "ours", "16", "50.0%", "7.5", "2.0 m", "2", "0", "1 / 10"],
    ]  # fmt: skip
    seeds = [
        [_result("ours", 0.5, 60.0, 1, 1), _result("fifo-spread", 0.4, None, 0, 0)],
        [_result("ours", 0.7, 7200.0, 2, 2), _result("fifo-spread", 0.4, None, 0, 0)],
    ]
    many = _rows(sweep_table([("+4, work x1.3", 20, seeds)]))  # GPUs held as given
    # Means over the seeds; the wait's range spans minutes to hours; a class a policy
    # never saw is a dash.
    assert many[1] == ["+4, work x1.3", "ours", "20", "60.0%", "9.0", "1.0 h (1.0 m - 2.0 h)",
                       "1.5", "0", "1.5 / 15"]  # fmt: skip
    assert many[2] == ["+4, work x1.3", "fifo-spread", "20", "40.0%", "6.0", "-", "0", "0",
                       "0 / 0"]  # fmt: skip
