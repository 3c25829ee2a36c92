"""Early stopping of a sweep's trials by the median rule, on the simulated cluster: a running
trial worse than the median of the others at the step it reached is stopped and its slot
goes to the next trial; the others' values are taken at or before that step."""

from __future__ import annotations

from typing import Any

import pytest

from apps.jobs.models import Job, JobEvent, JobState
from apps.runs.services import ensure_run_for_job, ingest_metrics
from apps.sweeps import services
from apps.sweeps.models import Trial
from apps.tenancy.models import Role
from tests.conftest import World
from tests.jobs.conftest import Cluster, tick
from tests.jobs.test_sweeps import URL, _sweep, _template

pytestmark = pytest.mark.django_db


def _trials(sweep_id: int) -> dict[int, Job]:
    rows = Trial.objects.filter(sweep_id=sweep_id, job__isnull=False).select_related("job")
    return {t.index: t.job for t in rows if t.job is not None}


def _stopped_early(job: Job) -> bool:
    row = Job.objects.get(pk=job.pk)
    return row.state == JobState.CANCELLED and row.events.filter(reason="EarlyStopped").exists()


def _report(job: Job, *points: tuple[int, float]) -> None:
    ingest_metrics(run=ensure_run_for_job(job), points=[("loss", s, v) for s, v in points])


def _start(client: Any, cluster: Cluster, **overrides: Any) -> int:
    fields: dict[str, Any] = {
        "parameters": {"lr": [1, 2, 3, 4, 5]},
        "template": _template(cluster, args=["--lr={{lr}}"], env={"ZS_SIM_DURATION_S": "36000"}),
        "parallel": 4,
        "early_stop": "median",
        "stop_after_step": 100,
        "stop_min_trials": 2,
    }
    body = _sweep(cluster, **{**fields, **overrides})
    response = client.post(URL, body, format="json")
    assert response.status_code == 201, response.json()
    tick(cluster)
    tick(cluster, 10)  # the first four run
    sweep_id: int = response.json()["id"]
    assert {j.state for j in _trials(sweep_id).values()} == {JobState.RUNNING}
    return sweep_id


def test_a_trial_worse_than_the_median_is_stopped_and_the_next_starts(
    world: World, cluster: Cluster, client_for
) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    sweep_id = _start(client, cluster)
    jobs = _trials(sweep_id)
    _report(jobs[1], (0, 9.0), (200, 1.0))
    _report(jobs[2], (0, 9.0), (200, 1.2))
    _report(jobs[3], (0, 9.0), (200, 3.0))  # worse than the median of 1.0 and 1.2
    _report(jobs[4], (0, 9.0), (50, 5.0))  # before stop_after_step: not judged yet
    assert services.advance() == 1  # trial 5 takes trial 3's slot
    jobs = _trials(sweep_id)
    assert [jobs[i].state for i in (1, 2, 3, 4)] == ["running", "running", "cancelled", "running"]
    event = JobEvent.objects.get(job=jobs[3], reason="EarlyStopped")
    assert event.message_key == "earlyStopped"
    assert event.message == (
        "stopped early at step 200: loss 3 is worse than the median 1.1 of the sweep's other "
        "trials at that step"
    )
    assert jobs[5].state == JobState.QUEUED
    detail = client.get(f"{URL}{sweep_id}/").json()
    assert detail["counts"]["stopped_early"] == 1 and detail["counts"]["cancelled"] == 0
    assert [o["stopped_step"] for o in detail["outcomes"]] == [None, None, 200, None, None]

    # Judged again only on a later step; the others' values count at or before that step.
    assert services.advance() == 0
    _report(jobs[4], (350, 1.0))
    _report(jobs[1], (300, 0.5), (400, 2.0))
    _report(jobs[2], (300, 0.7), (400, 2.5))
    services.advance()
    # At step 350 the others read 0.5 and 0.7 (their 300), not 2.0 and 2.5 (their 400).
    assert _stopped_early(jobs[4])
    assert Trial.objects.get(job=jobs[4]).stopped_step == 350


