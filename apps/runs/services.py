"""The write path for runs: create and update runs, ingest metrics, register checkpoints.

Metric ingest is idempotent per (run, key, step): a point whose step a series already has is
ignored (the first value wins), so an SDK may re-send a batch after a lost response without
creating duplicates. On PostgreSQL one statement inserts the points, updates the rollups from
the rows it actually inserted and updates the series summaries; elsewhere (SQLite in the
embedded default) a portable path does the same work with the ORM.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from apps.accounts.models import User
from apps.jobs.models import Job
from apps.runs.models import (
    ROLLUP_SHIFTS,
    Checkpoint,
    CheckpointState,
    MetricKey,
    MetricPoint,
    MetricRollup,
    Run,
    RunState,
)
from apps.runs.selectors import checkpoint_request
from apps.sweeps.models import Trial
from apps.tenancy.models import Project, Tenant

MAX_KEYS_PER_RUN = 1000


class IngestError(ValueError):
    """Input the API layer could not have caught alone (e.g. too many series in a run)."""

    def __init__(self, errors: dict[str, list[str]]) -> None:
        super().__init__(errors)
        self.errors = errors


@dataclass(frozen=True)
class IngestResult:
    received: int
    stored: int

    @property
    def duplicates(self) -> int:
        return self.received - self.stored


# (key name, step, value): one validated metric value.
Point = tuple[str, int, float]


@transaction.atomic
def create_run(
    *,
    tenant: Tenant,
    owner: User | None,
    name: str,
    project: Project | None = None,
    job: Job | None = None,
    config: dict[str, Any] | None = None,
    tags: Sequence[str] = (),
) -> Run:
    """A new run (standalone, or a job's: see ``ensure_run_for_job``)."""
    return Run.objects.create(
        tenant=tenant,
        owner=owner,
        name=name,
        project=project,
        job=job,
        config=dict(config or {}),
        tags=list(dict.fromkeys(tags)),
    )


@transaction.atomic
def ensure_run_for_job(job: Job) -> Run:
    """The run of a job, created on first dispatch. One run per job: a restarted attempt
    resumes the same curves from its checkpoint, so steps it repeats keep their first value."""
    run, _ = Run.objects.get_or_create(
        job=job,
        defaults={
            "tenant_id": job.tenant_id,
            "owner_id": job.owner_id,
            "project_id": job.project_id,
            "name": job.name,
            # A sweep's trial starts with its values as hyperparameters, so runs compare by
            # them whether or not the job's code reports its config.
            "config": trial_params(job) or {},
        },
    )
    return run


def trial_params(job: Job) -> dict[str, Any] | None:
    """The parameter values of the sweep trial this job runs, or None for other jobs."""
    return Trial.objects.filter(job=job).values_list("params", flat=True).first()


@transaction.atomic
def take_over_from_simulator(run: Run) -> None:
    """The job's own process reports: the simulated cluster's made-up curves make way, so its
    steps are not taken for duplicates of the simulator's (the first value of a step wins)."""
    locked = Run.objects.select_for_update().get(pk=run.pk)
    if locked.simulated:
        keys = list(MetricKey.objects.filter(run=locked).values_list("pk", flat=True))
        MetricPoint.objects.filter(key_id__in=keys).delete()
        MetricRollup.objects.filter(key_id__in=keys).delete()
        MetricKey.objects.filter(pk__in=keys).delete()
        Run.objects.filter(pk=run.pk).update(simulated=False, updated_at=timezone.now())
    run.simulated = False


@transaction.atomic
def update_run(
    *,
    run: Run,
    config: dict[str, Any] | None = None,
    merge_config: bool = True,
    tags: Sequence[str] | None = None,
    add_tags: Sequence[str] | None = None,
    state: RunState | None = None,
) -> Run:
    """Change hyperparameters (merged into the stored ones by default), tags (``tags``
    replaces them, ``add_tags`` adds to them, under the row lock) or state."""
    run = Run.objects.select_for_update().get(pk=run.pk)
    if config is not None:
        run.config = {**run.config, **config} if merge_config else dict(config)
    if tags is not None:
        run.tags = list(dict.fromkeys(tags))
    if add_tags:
        run.tags = list(dict.fromkeys([*run.tags, *add_tags]))
    if state is not None:
        run.state = state
    run.updated_at = timezone.now()
    run.save(update_fields=["config", "tags", "state", "updated_at"])
    return run


def _resolve_keys(run: Run, names: Iterable[str]) -> dict[str, tuple[int, int | None]]:
    """``{name: (id, last step)}`` of the named series of ``run`` (created when new), locked
    in id order: concurrent batches of one run serialise instead of deadlocking on rollup
    rows, and the last steps read here stay true until the batch commits."""
    wanted = set(names)

    def locked() -> dict[str, tuple[int, int | None]]:
        rows = (
            MetricKey.objects.select_for_update()
            .filter(run=run, name__in=wanted)
            .order_by("id")
            .values_list("name", "id", "last_step")
        )
        return {name: (pk, last) for name, pk, last in rows}

    keys = locked()
    missing = wanted - keys.keys()
    if not missing:
        return keys
    total = MetricKey.objects.filter(run=run).count()
    if total + len(missing) > MAX_KEYS_PER_RUN:
        raise IngestError(
            {"points": [f"A run has at most {MAX_KEYS_PER_RUN} metric keys; it has {total}."]}
        )
    MetricKey.objects.bulk_create(
        [MetricKey(run=run, name=n) for n in sorted(missing)], ignore_conflicts=True
    )
    return locked()


# Shared by both statements (it closes their ``l3`` CTE): coarser rollup levels derived from
# the finest one (per key and 8-step bucket, ``mn``/``mx`` as [value, step]), merged into the
# rollup table. Constant text only: nothing from a request is ever formatted into SQL.
_ROLLUP_CTES = """
), levels AS (
    SELECT key_id, 3 AS lvl, bucket, mn, mx, n FROM l3
    UNION ALL
    SELECT key_id, l.lvl, bucket >> (l.lvl - 3), min(mn), max(mx), sum(n)::bigint
    FROM l3 CROSS JOIN unnest(%s::int[]) AS l(lvl)
    GROUP BY key_id, l.lvl, bucket >> (l.lvl - 3)
), roll AS (
    INSERT INTO runs_metricrollup AS r (key_id, level, bucket, vmin, smin, vmax, smax, n)
    SELECT key_id, lvl, bucket, mn[1], mn[2]::bigint, mx[1], mx[2]::bigint, n
    FROM levels ORDER BY 1, 2, 3
    ON CONFLICT (key_id, level, bucket) DO UPDATE SET
        smin = CASE WHEN EXCLUDED.vmin < r.vmin THEN EXCLUDED.smin ELSE r.smin END,
        vmin = LEAST(r.vmin, EXCLUDED.vmin),
        smax = CASE WHEN EXCLUDED.vmax > r.vmax THEN EXCLUDED.smax ELSE r.smax END,
        vmax = GREATEST(r.vmax, EXCLUDED.vmax),
        n = r.n + EXCLUDED.n
)"""

assert ROLLUP_SHIFTS[0] == 3, "_PG_INGEST builds the finest rollup level (3) by hand"
_PG_INGEST = (
    """
WITH data AS (
    SELECT d.key_id, d.step, d.value
    FROM unnest(%s::bigint[], %s::bigint[], %s::float8[]) AS d(key_id, step, value)
    ORDER BY d.key_id, d.step
), ins AS (
    INSERT INTO runs_metricpoint (key_id, step, value)
    SELECT key_id, step, value FROM data
    ON CONFLICT (key_id, step) DO NOTHING
    RETURNING key_id, step, value
), l3 AS (
    -- the finest level straight from the inserted rows; coarser levels from these groups
    SELECT key_id, step >> 3 AS bucket,
           min(ARRAY[value, step::float8]) AS mn, max(ARRAY[value, step::float8]) AS mx,
           count(*) AS n
    FROM ins GROUP BY 1, 2
"""
    + _ROLLUP_CTES
    + """, summary AS (
    SELECT key_id, count(*) AS n, min(step) AS lo, max(step) AS hi,
           (max(ARRAY[step::float8, value]))[2] AS lv
    FROM ins GROUP BY key_id
)
UPDATE runs_metrickey k SET
    count = k.count + s.n,
    first_step = LEAST(k.first_step, s.lo),
    last_value = CASE WHEN k.last_step IS NULL OR s.hi >= k.last_step
                      THEN s.lv ELSE k.last_value END,
    last_step = GREATEST(k.last_step, s.hi)
FROM summary s WHERE k.id = s.key_id
RETURNING s.n
"""
)


# Points past a series' last step cannot exist yet (the series rows are locked), so they are
# inserted without conflict checks; the client side (this process) computes their finest
# rollup level and the series summaries, and the statement derives the coarser levels.
_PG_APPEND = (
    """
WITH pts AS (
    INSERT INTO runs_metricpoint (key_id, step, value)
    SELECT * FROM unnest(%s::bigint[], %s::bigint[], %s::float8[])
), l3 AS (
    SELECT key_id, bucket, ARRAY[vmin, smin::float8] AS mn, ARRAY[vmax, smax::float8] AS mx, n
    FROM unnest(%s::bigint[], %s::bigint[], %s::float8[], %s::bigint[], %s::float8[],
                %s::bigint[], %s::bigint[]) AS g(key_id, bucket, vmin, smin, vmax, smax, n)
"""
    + _ROLLUP_CTES
    + """
UPDATE runs_metrickey k SET
    count = k.count + s.n,
    first_step = LEAST(k.first_step, s.lo),
    last_value = s.lv,
    last_step = s.hi
FROM unnest(%s::bigint[], %s::bigint[], %s::bigint[], %s::bigint[], %s::float8[])
     AS s(key_id, n, lo, hi, lv)
WHERE k.id = s.key_id
"""
)


def _ints(xs: Iterable[int]) -> str:
    """A PostgreSQL array literal: psycopg adapts Python lists element by element, which
    costs several times more client CPU than joining the text."""
    return "{" + ",".join(map(str, xs)) + "}"


def _floats(xs: Iterable[float]) -> str:
    return "{" + ",".join(map(repr, xs)) + "}"  # repr round-trips every finite float


def _append_postgres(rows: dict[tuple[int, int], float]) -> int:
    """Insert points that are past their series' last step (so none exists yet)."""
    cells: dict[tuple[int, int], list[float]] = {}
    summary: dict[int, list[float]] = {}  # key -> [n, lo, hi, last value]
    for (k, st), v in rows.items():
        cell = cells.get((k, st >> 3))
        if cell is None:
            cells[(k, st >> 3)] = [v, st, v, st, 1]
        else:
            if v < cell[0] or (v == cell[0] and st < cell[1]):
                cell[0], cell[1] = v, st
            if v > cell[2] or (v == cell[2] and st > cell[3]):
                cell[2], cell[3] = v, st
            cell[4] += 1
        sm = summary.get(k)
        if sm is None:
            summary[k] = [1, st, st, v]
        else:
            sm[0] += 1
            if st < sm[1]:
                sm[1] = st
            if st > sm[2]:
                sm[2], sm[3] = st, v
    groups = list(cells.items())
    keys = list(summary.items())
    params = [
        _ints(k for k, _ in rows),
        _ints(st for _, st in rows),
        _floats(rows.values()),
        _ints(k for (k, _), _ in groups),
        _ints(b for (_, b), _ in groups),
        _floats(c[0] for _, c in groups),
        _ints(int(c[1]) for _, c in groups),
        _floats(c[2] for _, c in groups),
        _ints(int(c[3]) for _, c in groups),
        _ints(int(c[4]) for _, c in groups),
        _ints(ROLLUP_SHIFTS[1:]),
        _ints(k for k, _ in keys),
        _ints(int(sm[0]) for _, sm in keys),
        _ints(int(sm[1]) for _, sm in keys),
        _ints(int(sm[2]) for _, sm in keys),
        _floats(sm[3] for _, sm in keys),
    ]
    with connection.cursor() as cur:
        cur.execute(_PG_APPEND, params)
    return len(rows)


def _ingest_postgres(key_ids: list[int], steps: list[int], values: list[float]) -> int:
    """Re-sent or back-filled points (at or before a series' last step): conflicts are
    ignored and rollups are built from the rows actually inserted."""
    with connection.cursor() as cur:
        cur.execute(
            _PG_INGEST,
            [_ints(key_ids), _ints(steps), _floats(values), _ints(ROLLUP_SHIFTS[1:])],
        )
        return sum(int(row[0]) for row in cur.fetchall())


def _ingest_portable(key_ids: list[int], steps: list[int], values: list[float]) -> int:
    """The same effect as ``_PG_INGEST`` with the ORM; runs under the keys' locks."""
    fresh: dict[tuple[int, int], float] = {}
    for k, s, v in zip(key_ids, steps, values, strict=True):
        fresh.setdefault((k, s), v)
    by_key: defaultdict[int, list[int]] = defaultdict(list)
    for k, s in fresh:
        by_key[k].append(s)
    for k, key_steps in by_key.items():
        taken = MetricPoint.objects.filter(
            key_id=k, step__gte=min(key_steps), step__lte=max(key_steps)
        ).values_list("step", flat=True)
        for s in set(taken) & set(key_steps):
            del fresh[(k, s)]
    if not fresh:
        return 0
    MetricPoint.objects.bulk_create(
        [MetricPoint(key_id=k, step=s, value=v) for (k, s), v in fresh.items()], batch_size=500
    )
    # Rollups: min/max (with their steps) per (key, level, bucket) of the inserted points.
    agg: dict[tuple[int, int, int], list[float]] = {}
    for (k, s), v in sorted(fresh.items()):
        for shift in ROLLUP_SHIFTS:
            cell = agg.get((k, shift, s >> shift))
            if cell is None:
                agg[(k, shift, s >> shift)] = [v, s, v, s, 1]
                continue
            if v < cell[0]:
                cell[0], cell[1] = v, s
            if v >= cell[2]:  # ties: the later step, as max(ARRAY[value, step]) picks
                cell[2], cell[3] = v, s
            cell[4] += 1
    for (k, shift, bucket), (vmin, smin, vmax, smax, n) in agg.items():
        row = MetricRollup.objects.filter(key_id=k, level=shift, bucket=bucket).first()
        if row is None:
            MetricRollup.objects.create(
                key_id=k, level=shift, bucket=bucket, vmin=vmin, smin=int(smin),
                vmax=vmax, smax=int(smax), n=int(n),
            )  # fmt: skip
            continue
        changes: dict[str, Any] = {"n": row.n + int(n)}
        if vmin < row.vmin:
            changes.update(vmin=vmin, smin=int(smin))
        if vmax > row.vmax:
            changes.update(vmax=vmax, smax=int(smax))
        MetricRollup.objects.filter(key_id=k, level=shift, bucket=bucket).update(**changes)
    # Series summaries.
    per_key: defaultdict[int, list[tuple[int, float]]] = defaultdict(list)
    for (k, s), v in fresh.items():
        per_key[k].append((s, v))
    for key in MetricKey.objects.filter(id__in=per_key):
        pts = per_key[key.pk]
        lo = min(s for s, _ in pts)
        hi, last = max(pts)
        key.count += len(pts)
        key.first_step = lo if key.first_step is None else min(key.first_step, lo)
        if key.last_step is None or hi >= key.last_step:
            key.last_step, key.last_value = hi, last
        key.save(update_fields=["count", "first_step", "last_step", "last_value"])
    return len(fresh)


@transaction.atomic
def ingest_metrics(*, run: Run, points: Sequence[Point], portable: bool = False) -> IngestResult:
    """Store validated points; re-sent points are ignored. ``portable`` forces the ORM path
    (always used on databases other than PostgreSQL)."""
    if not points:
        return IngestResult(received=0, stored=0)
    keys = _resolve_keys(run, {p[0] for p in points})
    if connection.vendor != "postgresql" or portable:
        key_ids = [keys[p[0]][0] for p in points]
        steps = [int(p[1]) for p in points]
        values = [float(p[2]) for p in points]
        if not all(map(math.isfinite, values)):
            raise IngestError({"points": ["Values must be finite numbers."]})
        return IngestResult(received=len(points), stored=_ingest_portable(key_ids, steps, values))
    # Split: points past their series' last step are appended without conflict checks;
    # the rest (re-sends, back-fills) go through ON CONFLICT DO NOTHING. Within the batch
    # the first value of a (key, step) wins, as it does across batches.
    fresh: dict[tuple[int, int], float] = {}
    old: dict[tuple[int, int], float] = {}
    for name, step, value in points:
        key_id, last = keys[name]
        value = float(value)
        if not math.isfinite(value):
            raise IngestError({"points": ["Values must be finite numbers."]})
        target = fresh if last is None or step > last else old
        target.setdefault((key_id, int(step)), value)
    stored = 0
    if old:
        stored += _ingest_postgres([k for k, _ in old], [st for _, st in old], list(old.values()))
    if fresh:
        stored += _append_postgres(fresh)
    return IngestResult(received=len(points), stored=stored)


class CheckpointConflictError(ValueError):
    """A shard registration that contradicts what the checkpoint already records."""


@transaction.atomic
def register_checkpoint(
    *,
    run: Run,
    step: int,
    path: str,
    rank: int = 0,
    world_size: int = 1,
    size_bytes: int = 0,
    files: Sequence[dict[str, Any]] = (),
) -> Checkpoint:
    """Record that ``rank``'s shard of the checkpoint at ``step`` is durable. Idempotent per
    (run, step, rank). The checkpoint becomes complete when every rank has registered."""
    if not 0 <= rank < world_size:
        raise CheckpointConflictError(f"rank {rank} is outside world size {world_size}")
    ckpt, _ = Checkpoint.objects.get_or_create(
        run=run,
        step=step,
        defaults={
            "tenant_id": run.tenant_id,
            "job_id": run.job_id,
            "path": path,
            "shards": world_size,
        },
    )
    ckpt = Checkpoint.objects.select_for_update().get(pk=ckpt.pk)
    if ckpt.shards != world_size:
        raise CheckpointConflictError(
            f"checkpoint at step {step} has {ckpt.shards} shards; this shard says {world_size}"
        )
    if ckpt.path != path:
        raise CheckpointConflictError(f"checkpoint at step {step} lives at {ckpt.path}, not {path}")
    shards: dict[str, Any] = dict(ckpt.manifest.get("shards") or {})
    if str(rank) not in shards:
        shards[str(rank)] = {"bytes": int(size_bytes), "files": list(files)}
        ckpt.manifest = {**ckpt.manifest, "shards": shards}
        ckpt.shards_done = len(shards)
        ckpt.size_bytes = sum(int(s.get("bytes", 0)) for s in shards.values())
        if ckpt.shards_done == ckpt.shards and ckpt.state != CheckpointState.COMPLETE:
            ckpt.state = CheckpointState.COMPLETE
            ckpt.completed_at = timezone.now()
        ckpt.save()
    return ckpt


@transaction.atomic
def request_checkpoint(*, run: Run, reason: str) -> bool:
    """Ask the run to save a checkpoint soon; True if this made a new request. The SDK hears
    of it in the answer to its next metrics batch (``zhisuan.checkpoint_requested()``). A
    request still pending keeps its time and reason (the job has been told already), so a
    repeat does not restart the wait; a request after one was served is a new one."""
    run = Run.objects.select_for_update().get(pk=run.pk)
    current = checkpoint_request(run)
    if current is not None and current.pending:
        return False
    run.checkpoint_requested_at = timezone.now()
    run.checkpoint_request_reason = reason[:200]
    run.save(update_fields=["checkpoint_requested_at", "checkpoint_request_reason"])
    return True
