"""Governance passes racing on PostgreSQL: several reaching the same extended flag at once
remind its owner once, and several finding one notice's retry due queue it once. Real
threads, real connections."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from apps.governance import notify, services
from apps.governance.models import FlagState, IdleFlag, Notification
from apps.governance.policy import effective_policy
from apps.jobs.models import Job, JobEvent
from apps.tenancy.models import Role
from tests.conftest import World
from tests.governance.conftest import HOUR, Wall, notebook, state, submit

pytestmark = pytest.mark.django_db(transaction=True)
PASSES = 4


def test_passes_reaching_one_extended_flag_at_once_remind_once(
    world: World, client_for, wall: Wall
) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    job_id = submit(client, "tenant-a", notebook(wall.cluster))
    wall.go(0)
    wall.go(6)
    assert state(job_id) == "running"
    now = wall.at(2 * HOUR)
    IdleFlag.objects.create(
        job_id=job_id, tenant=world.tenant_a, state=FlagState.EXTENDED, extensions_used=1,
        warned_at=now - timedelta(hours=1), watch_from=now - timedelta(minutes=50),
        stop_at=now + timedelta(minutes=10),
    )  # fmt: skip

    def remind(barrier: threading.Barrier) -> bool:
        try:
            flag = IdleFlag.objects.get(job_id=job_id)  # each pass reads the flag itself
            job = Job.objects.select_related("tenant", "owner").get(pk=job_id)
            policy = effective_policy(job.tenant)
            barrier.wait()
            return services._remind(flag, job, policy, now)
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=PASSES) as executor:
        barrier = threading.Barrier(PASSES)
        said = [f.result(timeout=60) for f in [executor.submit(remind, barrier)
                                               for _ in range(PASSES)]]  # fmt: skip
    assert sorted(said) == [False] * (PASSES - 1) + [True]
    assert JobEvent.objects.filter(job_id=job_id, reason="IdleReminder").count() == 1
    assert Notification.objects.filter(job_id=job_id, kind="idle_warning").count() == 1
    assert IdleFlag.objects.get(job_id=job_id).reminded_at == now


def test_passes_finding_one_retry_due_at_once_queue_it_once(world: World) -> None:
    now = timezone.now()
    notice = Notification.objects.create(
        tenant=world.tenant_a, recipient=world.user("a", Role.MEMBER), kind="idle_warning",
        title="idle", body="GPUs idle", delivery_attempts=1,
        retry_at=now - timedelta(seconds=1),
    )  # fmt: skip

    def redeliver(barrier: threading.Barrier) -> int:
        try:
            barrier.wait()
            return notify.redeliver_due(now)
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=PASSES) as executor:
        barrier = threading.Barrier(PASSES)
        queued = [f.result(timeout=60) for f in [executor.submit(redeliver, barrier)
                                                 for _ in range(PASSES)]]  # fmt: skip
    assert sorted(queued) == [0] * (PASSES - 1) + [1]
    assert Notification.objects.get(pk=notice.pk).retry_at is None
