"""Telemetry pipeline benchmark (not a test): 10,000 GPUs x the DCGM + node metric set at 1 Hz
through the real pipeline (simulated source -> state -> per-view frames -> Redis channel layer)
out to 1, 10 and 100 dashboard clients, against a naive per-sample group_send baseline.

    DJANGO_SETTINGS_MODULE=config.settings.test .venv/bin/python bench/telemetry_bench.py \
        [--gpus 10000] [--seconds 10] [--clients 1,10,100]

Clients are channel-layer consumers in this process that do what the websocket consumer does
(receive, coalesce, decode, apply); the websocket write itself is not included.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")

import django

django.setup()

from channels_redis.core import RedisChannelLayer  # noqa: E402
from django.conf import settings  # noqa: E402

from apps.telemetry import metrics as m  # noqa: E402
from apps.telemetry.aggregate import Owner, RateTracker, build_state  # noqa: E402
from apps.telemetry.frames import FrameCutter, View, apply, encode, merge  # noqa: E402
from apps.telemetry.sources.simulated import (  # noqa: E402
    GpuSlot,
    Inventory,
    NodeSlot,
    SimulatedSource,
)


def inventory(gpus: int) -> Inventory:
    nodes = gpus // 8
    slots = tuple(
        GpuSlot(hostname=f"node-{n:05d}", gpu=g, model_name="A800",
                job_id=1 + n // 4 if n % 10 < 6 else None, tenant_id=1 + n % 3, pool_id=1)
        for n in range(nodes) for g in range(8)
    )  # fmt: skip
    return Inventory(gpus=slots, nodes=tuple(NodeSlot(f"node-{n:05d}") for n in range(nodes)))


def cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def pct(values: list[float], q: float) -> float:
    return sorted(values)[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


async def run_pipeline(inv: Inventory, clients: int, seconds: int) -> dict[str, float]:
    layer = RedisChannelLayer(hosts=[settings.TEST_REDIS_URL], prefix="zs-bench", capacity=100)
    source = SimulatedSource(inventory=lambda: inv, seed=1)
    owners = {f"{g.hostname}:{g.gpu}": Owner(g.job_id, g.tenant_id, g.pool_id) for g in inv.gpus}
    rates, cutter = RateTracker(), FrameCutter()
    views = [View("heatmap", "heatmap"), View("cluster", "cluster")]
    channels = [await layer.new_channel() for _ in range(clients)]
    for ch in channels:
        for v in views:
            await layer.group_add(v.group, ch)
    latencies: list[float] = []
    delivered = 0
    stop = asyncio.Event()

    async def client(ch: str) -> None:
        nonlocal delivered
        state: dict[str, dict[str, list[int]]] = {}
        while not stop.is_set():
            try:
                msg = await asyncio.wait_for(layer.receive(ch), 0.5)
            except TimeoutError:
                continue
            frame = json.loads(msg["text"])
            pending = [frame]  # coalesce: anything already queued merges into one frame
            while True:
                try:
                    more = await asyncio.wait_for(layer.receive(ch), 0.0001)
                except TimeoutError:
                    break
                nxt = json.loads(more["text"])
                if nxt["topic"] == pending[-1]["topic"]:
                    pending[-1] = merge(pending[-1], nxt)
                else:
                    pending.append(nxt)
            for f in pending:
                state[f["topic"]] = apply(state.get(f["topic"], {}), f)
                latencies.append(time.time() - f["at"])
                delivered += 1

    tasks = [asyncio.create_task(client(ch)) for ch in channels]
    cpu0, t0 = cpu_s(), time.monotonic()
    samples, tick_times = 0, []
    for i in range(seconds):
        began = time.monotonic()
        collection = source.collect()
        samples += len(collection.gpus) * len(m.GPU_METRICS) + sum(
            len(n.values) + len(n.devices) for n in collection.nodes
        )
        state = build_state(collection, owners, rates.rates(collection))
        for view, frame in cutter.cut(state, views):
            await layer.group_send(view.group, {"type": "telemetry.frame", "topic": view.topic,
                                                "text": encode(frame)})  # fmt: skip
        tick_times.append(time.monotonic() - began)
        await asyncio.sleep(max(0.0, t0 + i + 1 - time.monotonic()))
    await asyncio.sleep(2)
    stop.set()
    await asyncio.gather(*tasks)
    wall = time.monotonic() - t0
    for ch in channels:
        for v in views:
            await layer.group_discard(v.group, ch)
    await layer.close_pools()
    return {
        "clients": clients,
        "samples_per_s": samples / seconds,
        "frames_per_s": delivered / seconds,
        "expected_frames_per_s": clients * len(views),
        "p50_ms": 1000 * statistics.median(latencies) if latencies else float("nan"),
        "p99_ms": 1000 * pct(latencies, 0.99),
        "tick_ms_p50": 1000 * statistics.median(tick_times),
        "cpu_pct": 100 * (cpu_s() - cpu0) / wall,
    }


async def run_naive(inv: Inventory, seconds: float) -> dict[str, float]:
    """Baseline: one group_send per sample to one client's group, as fast as it goes."""
    layer = RedisChannelLayer(hosts=[settings.TEST_REDIS_URL], prefix="zs-bench", capacity=100_000)
    ch = await layer.new_channel()
    await layer.group_add("naive", ch)
    source = SimulatedSource(inventory=lambda: inv, seed=1)
    collection = source.collect()
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
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--clients", default="1,10,100")
    args = parser.parse_args()
    inv = inventory(args.gpus)
    for n in (int(c) for c in args.clients.split(",")):
        row = asyncio.run(run_pipeline(inv, n, args.seconds))
        print(json.dumps({k: round(v, 1) for k, v in row.items()}))
    naive = asyncio.run(run_naive(inv, 5.0))
    needed = args.gpus * len(m.GPU_METRICS)
    print(json.dumps({"naive_samples_per_s_1_client": round(naive["samples_per_s"]),
                      "naive_cpu_pct": round(naive["cpu_pct"], 1),
                      "gpu_samples_per_s_needed": needed,
                      "naive_shortfall_x": round(needed / naive["samples_per_s"], 1)}))  # fmt: skip


if __name__ == "__main__":
    main()