def test_too_few_trials_at_the_step_judge_nobody(world: World, cluster: Cluster, client_for):
    client = client_for(world.user("a", Role.MEMBER))
    sweep_id = _start(client, cluster, stop_min_trials=3, goal="max")
    jobs = _trials(sweep_id)
    _report(jobs[1], (200, 0.9))
    _report(jobs[2], (200, 0.8))
    _report(jobs[3], (200, 0.1))  # the worst for max, but only two others reached step 200
    services.advance()
    assert {j.state for j in _trials(sweep_id).values()} == {JobState.RUNNING}
    _report(jobs[4], (250, 0.7))  # now three others reached 200 for trial 3, but it is judged
    services.advance()  # again only when it reports a later step
    assert Job.objects.get(pk=jobs[3].pk).state == JobState.RUNNING
    _report(jobs[3], (260, 0.1))  # no other trial has reached step 260
    services.advance()
    assert Job.objects.get(pk=jobs[3].pk).state == JobState.RUNNING
    for job in (jobs[1], jobs[2]):
        _report(job, (300, 0.9))
    _report(jobs[3], (280, 0.1))  # others past 280: trials 1, 2 (300) and not 4 (250)
    services.advance()
    assert Job.objects.get(pk=jobs[3].pk).state == JobState.RUNNING
    _report(jobs[4], (300, 0.7))
    # Three others past 290, read at or before it: 0.9, 0.8 (their 200) and 0.7 (250).
    _report(jobs[3], (290, 0.1))
    services.advance()
    assert _stopped_early(jobs[3])
    # Trial 4 (step 300) is judged too, but only trials 1 and 2 have reached 300.
    assert Job.objects.get(pk=jobs[4].pk).state == JobState.RUNNING


def test_early_stopping_needs_a_metric(world: World, cluster: Cluster, client_for) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    response = client.post(URL, _sweep(cluster, early_stop="median", metric=""), format="json")
    assert response.status_code == 400
    assert response.json()["errors"] == {
        "early_stop": ["Early stopping compares trials by a metric: name one."]
    }
    bad = client.post(URL, _sweep(cluster, stop_min_trials=0), format="json")
    assert list(bad.json()["errors"]) == ["stop_min_trials"]


def test_successive_halving_keeps_the_best_fraction_at_each_rung(
    world: World, cluster: Cluster, client_for
) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    sweep_id = _start(
        client, cluster, early_stop="asha", stop_after_step=100, reduction_factor=2,
        stop_min_trials=1,
    )  # fmt: skip
    jobs = _trials(sweep_id)
    _report(jobs[1], (0, 9.0), (100, 1.0))
    assert services.advance() == 0  # alone at rung 100: not judged
    _report(jobs[2], (0, 9.0), (100, 2.0))
    assert services.advance() == 1  # 2nd of 2 at rung 100, where 2 // 2 = 1 go on
    # Trial 3: 1st of 3 at rung 100, read there (not at 150); trial 4 is below the first rung.
    # Trial 1, now 2nd of 3 at rung 100, was judged there already: it goes on.
    _report(jobs[3], (0, 9.0), (100, 0.5), (150, 0.4))
    _report(jobs[4], (0, 9.0), (50, 3.0))
    assert services.advance() == 0
    jobs = _trials(sweep_id)
    assert [jobs[i].state for i in (1, 2, 3, 4)] == ["running", "cancelled", "running", "running"]
    assert jobs[5].state == JobState.QUEUED  # trial 5 took trial 2's slot
    event = JobEvent.objects.get(job=jobs[2], reason="EarlyStopped")
    assert event.message_key == "earlyStoppedRung"
    assert event.message == (
        "stopped early at the rung at step 100: loss 2 ranks 2 of the 2 trials there, and only "
        "the best 1 go on"
    )
    assert Trial.objects.get(job=jobs[2]).stopped_step == 100
    detail = client.get(f"{URL}{sweep_id}/").json()
    assert detail["reduction_factor"] == 2 and detail["counts"]["stopped_early"] == 1

    # A trial is judged once at each rung, at the highest it has passed.
    _report(jobs[1], (200, 0.9), (260, 5.0))  # alone at rung 200
    _report(jobs[4], (450, 0.1))  # skips to rung 400, where nobody else is
    services.advance()
    assert {jobs[i].pk for i in (1, 4)} <= set(
        Job.objects.filter(state=JobState.RUNNING).values_list("pk", flat=True)
    )
    # Trial 3 at rung 200 against trial 1 read there (0.9, not its 5.0 at step 260).
    _report(jobs[3], (200, 0.95))
    _report(jobs[1], (300, 6.0))  # still rung 200 for trial 1 (the next is 400): not judged
    services.advance()
    assert _stopped_early(jobs[3]) and Trial.objects.get(job=jobs[3]).stopped_step == 200
    assert Job.objects.get(pk=jobs[1].pk).state == JobState.RUNNING


