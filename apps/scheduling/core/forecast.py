"""When will a queued job start? A forecast from the cluster as it is now.

The researcher's first question about a queued job, and one batch schedulers answer (Slurm's
``squeue --start``). The answer here is the scheduler's own: the queue is run forward
through the *same* ``Scheduler`` the live loop runs (``LiveCluster``, one kept index), on a
virtual clock that jumps from one event to the next:

- running work ends at its declared end (``RunningJob.expected_end``: its admission plus its
  runtime limit); work that declared none never ends in the forecast;
- a job the forecast starts runs for its declared runtime (``PendingJob.expected_runtime``),
  or without end when it declared none;
- a job that starts after others (``PendingJob.after``) joins the queue when the last of
  them ends in the forecast (each is taken to succeed), as the platform lets it in then;
- the clock also stops where a rule of the policy changes its mind without any job ending:
  a large job starts to starve or its hold window closes, a gang's topology patience runs
  out, a hold expires;
- the further ahead, the coarser the clock (``RELATIVE_STEP``): a start a day away is
  "around" to within an hour or so, as the dashboard says it.

What it leaves out, so what the dashboard must say with it: jobs that arrive later (work of
higher priority goes ahead of the job), jobs that end before their limit (most do, so the
job may start sooner), failures and drains. Work really running that the forecast preempts
is not requeued (its groups are not in the snapshot); a queued job the forecast starts and
later preempts waits again with its first start kept.

Pure Python like the rest of the core; nothing here changes the snapshot.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from .delay import hold_expiry, starvation_threshold_for, topology_patience_for
from .live import LiveCluster
from .model import ClusterSnapshot, PendingJob, Policy

HORIZON = timedelta(days=7)
"""How far ahead a forecast looks: past it a job gets no estimate."""

MAX_CYCLES = 2000
"""Scheduling cycles one forecast may run (each costs what a live cycle costs)."""

MIN_STEP = timedelta(minutes=1)
RELATIVE_STEP = 0.05
"""Cycles are at least a minute apart, and at least 5% of the time from ``now`` (6 minutes
two hours ahead, an hour and a quarter a day ahead): what ends in between is released at the
next cycle, so a start is late by at most that much, and a forecast runs a few hundred
cycles rather than one per job end."""


@dataclass(frozen=True, slots=True)
class Forecast:
    """``starts``: job id -> when the job first starts, for the queued jobs that start by
    ``until``; the others get no estimate. ``cycles``: the scheduling cycles it took."""

    made_at: datetime
    until: datetime
    starts: dict[str, datetime] = field(default_factory=dict)
    cycles: int = 0


def _whole_devices(job: PendingJob) -> int:
    return sum(g.replicas * g.accelerators for g in job.groups)


def _wakes(job: PendingJob, policy: Policy) -> list[datetime]:
    """Moments the policy may decide differently about ``job`` with nothing else changed."""
    devices = _whole_devices(job)
    out: list[datetime] = []
    if policy.delay_scheduling and devices >= policy.large_job_devices:
        out.append(job.submit_time + starvation_threshold_for(devices, policy))
        out.append(hold_expiry(job, policy, devices))
    patience = topology_patience_for(devices, policy)
    if patience > timedelta(0) and sum(g.replicas for g in job.groups) > 1:
        out.append(job.submit_time + patience)
    return out


def _release_after(
    waiting: dict[str, PendingJob],
    by_id: dict[str, PendingJob],
    ended: set[str],
    t: datetime,
    policy: Policy,
    wakes: list[datetime],
) -> list[datetime]:
    """Drop ended jobs from the ``after`` of the jobs waiting on them; one left with none
    joins the queue at ``t`` (its submit time from then, as the platform's release sets it).
    Returns the wakes with those of the jobs let in."""
    added: list[datetime] = []
    for job_id, job in list(waiting.items()):
        if not job.after or not ended.intersection(job.after):
            continue
        rest = tuple(a for a in job.after if a not in ended)
        job = replace(job, after=rest, submit_time=job.submit_time if rest else t)
        waiting[job_id] = by_id[job_id] = job
        if not rest:
            added += [w for w in _wakes(job, policy) if w > t]
    return sorted(wakes + added) if added else wakes


def forecast_starts(
    snapshot: ClusterSnapshot,
    queue: list[PendingJob],
    policy: Policy,
    now: datetime,
    *,
    horizon: timedelta = HORIZON,
    max_cycles: int = MAX_CYCLES,
) -> Forecast:
    """When each job of ``queue`` would first start if nothing arrived and everything ran to
    its declared end (module docstring)."""
    until = now + horizon
    live = LiveCluster(snapshot, quotas_enabled=policy.quotas)
    ends: dict[str, datetime] = {
        j.job_id: j.expected_end for j in snapshot.running if j.expected_end is not None
    }
    by_id = {j.job_id: j for j in queue}
    waiting = dict(by_id)
    wakes = sorted({w for j in queue for w in _wakes(j, policy) if now < w <= until})
    starts: dict[str, datetime] = {}
    ended: set[str] = set()
    cycles = 0
    t = now
    while waiting and cycles < max_cycles:
        # Work at or past its declared end is gone (work past its runtime limit now is
        # stopped by the next governance pass).
        for job_id in [j for j, e in ends.items() if e <= t]:
            del ends[job_id]
            ended.add(job_id)
            if job_id in live.running:
                live.release(job_id)
        if ended:
            wakes = _release_after(waiting, by_id, ended, t, policy, wakes)
        cycles += 1
        decisions = live.schedule(list(waiting.values()), policy, t, quiet=True)
        for pre in decisions.preemptions:
            victim = pre.victim_job_id
            ends.pop(victim, None)
            if victim in by_id:  # started by the forecast: it waits again
                waiting[victim] = by_id[victim]
        for placement in decisions.placements:
            job = waiting.pop(placement.job_id)
            starts.setdefault(job.job_id, t)
            if job.expected_runtime is not None:
                ends[job.job_id] = t + job.expected_runtime
        # The next moment anything can change: a job ends, a hold expires, a rule wakes.
        moments = [e for e in ends.values() if e > t]
        moments += [r.expires_at for r in live.reservations if r.expires_at > t]
        moments += [w for w in wakes if w > t]
        if not moments:
            break  # nothing running ends and no rule wakes: the rest waits past any horizon
        t = max(min(moments), t + max(MIN_STEP, (t - now) * RELATIVE_STEP))
        if t > until:
            break
    return Forecast(made_at=now, until=until, starts=starts, cycles=cycles)
