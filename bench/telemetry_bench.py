"""Telemetry benchmark (not a test): 10,000 GPUs x the DCGM + node metric set at 1 Hz, from the
simulated source through the production layout out to 1, 10 and 100 real websocket clients,
against a naive per-sample group_send baseline.

    .venv/bin/python bench/telemetry_bench.py [--gpus 10000] [--seconds 20] \
        [--clients 1,10,100,100] [--port 8811] [--redis-db 13] [--no-deflate] [--server-deflate]

Processes, as in production (ARCHITECTURE.md) with REDIS_URL set:

* server: ``manage.py serve`` (uvicorn, the project's ASGI app, no embedded worker), Redis
  channel layers as configured (frames on the ``telemetry`` pub/sub layer); a throwaway SQLite
  database holds the admin user and its API token;
* collector: ``Collector().tick()`` once a second on the simulated source (rollups off:
  they write PostgreSQL every 10 s and are not on the frame path);
* clients: ``bench/telemetry_ws_clients.py``, N websockets in one separate asyncio process.

Everything uses Redis database ``--redis-db`` (emptied with FLUSHDB before and after; never
FLUSHALL), so the shared Redis's other databases are not touched.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def bench_env(data_dir: str, redis_db: int) -> dict[str, str]:
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.dev",
        "ZS_DATA_DIR": data_dir,
        "REDIS_URL": f"redis://127.0.0.1:6379/{redis_db}",
        "ZS_EMBEDDED_WORKER": "0",
        "ZS_WS_COMPRESSION": "0",  # the server's default; --server-deflate turns it on
        "ZS_DEBUG": "0",
        "ZS_LOG_LEVEL": "WARNING",
        "DATABASE_URL": "",
    }


def inventory(gpus: int):  # type: ignore[no-untyped-def]  # imported after django.setup()
    from apps.telemetry.sources.simulated import GpuSlot, Inventory, NodeSlot

    nodes = gpus // 8
    slots = tuple(
        GpuSlot(hostname=f"node-{n:05d}", gpu=g, model_name="A800",
                job_id=1 + n // 4 if n % 10 < 6 else None, tenant_id=1 + n % 3, pool_id=1)
        for n in range(nodes) for g in range(8)
    )  # fmt: skip
    return Inventory(gpus=slots, nodes=tuple(NodeSlot(f"node-{n:05d}") for n in range(nodes)))


def run_collector(gpus: int, ticks_path: str) -> None:
    """The production collector loop: one Collector, tick once a second, single publisher."""
    import django

    django.setup()
    from apps.telemetry.collector import Collector
    from apps.telemetry.sources.simulated import SimulatedSource

    inv = inventory(gpus)
    collector = Collector(
        source=SimulatedSource(inventory=lambda: inv, seed=1), inventory=lambda: inv,
        rollups=False,
    )  # fmt: skip
    stop = False

    def on_term(*_: object) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, on_term)
    with open(ticks_path, "a") as out:
        while not stop:
            began = time.monotonic()
            collector.tick()
            spent = time.monotonic() - began
            out.write(json.dumps({"t": time.time(), "tick_s": round(spent, 4)}) + "\n")
            out.flush()
            time.sleep(max(0.05, 1.0 - spent))


def prepare(env: dict[str, str]) -> str:
    """Migrate the throwaway database; an admin (sees the whole heatmap) and its token."""
    script = (
        "import django; django.setup()\n"
        "from django.core.management import call_command\n"
        "call_command('migrate', verbosity=0)\n"
        "from apps.accounts.models import User\n"
        "from apps.accounts.services import create_token\n"
        "u = User.objects.create_user(username='bench-admin', email='b@example.com',"
        " password='x-bench-only-9', is_platform_admin=True)\n"
        "print(create_token(user=u, name='bench')[1])\n"
    )
    done = subprocess.run(  # noqa: S603 - our interpreter, fixed arguments
        [sys.executable, "-c", script], env=env, cwd=ROOT, capture_output=True, text=True,
        check=True,
    )  # fmt: skip
    return done.stdout.strip().splitlines()[-1]


def wait_port(port: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise RuntimeError(f"server did not listen on {port}")


def flushdb(redis_db: int) -> None:
    import redis

    redis.Redis.from_url(f"redis://127.0.0.1:6379/{redis_db}").flushdb()


def tick_stats(path: str, start: float, end: float) -> dict[str, float]:
    ticks = [json.loads(line) for line in Path(path).read_text().splitlines() if line]
    inside = sorted(t["tick_s"] for t in ticks if start <= t["t"] <= end)
    if not inside:
        return {}
    return {"ticks_per_s": round(len(inside) / (end - start), 2),
            "tick_p50_ms": round(1000 * inside[len(inside) // 2]),
            "tick_max_ms": round(1000 * inside[-1])}  # fmt: skip


def cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def run_naive(gpus: int, redis_db: int, seconds: float) -> dict[str, float]:
    """Baseline: one group_send per sample to one client's group, as fast as it goes."""
    from channels_redis.core import RedisChannelLayer

    from apps.telemetry.sources.simulated import SimulatedSource

    inv = inventory(gpus)
    layer = RedisChannelLayer(
        hosts=[f"redis://127.0.0.1:6379/{redis_db}"], prefix="zs-bench", capacity=100_000
    )
    ch = await layer.new_channel()
    await layer.group_add("naive", ch)
    collection = SimulatedSource(inventory=lambda: inv, seed=1).collect()
    sent, t0, cpu0 = 0, time.monotonic(), cpu_s()
    while time.monotonic() - t0 < seconds:
        for g in collection.gpus[:100]:
            for name, value in g.values.items():
                await layer.group_send("naive", {"type": "s", "k": g.key, "m": name, "v": value})
                sent += 1
    wall = time.monotonic() - t0
    await layer.group_discard("naive", ch)
    await layer.flush()
    await layer.close_pools()
    return {"samples_per_s": sent / wall, "cpu_pct": 100 * (cpu_s() - cpu0) / wall}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpus", type=int, default=10_000)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--clients", default="1,10,100,100")
    parser.add_argument("--port", type=int, default=8811)
    parser.add_argument("--redis-db", type=int, default=13)
    parser.add_argument(
        "--no-deflate", action="store_true",
        help="clients do not offer permessage-deflate (browsers do, so the default offers it)",
    )  # fmt: skip
    parser.add_argument(
        "--server-deflate", action="store_true",
        help="run the server with ZS_WS_COMPRESSION=1 (off by default, as in production)",
    )  # fmt: skip
    parser.add_argument("--naive-seconds", type=float, default=5)
    parser.add_argument("--role", choices=["main", "collector"], default="main")
    parser.add_argument("--ticks", default="")
    parser.add_argument("--profile-server", default="", help="cProfile the server into this file")
    args = parser.parse_args()
    if args.role == "collector":
        run_collector(args.gpus, args.ticks)
        return

    data_dir = tempfile.mkdtemp(prefix="zs-tlm-bench-")
    env = bench_env(data_dir, args.redis_db)
    if args.server_deflate:
        env["ZS_WS_COMPRESSION"] = "1"
    os.environ.update(env)
    flushdb(args.redis_db)
    token = prepare(env)
    ticks = str(Path(data_dir) / "ticks.jsonl")
    server_log = open(Path(data_dir) / "server.log", "w")  # noqa: SIM115 - open while it runs
    server = subprocess.Popen(  # noqa: S603 - our interpreter, fixed arguments
        [sys.executable]
        + (["-m", "cProfile", "-o", args.profile_server] if args.profile_server else [])
        + ["manage.py", "serve", "--port", str(args.port)], env=env, cwd=ROOT,
        stdout=server_log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    collector = subprocess.Popen(  # noqa: S603 - our interpreter, fixed arguments
        [sys.executable, __file__, "--role", "collector", "--gpus", str(args.gpus),
         "--ticks", ticks], env=env, cwd=ROOT,
    )  # fmt: skip
    failed = False
    try:
        wait_port(args.port)
        for n in (int(c) for c in args.clients.split(",")):
            command = [
                sys.executable, str(ROOT / "bench" / "telemetry_ws_clients.py"),
                "--port", str(args.port), "--token", token, "--clients", str(n),
                "--seconds", str(args.seconds), "--server-pid", str(server.pid),
                "--collector-pid", str(collector.pid),
            ] + ([] if args.no_deflate else ["--deflate"])  # fmt: skip
            done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)  # noqa: S603
            if done.returncode != 0:
                print(json.dumps({"clients": n, "error": done.stderr.strip()[-800:],
                                  "server_log": str(Path(data_dir) / "server.log")}))  # fmt: skip
                failed = True
                continue
            row = json.loads(done.stdout.strip().splitlines()[-1])
            start, end = row.pop("window")
            row.update(tick_stats(ticks, start, end))
            # Frames the collector produced for these sockets in the window (it may tick
            # slower than 1 Hz when starved of CPU): delivered / produced shows fan-out losses.
            row["produced_frames_per_s"] = round(n * 2 * row.get("ticks_per_s", 0), 1)
            print(json.dumps(row), flush=True)
            time.sleep(2)  # let the sockets of this round close before the next one
    finally:
        collector.send_signal(signal.SIGTERM)
        server.send_signal(signal.SIGINT)
        for proc in (collector, server):
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()

    import django

    django.setup()
    from apps.telemetry import metrics as m

    naive = asyncio.run(run_naive(args.gpus, args.redis_db, args.naive_seconds))
    flushdb(args.redis_db)
    if not failed:  # keep the server log and tick times of a failed run for reading
        shutil.rmtree(data_dir, ignore_errors=True)
    needed = args.gpus * len(m.GPU_METRICS)
    print(json.dumps({"naive_samples_per_s_1_client": round(naive["samples_per_s"]),
                      "naive_cpu_pct": round(naive["cpu_pct"], 1),
                      "gpu_samples_per_s_needed": needed,
                      "naive_shortfall_x": round(needed / naive["samples_per_s"], 1),
                      "load_avg": [round(x, 1) for x in os.getloadavg()]}))  # fmt: skip


if __name__ == "__main__":
    main()