def test_halving_brackets_judge_their_own_trials_from_their_own_first_rung(
    world: World, cluster: Cluster, client_for
) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    sweep_id = _start(
        client, cluster, early_stop="asha", stop_after_step=100, reduction_factor=2,
        stop_min_trials=1, brackets=2,
    )  # fmt: skip
    jobs = _trials(sweep_id)
    # Bracket 1 (trials 1, 3, 5) has rungs 100, 200, ...; bracket 2 (trials 2, 4) 200, 400, ...
    _report(jobs[1], (0, 9.0), (100, 1.0))
    _report(jobs[2], (0, 9.0), (100, 0.1))
    _report(jobs[3], (0, 9.0), (100, 2.0))
    _report(jobs[4], (0, 9.0), (100, 5.0))  # the worst at 100, but its bracket starts at 200
    assert services.advance() == 1
    jobs = _trials(sweep_id)
    assert [jobs[i].state for i in (1, 2, 3, 4)] == ["running", "running", "cancelled", "running"]
    event = JobEvent.objects.get(job=jobs[3], reason="EarlyStopped")
    assert event.message_key == "earlyStoppedBracket"
    assert event.message == (
        "stopped early at the rung at step 100 of bracket 1: loss 2 ranks 2 of the 2 trials of "
        "its bracket there, and only the best 1 go on"
    )
    assert jobs[5].state == JobState.QUEUED  # trial 5 (bracket 1) took trial 3's slot
    # At step 200 trial 4 meets trial 2 only: trial 1, of the other bracket, has not got there.
    _report(jobs[2], (200, 0.1))
    _report(jobs[4], (200, 4.0))
    assert services.advance() == 0  # no trial left to start
    assert _stopped_early(jobs[4]) and Trial.objects.get(job=jobs[4]).stopped_step == 200
    assert "of bracket 2: loss 4 ranks 2 of the 2 trials of its bracket" in (
        JobEvent.objects.get(job=jobs[4], reason="EarlyStopped").message
    )
    detail = client.get(f"{URL}{sweep_id}/").json()
    assert detail["brackets"] == 2
    assert [o["bracket"] for o in detail["outcomes"]] == [1, 2, 1, 2, 1]
    exported = client.get(f"{URL}{sweep_id}/csv/").content.decode().splitlines()
    header = exported[0].split(",")
    assert header[header.index("stopped_step") + 1] == "bracket"
    at = header.index("bracket")
    assert [row.split(",")[at] for row in exported[1:]] == ["1", "2", "1", "2", "1"]

    # Brackets belong to successive halving, and there are at most four.
    median = client.post(URL, _sweep(cluster, name="m", brackets=2, early_stop="median"),
                         format="json")  # fmt: skip
    assert median.json()["errors"] == {
        "brackets": ["Brackets are successive halving's: set early_stop to asha."]
    }
    many = client.post(URL, _sweep(cluster, name="m", brackets=5, early_stop="asha",
                                   stop_after_step=10), format="json")  # fmt: skip
    assert list(many.json()["errors"]) == ["brackets"]


def test_hyperbands_split_gives_the_early_brackets_more_trials(
    world: World, cluster: Cluster, client_for
) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    body = _sweep(
        cluster, name="hb", parameters={"lr": list(range(1, 12))}, parallel=1,
        template=_template(cluster, args=["--lr={{lr}}"]), early_stop="asha",
        stop_after_step=100, reduction_factor=3, brackets=3,
    )  # fmt: skip
    created = client.post(URL, body, format="json")
    assert created.status_code == 201, created.json()
    detail = client.get(f"{URL}{created.json()['id']}/").json()
    # 3 : 1.5 : 1 (factor 3), so 6, 3 and 2 of the 11 trials; the early ones in that order too.
    assert [o["bracket"] for o in detail["outcomes"]] == [1, 2, 1, 3, 1, 2, 1, 3, 1, 2, 1]


def test_successive_halving_needs_its_first_rung(
    world: World, cluster: Cluster, client_for
) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    no_metric = client.post(URL, _sweep(cluster, early_stop="asha", metric=""), format="json")
    assert no_metric.json()["errors"] == {
        "early_stop": ["Early stopping compares trials by a metric: name one."]
    }
    no_rung = client.post(URL, _sweep(cluster, early_stop="asha"), format="json")
    assert no_rung.status_code == 400
    assert no_rung.json()["errors"] == {
        "stop_after_step": ["Successive halving needs its first rung: a step from 1."]
    }
    for factor in (1, 17):
        bad = client.post(URL, _sweep(cluster, reduction_factor=factor), format="json")
        assert list(bad.json()["errors"]) == ["reduction_factor"]
