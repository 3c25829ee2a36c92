"""A week of finished demo jobs, so the history pages have something to show on first run.

Usage & Cost, the job lists and the What-if replay all read the past. A fresh demo has none,
so ``seed_demo`` writes one: training jobs of both tenants on the A800 pool over the last
seven days, each admitted at the first moment the pool and its tenant's quota
(guarantee + borrowing limit) had room for it, in submit order, so the history is one the
cluster could have run. Seeded, so every demo has the same one. Each finished job gets its
state events and its usage segment, as a job that really ran does; two were cancelled
before they started (the What-if page counts such jobs as never started). Two servers
were out of service for a while (``OUTAGES``): each has its closed health incident, and
the plan kept their GPUs out of use meanwhile (the What-if replay replays such outages).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from apps.accounting.models import UsageSegment
from apps.accounts.models import User
from apps.clusters.models import Node, ResourcePool
from apps.health.models import FaultAction, Incident, IncidentState, Severity
from apps.health.services import CORDONED_NOTE
from apps.jobs.models import Job, JobEvent, JobKind, JobState, spec_devices
from apps.tenancy.models import Tenant

DAYS = 7
SEED = 2026
# (GPUs per replica, replicas, weight): single-GPU debugging up to 4-node gangs
SHAPES = ((1, 1, 3), (2, 1, 2), (4, 1, 3), (8, 1, 4), (8, 2, 3), (8, 4, 1))
OWNERS = {"vision": "bob", "nlp": "dave"}
ARRIVAL_S = 900.0  # mean seconds between submissions by day
MODELS = {"vision": ("vit-b", "detr", "yolo", "sam"), "nlp": ("llama-7b", "qwen-1.8b", "bert")}


@dataclass(frozen=True)
class PastOutage:
    """A server out of service in the history: from ``day`` at ``hour`` for ``hours``."""

    node_index: int  # among the pool's servers (spares aside), by pk
    day: int
    hour: float
    hours: float
    fault: str
    action: str
    severity: str
    detail: str

    @property
    def start(self) -> float:
        return self.day * 86400.0 + self.hour * 3600

    @property
    def end(self) -> float:
        return self.start + self.hours * 3600


# A GPU fell off the bus (drained, repaired by a reset the same day) and a degraded
# InfiniBand port (cordoned overnight until the cable was swapped).
OUTAGES = (
    PastOutage(3, 2, 9.0, 6.0, "xid:79", FaultAction.CORDON_DRAIN, Severity.CRITICAL,
               "GPU 3 has fallen off the bus"),
    PastOutage(11, 4, 20.0, 14.0, "ib:rate_degraded", FaultAction.CORDON, Severity.WARNING,
               "mlx5_2 at 100 Gb/s of 400"),
)  # fmt: skip

# (start, end, GPUs) in seconds from the history's start: capacity out of service
Out = tuple[float, float, int]


@dataclass(frozen=True)
class Planned:
    """One historical job: seconds from the history's start."""

    tenant: str
    per_replica: int
    replicas: int
    priority: int
    submit: float
    admit: float
    run: float

    @property
    def gpus(self) -> int:
        return self.per_replica * self.replicas


def plan(
    capacity: int,
    limits: dict[str, int],
    span: float,
    rng: random.Random,
    outages: tuple[Out, ...] = (),
) -> list[Planned]:
    """Jobs arriving over ``span`` seconds, three times as often by day (the first 12 of
    every 24 hours) as by night, sized so the pool is busy by day and jobs queue; each
    admitted at the earliest time from its submission at which the pool (``capacity`` GPUs,
    less those of ``outages`` while they last) and its tenant's ``limits`` have room for
    its whole run, next to the jobs planned before it."""
    out: list[Planned] = []
    t = 0.0
    while True:
        t += rng.expovariate(1 / ARRIVAL_S)
        if t >= span:
            return out
        if (t % 86400) >= 43200 and rng.random() > 1 / 3:
            continue  # night: a third of the day's arrivals
        tenant = rng.choice(sorted(limits))
        per, replicas, _ = rng.choices(SHAPES, weights=[w for *_, w in SHAPES])[0]
        # Heavy-tailed run times: most under 3 h, some near a day.
        run = min(20 * 3600.0, 600 + rng.lognormvariate(math.log(2 * 3600), 0.9))
        admit = _first_fit(out, t, run, per * replicas, capacity, tenant, limits[tenant],
                           outages)  # fmt: skip
        if admit + run < span:
            prio = rng.choices((2, 3, 4), weights=(2, 3, 2))[0]
            out.append(Planned(tenant, per, replicas, prio, t, admit, run))


def _first_fit(jobs: list[Planned], submit: float, run: float, gpus: int, capacity: int,
               tenant: str, limit: int, outages: tuple[Out, ...] = ()) -> float:  # fmt: skip
    def used(at: float, who: str | None) -> int:
        return sum(
            j.gpus for j in live if j.admit <= at < j.admit + j.run and who in (None, j.tenant)
        )

    def room(at: float) -> int:
        return capacity - sum(g for a, b, g in outages if a <= at < b)

    live = [j for j in jobs if j.admit + j.run > submit]  # the rest ended before it came
    # Room grows where a job ends or an outage does.
    starts = sorted([*(j.admit + j.run for j in live), *(b for _, b, _ in outages if b > submit)])
    for start in [submit, *starts]:
        # Usage only rises where a job starts and room only shrinks where an outage does,
        # so checking those moments covers the run.
        moments = [start] + [j.admit for j in live if start < j.admit < start + run]
        moments += [a for a, _, _ in outages if start < a < start + run]
        if all(
            used(m, None) + gpus <= room(m) and used(m, tenant) + gpus <= limit for m in moments
        ):
            return start
    return math.inf


