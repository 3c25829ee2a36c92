"""N dashboard clients as real websockets, in their own process (started by telemetry_bench.py).

Each client authenticates like the dashboard's scripts do (``bearer.<token>`` subprotocol,
an allowed Origin), subscribes to ``heatmap`` and ``cluster`` and timestamps every frame on
receipt against the frame's ``at`` (when the collector sampled the data): end-to-end latency
from sample to socket. Clients read only the frame header: decoding and drawing belong to the
browser (measured by ``make bench-heatmap``), not to the server under test. One extra verifying
socket follows the client rule of docs/websockets.md (REST snapshot on a gap, then apply deltas
whose ``base`` equals its ``seq``) to prove the stream is complete; its timings are not
counted. Prints one JSON object.

    python bench/telemetry_ws_clients.py --port 8811 --token zs_... --clients 100 --seconds 20
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import resource
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

TOPICS = ("heatmap", "cluster")
HEADER = re.compile(
    r'"topic":"([^"]*)","epoch":"([0-9a-f]*)","seq":(\d+),"base":(\d+),"at":([\d.]+)'
)


@dataclass
class Tally:
    start: float = 0.0
    end: float = 0.0
    latencies: list[float] = field(default_factory=list)
    frames: int = 0
    gaps: int = 0  # frames whose base is not the client's last seq (would trigger a resync)
    bytes: int = 0
    verified_cells: int = 0
    verified_frames: int = 0
    resyncs: int = 0


def proc_cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def self_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def snapshot(port: int, token: str, topic: str) -> dict[str, Any]:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/api/v1/telemetry/snapshot/?topic={topic}",
        headers={"Authorization": f"Bearer {token}"},
    )
    with urllib.request.urlopen(request, timeout=30) as answer:  # noqa: S310 - localhost
        frame: dict[str, Any] = json.loads(answer.read())
        return frame


async def client(
    args: argparse.Namespace, tally: Tally, verify: bool, ready: asyncio.Event
) -> None:
    url = f"ws://127.0.0.1:{args.port}/ws/v1/telemetry/"
    async with connect(
        url,
        subprotocols=[f"bearer.{args.token}"],  # type: ignore[list-item]
        origin=f"http://127.0.0.1:{args.port}",  # type: ignore[arg-type]
        compression="deflate" if args.deflate else None,
        max_size=2**26,
        max_queue=None,
        open_timeout=60,
    ) as ws:
        for topic in TOPICS:
            await ws.send(json.dumps({"action": "subscribe", "topic": topic}))
        await read(ws, args, tally, verify, ready)


async def read(
    ws: ClientConnection, args: argparse.Namespace, tally: Tally, verify: bool,
    ready: asyncio.Event,
) -> None:  # fmt: skip
    last: dict[str, tuple[str, int]] = {}
    cells: dict[str, list[int]] = {}
    seq = -1
    async for message in ws:
        received = time.time()
        if received > tally.end:
            return
        text = message if isinstance(message, str) else message.decode()
        found = HEADER.search(text, 0, 400)
        if found is None:
            continue  # subscribed acks
        ready.set()
        topic, epoch, sq, base, at = found.groups()
        if received >= tally.start and not verify:
            tally.latencies.append(received - float(at))
            tally.frames += 1
            tally.bytes += len(text)
            if topic in last and (last[topic][0] != epoch or last[topic][1] != int(base)):
                tally.gaps += 1
        last[topic] = (epoch, int(sq))
        if verify and topic == "heatmap":
            frame = json.loads(text)
            if frame["base"] != 0 and frame["seq"] <= seq:
                continue  # older than the snapshot already applied (it overtook the socket)
            if frame["base"] != 0 and frame["base"] != seq:
                snap = await asyncio.to_thread(snapshot, args.port, args.token, "heatmap")
                cells, seq = dict(snap["data"]["cells"]), snap["seq"]
                tally.resyncs += 1
            if frame["base"] == 0 or frame["base"] == seq:
                if frame["base"] == 0:
                    cells = {}
                for key in frame["data"]["removed"]:
                    cells.pop(key, None)
                cells.update(frame["data"]["cells"])
                seq = frame["seq"]
                if received >= tally.start:
                    tally.verified_frames += 1
                tally.verified_cells = len(cells)


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    tally = Tally(start=float("inf"), end=float("inf"))
    # Socket 0 is the verifier, on top of the N measured ones (it decodes every heatmap frame
    # and fetches snapshots, which a header-only client does not; its timings are not counted).
    readies = [asyncio.Event() for _ in range(args.clients + 1)]
    tasks = []
    for i in range(args.clients + 1):
        tasks.append(asyncio.create_task(client(args, tally, i == 0, readies[i])))
        if i % 10 == 9:
            await asyncio.sleep(0.05)  # connect in small waves, as dashboards arrive
    began = time.monotonic()
    while not all(r.is_set() for r in readies) and time.monotonic() - began < 60:
        failed = [t for t in tasks if t.done() and t.exception() is not None]
        if failed:
            raise RuntimeError(f"client failed: {failed[0].exception()!r}")
        await asyncio.sleep(0.2)
    connected = sum(r.is_set() for r in readies[1:])
    await asyncio.sleep(args.warmup)
    load0 = os.getloadavg()
    server0, collector0, self0 = (
        proc_cpu_s(args.server_pid),
        proc_cpu_s(args.collector_pid),
        self_cpu_s(),
    )
    tally.start = time.time()
    tally.end = tally.start + args.seconds
    await asyncio.sleep(args.seconds)
    server1, collector1, self1 = (
        proc_cpu_s(args.server_pid),
        proc_cpu_s(args.collector_pid),
        self_cpu_s(),
    )
    load1 = os.getloadavg()
    await asyncio.sleep(1.0)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    lat = sorted(tally.latencies)

    def q(p: float) -> float:
        return round(1000 * lat[min(len(lat) - 1, int(p * len(lat)))]) if lat else -1

    return {
        "clients": args.clients,
        "connected": connected,
        "deflate": args.deflate,
        "frames_per_s": round(tally.frames / args.seconds, 1),
        "expected_frames_per_s": args.clients * len(TOPICS),
        "p50_ms": q(0.50),
        "p99_ms": q(0.99),
        "max_ms": round(1000 * lat[-1]) if lat else -1,
        "gaps": tally.gaps,
        "mbytes_per_s": round(tally.bytes / args.seconds / 1e6, 1),
        "server_cpu_pct": round(100 * (server1 - server0) / args.seconds),
        "collector_cpu_pct": round(100 * (collector1 - collector0) / args.seconds),
        "clients_cpu_pct": round(100 * (self1 - self0) / args.seconds),
        "verified_heatmap_cells": tally.verified_cells,
        "verified_frames": tally.verified_frames,
        "verifier_resyncs": tally.resyncs,
        "load_avg_1m": [round(load0[0], 1), round(load1[0], 1)],
        "window": [tally.start, tally.start + args.seconds],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--clients", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--warmup", type=float, default=3)
    parser.add_argument("--server-pid", type=int, required=True)
    parser.add_argument("--collector-pid", type=int, required=True)
    parser.add_argument("--deflate", action="store_true", help="offer permessage-deflate")
    args = parser.parse_args()
    print(json.dumps(asyncio.run(main_async(args))))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
