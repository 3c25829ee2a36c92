"""`zs submit -f sweep.yaml`, `zs sweep list|show|cancel` against the real sweeps API."""

from __future__ import annotations

import pytest

from apps.jobs.models import Job, JobState
from apps.runs.services import ensure_run_for_job, ingest_metrics
from apps.sweeps.models import Sweep, Trial
from tests.sdk.test_cli import server, zs  # noqa: F401 - the live-server fixture

pytestmark = pytest.mark.django_db(transaction=True)

SWEEP_YAML = """
pool: train
image: registry.example.com/ml/pytorch:2.5-cuda12
replica_groups: [{name: worker, replicas: 1, accelerators: 1}]
command: [python, train.py]
args: [--lr, "{{lr}}", --opt, "{{opt}}"]
sweep:
  name: lr-search
  method: grid
  parallel: 2
  metric: loss
  goal: min
  parameters:
    lr: [1e-4, 3e-4, 1e-3]
    opt: [adam]
"""


def test_a_sweep_is_submitted_listed_shown_and_cancelled(server, tmp_path, capsys):  # noqa: F811
    url, token = server
    assert zs("--url", url, "login", "--token", token)[0] == 0
    path = tmp_path / "sweep.yaml"
    path.write_text(SWEEP_YAML)
    code, out = zs("submit", "-f", str(path), "--set", "priority=3")
    assert code == 0, capsys.readouterr().err
    sweep = Sweep.objects.get()
    assert out.startswith(f"Submitted sweep {sweep.pk} (lr-search): 3 trials, 2 queued now, "
                          "at most 2 at a time (seed ")  # fmt: skip
    jobs = list(Job.objects.filter(trial__sweep=sweep).order_by("pk"))
    assert [j.spec["args"] for j in jobs] == [["--lr", "0.0001", "--opt", "adam"],
                                              ["--lr", "0.0003", "--opt", "adam"]]  # fmt: skip
    assert {j.priority for j in jobs} == {3}  # --set went to the template
    ingest_metrics(run=ensure_run_for_job(jobs[1]), points=[("loss", 50, 1.25)])
    ingest_metrics(run=ensure_run_for_job(jobs[0]), points=[("loss", 40, 2.5)])

    code, out = zs("list", "--sweep", str(sweep.pk))
    assert code == 0
    assert [line.split()[1] for line in out.splitlines()[1:]] == ["lr-search-2", "lr-search-1"]

    code, out = zs("sweep", "list")
    assert code == 0
    header, row = out.splitlines()
    assert header.split() == ["ID", "NAME", "METHOD", "STATE", "DONE", "ACTIVE", "BEST", "OWNER",
                              "CREATED"]  # fmt: skip
    assert row.split()[:9] == [str(sweep.pk), "lr-search", "grid", "running", "0/3", "2", "loss",
                               "1.25", "(#2)"]  # fmt: skip

    code, out = zs("sweep", "show", str(sweep.pk))
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith(f"Sweep {sweep.pk} (lr-search): running, grid, 3 trials, at most 2")
    assert lines[1] == "Ranked by: loss (lowest first)"
    assert lines[2].split() == ["RANK", "TRIAL", "LR", "OPT", "JOB", "STATE", "LOSS", "STEP"]
    assert [line.split() for line in lines[3:]] == [
        ["1*", "2", "0.0003", "adam", str(jobs[1].pk), "queued", "1.25", "50"],
        ["2", "1", "0.0001", "adam", str(jobs[0].pk), "queued", "2.5", "40"],
        ["-", "3", "0.001", "adam", "-", "waiting", "-", "-"],
    ]

    # Ranked by each trial's best value: the line says so, and the newest value is shown too.
    ingest_metrics(run=ensure_run_for_job(jobs[0]), points=[("loss", 60, 3.0)])
    ingest_metrics(run=ensure_run_for_job(jobs[1]), points=[("loss", 70, 2.0)])
    Sweep.objects.filter(pk=sweep.pk).update(rank_by="best")
    lines = zs("sweep", "show", str(sweep.pk))[1].splitlines()
    assert lines[1] == "Ranked by: loss, each trial's best over its steps (lowest first)"
    assert lines[2].split()[-3:] == ["LOSS", "STEP", "NEWEST"]
    assert [line.split()[-3:] for line in lines[3:5]] == [["1.25", "50", "2"], ["2.5", "40", "3"]]
    Sweep.objects.filter(pk=sweep.pk).update(rank_by="last")

    # A trial the median rule stopped says so, and the rule is named above the table.
    Sweep.objects.filter(pk=sweep.pk).update(early_stop="median", stop_after_step=20)
    Job.objects.filter(pk=jobs[0].pk).update(state=JobState.CANCELLED)
    Trial.objects.filter(job=jobs[0]).update(stopped_step=60)
    lines = zs("sweep", "show", str(sweep.pk))[1].splitlines()
    assert lines[2] == (
        "Early stopping: median rule from step 20, judged against at least 3 other trials"
    )
    assert lines[5].split()[:6] == ["2", "1", "0.0001", "adam", str(jobs[0].pk), "stopped@60"]
    Sweep.objects.filter(pk=sweep.pk).update(early_stop="asha", stop_after_step=500)
    assert zs("sweep", "show", str(sweep.pk))[1].splitlines()[2] == (
        "Early stopping: successive halving (ASHA), at steps 500, 1500, 4500, ..., only the best "
        "1/3 go on, judged against at least 3 other trials"
    )
    Sweep.objects.filter(pk=sweep.pk).update(brackets=2)
    Trial.objects.filter(sweep=sweep, index=2).update(bracket=2)  # as a 2-bracket sweep made it
    lines = zs("sweep", "show", str(sweep.pk))[1].splitlines()
    assert lines[2].endswith(
        "judged against at least 3 other trials; 2 brackets (Hyperband), more trials in those "
        "that stop earlier, their first rungs at steps 500, 1500"
    )
    assert lines[3].split()[4:8] == ["JOB", "STATE", "BRACKET", "LOSS"]
    # Each trial's own bracket: 1 and 3 the first, 2 the second.
    brackets = {line.split()[1]: line.split()[6] for line in lines[4:]}
    assert brackets == {"1": "1", "2": "2", "3": "1"}
    Sweep.objects.filter(pk=sweep.pk).update(brackets=1)
    # An adaptive sweep says so; a trial not chosen yet has no values.
    Sweep.objects.filter(pk=sweep.pk).update(method="tpe", startup_trials=2, early_stop="none")
    Trial.objects.filter(sweep=sweep, index=3).update(params={})
    lines = zs("sweep", "show", str(sweep.pk))[1].splitlines()
    assert lines[2] == ("Adaptive: the first 2 trials at random, each later one chosen by TPE "
                        "from the results when it starts")  # fmt: skip
    assert lines[-1].split() == ["-", "3", "-", "-", "-", "waiting", "-", "-"]

    code, out = zs("sweep", "show", str(sweep.pk), "--csv")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == ("trial,lr,opt,job,job_name,state,stopped_step,rank,loss,step,last_loss,"
                        "last_step,run")  # fmt: skip
    assert lines[3] == "3,,,,,waiting,,,,,,,"  # a tpe trial not chosen yet (above)
    assert len(lines) == 4

    code, out = zs("sweep", "cancel", str(sweep.pk))
    assert (code, out.strip()) == (0, f"Sweep {sweep.pk} (lr-search): cancelled; 1 trial will "
                                      "not start")  # fmt: skip
    assert {j.state for j in Job.objects.filter(trial__sweep=sweep)} == {JobState.CANCELLED}
    code, out = zs("sweep", "cancel", str(sweep.pk))
    assert "had already ended (cancelled)" in out
    assert zs("sweep", "show", "999999")[0] == 4


def test_a_refused_sweep_says_its_errors_and_queues_nothing(server, tmp_path, capsys):  # noqa: F811
    url, token = server
    assert zs("--url", url, "login", "--token", token)[0] == 0
    path = tmp_path / "sweep.yaml"
    bad = SWEEP_YAML.replace("lr: [1e-4, 3e-4, 1e-3]", "lr: {uniform: [1e-4, 1e-3]}")
    path.write_text(bad)
    code, _ = zs("submit", "-f", str(path))
    err = capsys.readouterr().err
    assert code == 2
    assert "zs: the sweep was not submitted (no trial was queued)" in err
    assert "  parameters.lr: A grid takes lists of values, not ranges." in err
    assert not Sweep.objects.exists() and not Job.objects.exists()
    code, _ = zs("submit", "-f", str(path), "--after", "3")
    assert code == 2 and "--after does not apply to a sweep" in capsys.readouterr().err