# (replicas, GPUs each, hours, topology mode) -> spec
Spec = Callable[[int, int, float, str], dict[str, Any]]


def seed_history(pool: ResourcePool, now: datetime, limits: dict[str, int], spec: Spec) -> int:
    """Writes the history ending at ``now`` on ``pool``, tenants kept to ``limits`` (GPUs),
    with job specs from ``spec``; returns the jobs written."""
    rng = random.Random(SEED)
    start = now - timedelta(days=DAYS)

    def at(seconds: float) -> datetime:
        return start + timedelta(seconds=seconds)

    servers = list(Node.objects.filter(pool=pool, is_spare=False).order_by("pk"))
    capacity = sum(n.accelerator_count for n in servers)
    outages = [o for o in OUTAGES if o.node_index < len(servers)]
    out = tuple((o.start, o.end, servers[o.node_index].accelerator_count) for o in outages)
    planned = plan(capacity, limits, DAYS * 86400.0 - 3600, rng, out)
    tenants = {t.slug: t for t in Tenant.objects.filter(slug__in=limits)}
    owners = {u.username: u for u in User.objects.filter(username__in=OWNERS.values())}
    model = pool.nodes.values_list("accelerator_model", flat=True).first() or ""
    events: list[JobEvent] = []
    segments: list[UsageSegment] = []
    for i, p in enumerate(planned):
        hours = p.run / 3600
        # Gangs ask to sit under one leaf where they can, as distributed training does.
        job_spec = spec(p.replicas, p.per_replica, hours, "soft" if p.replicas > 1 else "none")
        devices, milli = spec_devices(job_spec)
        job = Job.objects.create(
            tenant=tenants[p.tenant],
            owner=owners[OWNERS[p.tenant]],
            name=f"{rng.choice(MODELS[p.tenant])}-run-{i + 1:03d}",
            kind=JobKind.TRAINING,
            pool=pool,
            priority=p.priority,
            spec=job_spec,
            accelerator_model=model,
            requested_devices=devices,
            requested_milli=milli,
            max_runtime_s=int(math.ceil(hours * 1.5) * 3600),
            max_wait_s=2 * 3600 if p.priority <= 2 else None,
            state=JobState.SUCCEEDED,
            state_changed_at=at(p.admit + p.run),
            submitted_at=at(p.submit),
            admitted_at=at(p.admit),
            started_at=at(p.admit + 60),
            finished_at=at(p.admit + p.run),
        )
        for frm, to, reason, when in (
            ("submitted", "queued", "Submitted", p.submit),
            ("queued", "admitted", "Admitted", p.admit),
            ("admitted", "dispatching", "Dispatched", p.admit + 5),
            ("dispatching", "running", "Running", p.admit + 60),
            ("running", "succeeded", "Succeeded", p.admit + p.run),
        ):
            events.append(
                JobEvent(job=job, from_state=frm, to_state=to, reason=reason,
                         message="demo history", created_at=at(when))
            )  # fmt: skip
        segments.append(
            UsageSegment(
                job=job, tenant=job.tenant, owner=job.owner, pool=pool, accelerator_model=model,
                device_milli=p.gpus * 1000, started_at=at(p.admit), ended_at=at(p.admit + p.run),
                reason=JobState.SUCCEEDED,
            )
        )  # fmt: skip
    # One insert each for the ~2,100 events and ~430 segments, not one per row.
    JobEvent.objects.bulk_create(events)
    UsageSegment.objects.bulk_create(segments)
    for k, slug in enumerate(sorted(limits)):  # cancelled while queued: never started
        submitted = start + timedelta(days=2 + 3 * k, hours=5)
        job_spec = spec(4, 8, 6, "soft")
        devices, milli = spec_devices(job_spec)
        Job.objects.create(
            tenant=tenants[slug], owner=owners[OWNERS[slug]], name=f"{slug}-sweep-cancelled",
            kind=JobKind.TRAINING, pool=pool, priority=4, spec=job_spec,
            accelerator_model=model, requested_devices=devices, requested_milli=milli,
            state=JobState.CANCELLED, state_changed_at=submitted + timedelta(minutes=40),
            submitted_at=submitted, finished_at=submitted + timedelta(minutes=40),
        )  # fmt: skip
    for o in outages:
        _incident(servers[o.node_index], o, at)
    return len(planned) + len(limits)


def _incident(node: Node, outage: PastOutage, at: Callable[[float], datetime]) -> Incident:
    """The closed incident of a past outage, with the notes the health service writes."""
    notes = [[at(outage.start).isoformat(), CORDONED_NOTE]]
    if outage.action == FaultAction.CORDON_DRAIN:
        notes.append([at(outage.start).isoformat(), "drained: 0 job(s) restarted as whole gangs"])
    notes.append([at(outage.end).isoformat(), "closed: repaired"])
    return Incident.objects.create(
        node=node, fault=outage.fault, severity=outage.severity, action=outage.action,
        state=IncidentState.CLOSED, detail=outage.detail, actions_taken=notes,
        opened_at=at(outage.start), last_seen_at=at(outage.end - 600),
        closed_at=at(outage.end),
    )  # fmt: skip
