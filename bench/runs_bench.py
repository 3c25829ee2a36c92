"""Training-runs benchmarks: metric ingest into PostgreSQL, chart reads over a 5-million-point
run, and two-stage checkpoint blocking time against a synchronous save.

    .venv/bin/python bench/runs_bench.py            # full run (5M points, 1 GiB checkpoint)
    .venv/bin/python bench/runs_bench.py --quick    # 500k points, 256 MiB checkpoint

It creates a throwaway database on the test PostgreSQL (DATABASE_URL's server, default
127.0.0.1:5432), migrates it, and drops it at the end. Checkpoints go to var/bench-ckpt on
the repository's disk. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def setup_database() -> str:
    import psycopg

    base = os.environ.get("DATABASE_URL") or "postgres://postgres@127.0.0.1:5432/postgres"
    server, _, _ = base.rpartition("/")
    name = f"zs_bench_runs_{os.getpid()}"
    with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    os.environ["DATABASE_URL"] = f"{server}/{name}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    import django

    django.setup()
    from django.conf import settings

    settings.DATABASES["default"]["NAME"] = name
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    return f"{server}/postgres|{name}"


def drop_database(handle: str) -> None:
    import psycopg
    from django.db import connections

    connections.close_all()
    server, name = handle.split("|")
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def bench_ingest(total_points: int, keys: int, batch_values: int) -> tuple[object, dict[str, str]]:
    from apps.runs import services
    from apps.tenancy.models import Tenant

    tenant = Tenant.objects.create(slug="bench", name="Bench")
    run = services.create_run(tenant=tenant, owner=None, name="bench-5m")
    steps_total = total_points // keys
    steps_per_batch = batch_values // keys
    rng = random.Random(0)
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute("SELECT pg_backend_pid()")
        backend = cur.fetchone()[0]
    cpu0, db0 = time.process_time(), _cpu_of(backend)
    started = time.perf_counter()
    stored = 0
    for lo in range(0, steps_total, steps_per_batch):
        points = []
        for s in range(lo, min(lo + steps_per_batch, steps_total)):
            decay = math.exp(-s / 200_000)
            points.append(("loss", s, 2.0 + 8.0 * decay + rng.gauss(0, 0.05)))
            points.append(("lr", s, 3e-4 * min(1.0, s / 2000)))
            points.append(("grad_norm", s, 1.0 + abs(rng.gauss(0, 0.3))))
            points.append(("perf/tokens_per_s", s, 24_000 + rng.gauss(0, 300)))
            points.append(("perf/mfu", s, 0.46 + rng.gauss(0, 0.01)))
        stored += services.ingest_metrics(run=run, points=points[: keys * len(points) // 5]).stored
    elapsed = time.perf_counter() - started
    client_us = (time.process_time() - cpu0) / stored * 1e6
    db_us = (_cpu_of(backend) - db0) / stored * 1e6
    rate = stored / elapsed
    return run, {
        "ingest: points stored": f"{stored:,} ({keys} keys x {steps_total:,} steps)",
        "ingest: batch": f"{batch_values:,} values",
        "ingest: service path, points/s": f"{rate:,.0f} wall (target >= 50,000)",
        "ingest: CPU per point, client / database": (
            f"{client_us:.1f} us / {db_us:.1f} us (incl. generating the points): "
            f"{1e6 / (client_us + db_us):,.0f} points/s per core pair when not contended"
        ),
    }


def _cpu_of(pid: int) -> float:
    """User + system CPU seconds of a process on this machine (the PostgreSQL backend)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def bench_ingest_http(run: object, points: int) -> dict[str, str]:
    """The HTTP path (JSON parse, validation, service) through Django's test client."""
    import json

    from django.test import Client

    from apps.accounts.models import User
    from apps.tenancy.models import Membership, Role

    user = User.objects.create(username="bench", is_platform_admin=False)
    Membership.objects.create(tenant=run.tenant, user=user, role=Role.MEMBER)  # type: ignore[attr-defined]
    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(user)
    url = f"/api/v1/tenants/bench/runs/{run.pk}/metrics/"  # type: ignore[attr-defined]
    base = 10_000_000
    started = time.perf_counter()
    sent = 0
    while sent < points:
        rows = [{"step": base + sent + i, "values": {"http/loss": 1.0 / (i + 1),
                 "http/lr": 3e-4}} for i in range(2500)]  # fmt: skip
        resp = client.post(url, data=json.dumps({"points": rows}), content_type="application/json")
        assert resp.status_code == 200, resp.content
        sent += 5000
    rate = sent / (time.perf_counter() - started)
    return {"ingest: HTTP API (JSON + validation), points/s": f"{rate:,.0f} ({sent:,} points)"}


