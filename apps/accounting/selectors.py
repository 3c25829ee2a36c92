"""Usage reports: reserved device-hours (and cost) grouped by job, user, project, pool, model or
tenant over a time range, from closed segments plus the holds still open now."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import ROUND_FLOOR, ROUND_HALF_UP, Decimal

from apps.accounting.models import UsageSegment
from apps.accounting.services import held_milli_by_job
from apps.clusters.models import ResourcePool
from apps.jobs.models import HOLDING, Job

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
GROUPS = ("tenant", "project", "owner", "pool", "accelerator_model", "job")
CENT = Decimal("0.01")


@dataclass(frozen=True)
class Row:
    key: str
    device_hours: float
    cost: Decimal


@dataclass(frozen=True)
class _Span:
    tenant: str
    project: str
    owner: str
    pool_id: int
    model: str
    job: str
    milli: int
    start: datetime
    end: datetime


def _overlap_hours(span: _Span, start: datetime, end: datetime) -> float:
    lo, hi = max(span.start, start), min(span.end, end)
    return max(0.0, (hi - lo).total_seconds()) / 3600 * span.milli / 1000


def _spans(
    tenant_ids: list[int] | None,
    start: datetime,
    end: datetime,
    now: datetime,
    job_ids: list[int] | None = None,
) -> list[_Span]:
    closed = UsageSegment.objects.filter(started_at__lt=end, ended_at__gt=start).select_related(
        "tenant", "project", "owner"
    )
    if tenant_ids is not None:
        closed = closed.filter(tenant_id__in=tenant_ids)
    if job_ids is not None:
        closed = closed.filter(job_id__in=job_ids)
    spans = [
        _Span(
            s.tenant.slug, s.project.name if s.project else "", s.owner.username if s.owner else "",
            s.pool_id, s.accelerator_model, str(s.job_id), s.device_milli, s.started_at, s.ended_at,
        )
        for s in closed
    ]  # fmt: skip
    holding = Job.objects.filter(state__in=HOLDING, admitted_at__lt=end).select_related(
        "tenant", "project", "owner"
    )
    if tenant_ids is not None:
        holding = holding.filter(tenant_id__in=tenant_ids)
    if job_ids is not None:
        holding = holding.filter(pk__in=job_ids)
    jobs = list(holding)
    held = held_milli_by_job(job.pk for job in jobs)  # one query, not one per job
    for job in jobs:
        assert job.admitted_at is not None
        for (model, since), milli in held.get(job.pk, {}).items():
            spans.append(
                _Span(
                    job.tenant.slug,
                    job.project.name if job.project else "",
                    job.owner.username if job.owner else "",
                    job.pool_id,
                    model,
                    str(job.pk),
                    milli,
                    max(since, job.admitted_at) if since else job.admitted_at,
                    now,
                )
            )
    return spans


def usage_report(
    *,
    group_by: str,
    start: datetime,
    end: datetime,
    now: datetime,
    tenant_ids: list[int] | None = None,
    job_ids: list[int] | None = None,
) -> list[Row]:
    """Device-hours and cost per group, largest first. ``tenant_ids`` (``job_ids``) None
    means every tenant (job)."""
    if group_by not in GROUPS:
        raise ValueError(f"group_by must be one of {', '.join(GROUPS)}")
    pools = list(ResourcePool.objects.only("name", "price_per_device_hour"))
    prices = {p.pk: p.price_per_device_hour for p in pools}
    pool_names = {p.pk: p.name for p in pools}
    hours: defaultdict[str, float] = defaultdict(float)
    cost: defaultdict[str, Decimal] = defaultdict(Decimal)
    for span in _spans(tenant_ids, start, end, now, job_ids):
        h = _overlap_hours(span, start, end)
        if h <= 0:
            continue
        key = {
            "tenant": span.tenant,
            "project": span.project,
            "owner": span.owner,
            "pool": pool_names.get(span.pool_id, str(span.pool_id)),
            "accelerator_model": span.model,
            "job": span.job,
        }[group_by]
        hours[key] += h
        cost[key] += Decimal(str(h)) * prices.get(span.pool_id, Decimal(0))
    cents = to_cents(cost)
    return sorted(
        (Row(k, round(v, 6), cents[k]) for k, v in hours.items()),
        key=lambda r: (-r.device_hours, r.key),
    )


def to_cents(exact: dict[str, Decimal]) -> dict[str, Decimal]:
    """Each amount rounded to the cent so that together they add up to the exact total
    rounded to the cent (largest-remainder rounding): every amount is rounded down, and the
    cents still missing go to the amounts that lost the most, ties by key. Rounding each
    amount on its own would make the total depend on the grouping (one project's 13,249.98
    was 13,250.00 by job); this way every grouping of a report adds up to the same total,
    and no amount is off by a cent or more."""
    total = sum(exact.values(), Decimal(0)).quantize(CENT, ROUND_HALF_UP)
    floors = {k: v.quantize(CENT, ROUND_FLOOR) for k, v in exact.items()}
    missing = int((total - sum(floors.values(), Decimal(0))) / CENT)
    by_loss = sorted(exact, key=lambda k: (floors[k] - exact[k], k))
    for key in by_loss[:missing]:
        floors[key] += CENT
    return floors


def job_cost(job: Job, now: datetime) -> Row:
    """Everything ``job`` has held, every attempt, up to ``now`` (a hold still open counts up
    to now), priced at its pool's rate; the key is the job's id."""
    rows = usage_report(
        group_by="job",
        start=_EPOCH,  # every hold the job ever had, whatever the clock said at submission
        end=now,
        now=now,
        tenant_ids=[job.tenant_id],
        job_ids=[job.pk],
    )
    return rows[0] if rows else Row(str(job.pk), 0.0, Decimal("0.00"))
