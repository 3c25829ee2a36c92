"""One scheduling cycle: snapshot -> pure core -> apply. Called by beat or the embedded ticker."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from django.conf import settings
from django.utils import timezone

from apps.jobs import after
from apps.scheduling import core, snapshot
from apps.scheduling.apply import Applied, apply
from apps.scheduling.core.presets import preset
from apps.scheduling.models import SchedulerLock
from apps.sweeps import services as sweeps

log = logging.getLogger("zhisuan.scheduler")


def live_policy(cluster: core.ClusterSnapshot) -> core.Policy:
    """The policy ``ZS_SCHEDULER_POLICY`` names, sized to the cluster in ``cluster`` (the
    tuned preset keeps one delay-scheduling hold per 2,500 devices)."""
    devices = sum(node.accelerator_count for node in cluster.nodes)
    return preset(settings.SCHEDULER_POLICY, devices=devices)


@dataclass(frozen=True)
class CycleReport:
    queued: int
    admitted: int
    preempted: int
    skipped: int
    core_ms: float
    total_ms: float
    fragmentation: core.Fragmentation


def run_cycle(policy: core.Policy | None = None) -> CycleReport:
    """``policy``: None for ``live_policy``."""
    started = time.perf_counter()
    now = timezone.now()
    sweeps.advance(now)  # sweeps whose trials ended start their next ones
    after.settle(now)  # jobs whose predecessors ended join the queue or are cancelled
    inputs = snapshot.build(now)
    core_started = time.perf_counter()
    chosen = policy if policy is not None else live_policy(inputs.snapshot)
    decisions = core.schedule(inputs.snapshot, inputs.queue, chosen, now)
    core_ms = (time.perf_counter() - core_started) * 1000
    applied: Applied = (
        apply(decisions, inputs.pool_ids, now)
        if inputs.queue or decisions.preemptions
        else Applied()
    )
    total_ms = (time.perf_counter() - started) * 1000
    SchedulerLock.objects.filter(name="admission").update(
        last_cycle_at=now, last_cycle_ms=total_ms, last_admitted=len(applied.admitted)
    )
    if applied.admitted or applied.preempted:
        log.info(
            "cycle: %d queued, %d admitted, %d preempted (core %.1f ms, total %.1f ms)",
            len(inputs.queue), len(applied.admitted), len(applied.preempted), core_ms, total_ms,
        )  # fmt: skip
    return CycleReport(
        queued=len(inputs.queue),
        admitted=len(applied.admitted),
        preempted=len(applied.preempted),
        skipped=len(applied.skipped),
        core_ms=core_ms,
        total_ms=total_ms,
        fragmentation=decisions.fragmentation,
    )