def bench_chart(run: object, reps: int, steps: int) -> dict[str, str]:
    from django.test import Client

    from apps.accounts.models import User
    from apps.runs.selectors import metric_series

    out: dict[str, str] = {}
    for label, kwargs in (
        ("chart: loss,lr, 1,000 points, whole run", {"max_points": 1000}),
        (
            "chart: loss,lr, 1,000 points, zoom 20%",
            {
                "max_points": 1000,
                "step_min": int(steps * 0.4) - 1234,
                "step_max": int(steps * 0.6) + 777,
            },
        ),
    ):
        times = []
        for _ in range(reps):
            t = time.perf_counter()
            series = metric_series(run, ["loss", "lr"], **kwargs)  # type: ignore[arg-type]
            times.append(time.perf_counter() - t)
        n = sum(len(s.steps) for s in series.values())
        out[label] = (
            f"{statistics.median(times) * 1000:.1f} ms median, "
            f"{max(times) * 1000:.1f} ms max ({n} points; target < 200 ms)"
        )
    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(User.objects.get(username="bench"))
    url = f"/api/v1/tenants/bench/runs/{run.pk}/metrics/"  # type: ignore[attr-defined]
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        resp = client.get(url, {"keys": "loss,lr", "max_points": "1000"})
        times.append(time.perf_counter() - t)
        assert resp.status_code == 200
    out["chart: same over HTTP (GET .../metrics/)"] = (
        f"{statistics.median(times) * 1000:.1f} ms median, {max(times) * 1000:.1f} ms max"
    )
    all_keys = []
    for _ in range(reps):
        t = time.perf_counter()
        metric_series(run, [], max_points=1000)  # type: ignore[arg-type]
        all_keys.append(time.perf_counter() - t)
    out["chart: all 5 keys, 1,000 points each"] = (
        f"{statistics.median(all_keys) * 1000:.1f} ms median"
    )
    return out


def bench_checkpoint(gib: float, where: Path) -> dict[str, str]:
    import numpy as np
    from zhisuan import checkpoint as ck

    n_arrays = 16
    per = int(gib * (1 << 30)) // n_arrays // 4
    rng = np.random.default_rng(0)
    state: dict[str, Any] = {"model": {f"layer{i}": rng.standard_normal(per, dtype=np.float32)
                       for i in range(n_arrays)}, "step": 0}  # fmt: skip
    nbytes = sum(a.nbytes for a in state["model"].values())
    shutil.rmtree(where, ignore_errors=True)
    saver = ck.Checkpointer(str(where), rank=0, world_size=1, register=False)
    # synchronous baseline: copy, write, fsync, rename, manifest, before returning
    sync = saver.save_sync(state, 1)
    # two-stage: the first save allocates the staging buffers, later ones reuse them
    first = saver.save(state, 2)
    saver.wait()
    steady = []
    for step in (3, 4, 5):
        steady.append(saver.save(state, step))
        saver.wait()
    best = min(steady, key=lambda t: t.blocked_s)
    med = statistics.median(t.blocked_s for t in steady)
    writes = statistics.median(t.write_s for t in steady)
    shutil.rmtree(where, ignore_errors=True)
    ratio = f"{sync.blocked_s / med:.1f}x less blocking (target >= 50x)"
    return {
        "checkpoint: state": f"{nbytes / (1 << 30):.2f} GiB numpy ({n_arrays} arrays), {where}",
        "checkpoint: synchronous save (blocks)": f"{sync.blocked_s:.2f} s",
        "checkpoint: async save, first (allocates staging)": f"{first.blocked_s:.3f} s blocked",
        "checkpoint: async save, steady state": (
            f"{med:.3f} s blocked (median of 3; best {best.blocked_s:.3f} s); "
            f"writer {writes:.2f} s in background"
        ),
        "checkpoint: blocking, sync / async steady": (
            f"{ratio}; first save {sync.blocked_s / first.blocked_s:.1f}x"
        ),
        "checkpoint: copy (stage 1) / write (stage 2)": (
            f"{nbytes / med / 1e9:.2f} GB/s / {nbytes / writes / 1e9:.2f} GB/s"
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--skip-db", action="store_true")
    parser.add_argument("--skip-checkpoint", action="store_true")
    args = parser.parse_args()
    total = 500_000 if args.quick else 5_000_000
    rows: dict[str, str] = {}
    if not args.skip_db:
        handle = setup_database()
        try:
            run, r = bench_ingest(total, keys=5, batch_values=5000)
            rows.update(r)
            rows.update(bench_ingest_http(run, 100_000 if not args.quick else 20_000))
            from django.db import connection

            with connection.cursor() as cur:
                cur.execute("VACUUM ANALYZE runs_metricpoint")
                cur.execute("VACUUM ANALYZE runs_metricrollup")
                cur.execute(
                    "SELECT pg_size_pretty(pg_total_relation_size('runs_metricpoint')),"
                    " pg_size_pretty(pg_total_relation_size('runs_metricrollup'))"
                )
                size_points, size_rollups = cur.fetchone()
            rows["storage: points table / rollups"] = f"{size_points} / {size_rollups}"
            rows.update(bench_chart(run, reps=7, steps=total // 5))
        finally:
            drop_database(handle)
    if not args.skip_checkpoint:
        rows.update(bench_checkpoint(0.25 if args.quick else 1.0, ROOT / "var" / "bench-ckpt"))
    width = max(len(k) for k in rows)
    print(f"{'metric':<{width}}  value")
    print(f"{'-' * width}  {'-' * 40}")
    for k, v in rows.items():
        print(f"{k:<{width}}  {v}")


if __name__ == "__main__":
    main()
