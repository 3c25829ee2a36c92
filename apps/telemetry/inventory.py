"""The simulated cluster's inventory from the database: nodes, devices, and who runs where.

A GPU listed in an Allocation of a *running* job is busy (a notebook's only lightly: its user is
mostly reading and typing); everything else idles. The same map
(GPU -> job, tenant, pool) labels frames for authorization, whatever the source is.
"""

from __future__ import annotations

from typing import cast

from apps.clusters.backends.spec import WorkloadKind, namespace_for, workload_name
from apps.clusters.models import Device, Node, Vendor
from apps.jobs.models import Allocation, JobKind, JobState
from apps.telemetry.sources.simulated import GpuSlot, Inventory, NodeSlot


def load_inventory() -> Inventory:
    nodes = list(
        Node.objects.exclude(accelerator_vendor=Vendor.NONE)
        .order_by("name")
        .values("id", "name", "pool_id", "accelerator_model", "accelerator_count")
    )
    uuids = {
        (row["node_id"], row["index"]): row["uuid"]
        for row in Device.objects.values("node_id", "index", "uuid")
    }
    running: dict[tuple[int, int], tuple[int, str, str, int, str, bool]] = {}
    allocations = Allocation.objects.filter(job__state=JobState.RUNNING).values(
        "node_id",
        "devices",
        "replica_group",
        "replica_index",
        "job_id",
        "job__kind",
        "job__tenant_id",
        "job__tenant__slug",
    )
    for row in allocations:
        job_id = int(row["job_id"])
        name = workload_name(job_id, cast(WorkloadKind, row["job__kind"]))
        pod = f"{name}-{row['replica_group']}-{row['replica_index']}"
        for index in cast(list[int], row["devices"]) or []:
            running[(int(row["node_id"]), int(index))] = (
                job_id,
                pod,
                namespace_for(str(row["job__tenant__slug"])),
                int(row["job__tenant_id"]),
                str(row["job__tenant__slug"]),
                row["job__kind"] == JobKind.NOTEBOOK,
            )
    gpus: list[GpuSlot] = []
    node_slots: list[NodeSlot] = []
    for node in nodes:
        node_id = int(node["id"])
        node_slots.append(NodeSlot(hostname=str(node["name"]), pool_id=node["pool_id"]))
        for index in range(int(node["accelerator_count"])):
            job = running.get((node_id, index))
            gpus.append(
                GpuSlot(
                    hostname=str(node["name"]),
                    gpu=index,
                    model_name=str(node["accelerator_model"]),
                    uuid=uuids.get((node_id, index), ""),
                    job_id=job[0] if job else None,
                    pod=job[1] if job else "",
                    namespace=job[2] if job else "",
                    tenant_id=job[3] if job else None,
                    pool_id=node["pool_id"],
                    interactive=job[5] if job else False,
                )
            )
    return Inventory(gpus=tuple(gpus), nodes=tuple(node_slots))
