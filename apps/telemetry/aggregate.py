"""From one collection to the numbers views show: GPU cells, node rates, and aggregates per
job, pool, tenant and the whole cluster. Pure Python (no Django), so the benchmark and the
tests drive exactly what the product runs.

A *cell* is one GPU quantized for display: ``(util %, FB used MiB, temp C, power W, SM %)``
as integers. Quantizing first makes deltas meaningful: a GPU whose cell did not change is
not sent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from apps.telemetry import metrics as m
from apps.telemetry.metrics import Collection

Cell = tuple[int, int, int, int, int]
CELL_FIELDS = ("util", "fb_used_mib", "temp_c", "power_w", "sm_pct")


@dataclass(frozen=True, slots=True)
class Owner:
    """Who holds a GPU right now (from Allocation rows), for scoping and aggregates."""

    job_id: int | None = None
    tenant_id: int | None = None
    pool_id: int | None = None


NOBODY = Owner()


@dataclass(slots=True)
class Agg:
    """Sum-style aggregate over GPUs; ``summary()`` turns it into display numbers."""

    gpus: int = 0
    busy: int = 0
    util_sum: float = 0.0
    fb_used_mib: float = 0.0
    power_w: float = 0.0
    temp_max: float = 0.0

    def add(self, cell: Cell, busy: bool) -> None:
        self.gpus += 1
        self.busy += int(busy)
        self.util_sum += cell[0]
        self.fb_used_mib += cell[1]
        self.power_w += cell[3]
        self.temp_max = max(self.temp_max, float(cell[2]))

    def summary(self) -> dict[str, float | int]:
        return {
            "gpus": self.gpus,
            "busy": self.busy,
            "util": round(self.util_sum / self.gpus, 1) if self.gpus else 0.0,
            "fb_used_mib": int(self.fb_used_mib),
            "power_w": round(self.power_w, 1),
            "temp_max_c": self.temp_max,
        }


@dataclass
class State:
    """Everything one tick knows; the store keeps the newest, frames are cut from it."""

    at: float
    cells: dict[str, Cell]
    owners: dict[str, Owner]
    nodes: dict[str, dict[str, float]]  # hostname -> rates and gauges
    jobs: dict[int, dict[str, float | int]] = field(default_factory=dict)
    pools: dict[int, dict[str, float | int]] = field(default_factory=dict)
    tenants: dict[int, dict[str, float | int]] = field(default_factory=dict)
    cluster: dict[str, float | int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "at": self.at,
            "cells": {k: list(v) for k, v in self.cells.items()},
            "owners": {
                k: [o.job_id, o.tenant_id, o.pool_id] for k, o in self.owners.items() if o != NOBODY
            },
            "nodes": self.nodes,
            "jobs": {str(k): v for k, v in self.jobs.items()},
            "pools": {str(k): v for k, v in self.pools.items()},
            "tenants": {str(k): v for k, v in self.tenants.items()},
            "cluster": self.cluster,
        }

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> State:
        cells = {k: (v[0], v[1], v[2], v[3], v[4]) for k, v in raw["cells"].items()}
        owners = {k: Owner(*v) for k, v in raw["owners"].items()}
        return cls(
            at=float(raw["at"]),
            cells=cells,
            owners={k: owners.get(k, NOBODY) for k in cells},
            nodes=raw["nodes"],
            jobs={int(k): v for k, v in raw["jobs"].items()},
            pools={int(k): v for k, v in raw["pools"].items()},
            tenants={int(k): v for k, v in raw["tenants"].items()},
            cluster=raw["cluster"],
        )


def cell_of(values: dict[str, float]) -> Cell:
    return (
        round(values.get(m.GPU_UTIL, 0.0)),
        round(values.get(m.FB_USED, 0.0)),
        round(values.get(m.GPU_TEMP, 0.0)),
        round(values.get(m.POWER, 0.0)),
        round(100 * values.get(m.SM_ACTIVE, 0.0)),
    )


class RateTracker:
    """node-exporter counters -> per-second rates between two collections."""

    def __init__(self) -> None:
        self._last: dict[str, tuple[float, dict[tuple[str, str], float]]] = {}

    def rates(self, collection: Collection) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {}
        for node in collection.nodes:
            prev = self._last.get(node.hostname)
            self._last[node.hostname] = (collection.at, dict(node.devices))
            total = node.values.get(m.MEM_TOTAL, 0.0)
            row = {
                "mem_used_pct": round(100 * (1 - node.values.get(m.MEM_AVAILABLE, 0.0) / total), 1)
                if total
                else 0.0
            }
            sums: dict[str, float] = {}
            if prev is not None and collection.at > prev[0]:
                dt = collection.at - prev[0]
                for key, value in node.devices.items():
                    before = prev[1].get(key)
                    if before is not None and value >= before:  # a reset is not a rate
                        name = _RATE_NAMES.get(key[0], key[0])
                        if key[0] == m.CPU_SECONDS:
                            name = f"cpu_{key[1]}"
                        sums[name] = sums.get(name, 0.0) + (value - before) / dt
            user, idle = sums.pop("cpu_user", 0.0), sums.pop("cpu_idle", 0.0)
            for k in [k for k in sums if k.startswith("cpu_")]:
                sums.pop(k)
            row["cpu_pct"] = round(100 * user / (user + idle), 1) if user + idle else 0.0
            row.update({k: round(v) for k, v in sums.items()})
            out[node.hostname] = row
        return out


_RATE_NAMES = {
    m.NET_RX: "net_rx_bps",
    m.NET_TX: "net_tx_bps",
    m.IB_RX: "ib_rx_bps",
    m.IB_TX: "ib_tx_bps",
    m.DISK_READ: "disk_read_bps",
    m.DISK_WRITTEN: "disk_write_bps",
}


def build_state(
    collection: Collection, owners: dict[str, Owner], node_rates: dict[str, dict[str, float]]
) -> State:
    cells: dict[str, Cell] = {}
    state_owners: dict[str, Owner] = {}
    jobs: dict[int, Agg] = {}
    pools: dict[int, Agg] = {}
    tenants: dict[int, Agg] = {}
    cluster = Agg()
    for sample in collection.gpus:
        key = sample.key
        cell = cell_of(sample.values)
        owner = owners.get(key, NOBODY)
        cells[key] = cell
        state_owners[key] = owner
        busy = owner.job_id is not None
        cluster.add(cell, busy)
        if owner.job_id is not None:
            jobs.setdefault(owner.job_id, Agg()).add(cell, busy)
        if owner.tenant_id is not None:
            tenants.setdefault(owner.tenant_id, Agg()).add(cell, busy)
        if owner.pool_id is not None:
            pools.setdefault(owner.pool_id, Agg()).add(cell, busy)
    return State(
        at=collection.at,
        cells=cells,
        owners=state_owners,
        nodes=node_rates,
        jobs={k: a.summary() for k, a in jobs.items()},
        pools={k: a.summary() for k, a in pools.items()},
        tenants={k: a.summary() for k, a in tenants.items()},
        cluster=cluster.summary(),
    )
