"""The demo's week of finished jobs (apps/core/demo_history.py), written by ``seed_demo``."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from apps.accounting.models import UsageSegment
from apps.accounts.models import User
from apps.core import demo
from apps.core.demo_history import DAYS, OUTAGES, plan
from apps.health.models import Incident
from apps.jobs.models import Job, JobState
from apps.scheduling.whatif_faults import window_outages
from apps.sweeps.models import Sweep


def test_the_plan_is_a_history_the_pool_could_have_run():
    capacity, limits, span = 128, {"nlp": 128, "vision": 80}, DAYS * 86400.0
    jobs = plan(capacity, limits, span, random.Random(3))
    assert len(jobs) > 100
    assert any(j.admit > j.submit for j in jobs)  # some queued
    for j in jobs:
        assert 0 <= j.submit <= j.admit and j.admit + j.run < span and j.run > 0
        # Where a job starts, what runs then fits the pool and each tenant's limit.
        running = [k for k in jobs if k.admit <= j.admit < k.admit + k.run]
        assert sum(k.gpus for k in running) <= capacity
        for tenant, limit in limits.items():
            assert sum(k.gpus for k in running if k.tenant == tenant) <= limit
    assert plan(capacity, limits, span, random.Random(3)) == jobs  # seeded


def test_the_plan_keeps_an_outages_gpus_out_of_use():
    capacity, limits, span = 64, {"nlp": 64, "vision": 64}, 2 * 86400.0
    outages = ((10 * 3600.0, 20 * 3600.0, 32), (30 * 3600.0, 31 * 3600.0, 8))
    jobs = plan(capacity, limits, span, random.Random(5), outages)
    # Where a job starts or an outage begins, what runs fits the room left.
    moments = [j.admit for j in jobs] + [a for a, _, _ in outages]
    for m in moments:
        room = capacity - sum(g for a, b, g in outages if a <= m < b)
        assert sum(k.gpus for k in jobs if k.admit <= m < k.admit + k.run) <= room
    # It bites: without the outages some job starts sooner.
    free = plan(capacity, limits, span, random.Random(5))
    assert free != jobs
    assert any(j.admit < k.admit for j, k in zip(free, jobs, strict=False) if j.submit == k.submit)


def test_a_job_that_fits_nowhere_is_left_out():
    jobs = plan(4, {"nlp": 4}, 86400.0, random.Random(1))
    assert jobs and all(j.gpus <= 4 for j in jobs)


@pytest.mark.django_db
def test_seed_demo_writes_the_week_once_with_events_and_usage(monkeypatch):
    now = datetime(2026, 12, 2, 12, tzinfo=UTC)
    monkeypatch.setattr("apps.core.demo.timezone.now", lambda: now)
    demo.seed()
    done = Job.objects.filter(state=JobState.SUCCEEDED)
    assert done.count() > 100
    assert Job.objects.filter(state=JobState.CANCELLED, admitted_at__isnull=True).count() == 2
    first = done.order_by("submitted_at").first()
    assert first is not None and first.submitted_at >= now - timedelta(days=DAYS)
    assert all(j.finished_at is not None and j.finished_at < now for j in done)
    job = done.order_by("pk")[10]
    assert [e.to_state for e in job.events.order_by("created_at")] == [
        "queued", "admitted", "dispatching", "running", "succeeded"
    ]  # fmt: skip
    [segment] = UsageSegment.objects.filter(job=job)
    assert (segment.started_at, segment.ended_at) == (job.admitted_at, job.finished_at)
    assert segment.device_milli == 1000 * job.requested_devices and job.requested_milli == 0
    # Gangs ask for one leaf where they can (soft), one-node jobs for nothing.
    modes = {
        (j.spec["replica_groups"][0]["replicas"] > 1, j.spec["topology"]["mode"]) for j in done
    }
    assert modes == {(True, "soft"), (False, "none")}
    # The live demo jobs (three training jobs, a notebook, an evaluation that starts after
    # the fine-tune, and the first two trials of a sweep) come last; seeding again writes
    # nothing.
    assert list(Job.objects.order_by("-pk").values_list("name", "kind", "state")[:7]) == [
        ("detr-lr-2", "training", "queued"),
        ("detr-lr-1", "training", "queued"),
        ("detr-eval", "training", "queued"),
        ("eda-notebook", "notebook", "queued"),
        ("detr-finetune", "training", "queued"),
        ("vit-l-imagenet", "training", "queued"),
        ("llama-7b-pretrain", "training", "queued"),
    ]
    evaluation = Job.objects.get(name="detr-eval")
    assert evaluation.waiting_for_jobs
    assert [j.name for j in evaluation.after.all()] == ["detr-finetune"]
    sweep = Sweep.objects.get(name="detr-lr")
    bob = User.objects.get(username="bob")
    assert (sweep.owner_id, sweep.trials.count(), sweep.state) == (bob.pk, 4, "running")
    assert Job.objects.get(name="detr-lr-2").spec["args"] == ["--lr", "0.0003"]
    count = Job.objects.count()
    demo.seed()
    assert Job.objects.count() == count
    assert Sweep.objects.count() == 1
    # The week's two outages: closed incidents, which the What-if replay reads as outages
    # (the node hours out of service, one drained).
    assert Incident.objects.filter(state="closed").count() == len(OUTAGES) == 2
    nodes = {str(pk) for pk in Incident.objects.values_list("node_id", flat=True)}
    outages = window_outages(now - timedelta(days=DAYS), now, nodes)
    assert [(o.end - o.start) / 3600 for o in outages] == [o.hours for o in OUTAGES]
    assert [o.drain_at is not None for o in outages] == [True, False]
