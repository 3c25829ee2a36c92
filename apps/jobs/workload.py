"""Translate a Job row (spec + allocations) into the backend-neutral WorkloadSpec."""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from typing import Any

from django.conf import settings

from apps.clusters.backends import spec as ws
from apps.clusters.registry import accelerator_resource
from apps.jobs.models import Job
from apps.runs.workload_env import job_env

_TIER = {"leaf": 1, "su": 2, "spine": 3}


def queue_name(tenant: str, pool: str) -> str:
    """The Volcano Queue of a tenant in a pool: one per (tenant, pool)."""
    return re.sub(r"[^a-z0-9-]", "-", f"zs-{tenant}-{pool}".lower())[:63].strip("-")


def notebook_token(job: Job) -> str:
    """A per-notebook token derived from the server secret, so it need not be stored."""
    return hashlib.sha256(f"{settings.SECRET_KEY}:notebook:{job.pk}".encode()).hexdigest()[:32]


def build(job: Job) -> ws.WorkloadSpec:
    spec = job.spec
    nodes: defaultdict[str, list[str]] = defaultdict(list)
    for alloc in job.allocations.select_related("node").order_by("replica_index"):
        nodes[alloc.replica_group].append(alloc.node.name)
    vendor = job.pool.nodes.values_list("accelerator_vendor", flat=True).first() or "nvidia"
    platform_env = job_env(job)  # SDK identity and ZS_RESUME_FROM (training jobs only)
    groups = tuple(
        ws.ReplicaGroup(
            name=g["name"],
            replicas=int(g.get("replicas", 1)),
            image=spec["image"],
            command=tuple(spec.get("command") or ()),
            args=tuple(spec.get("args") or ()),
            env={**(spec.get("env") or {}), **platform_env},
            accelerators=int(g.get("accelerators", 0)),
            accelerator_milli=int(g["accelerator_milli"]) if g.get("accelerator_milli") else None,
            accelerator_resource=accelerator_resource(vendor) or "nvidia.com/gpu",
            cpu_milli=int(g.get("cpu_milli") or 1000),
            memory_mib=int(g.get("memory_mib") or 1024),
            rdma_nics=int(g.get("rdma_nics", 0)),
            node_names=tuple(nodes.get(g["name"], ())),
        )
        for g in spec["replica_groups"]
    )
    topo = spec.get("topology") or {}
    notebook = spec.get("notebook")
    inference = spec.get("inference")
    return ws.WorkloadSpec(
        job_id=job.pk,
        name=job.name,
        tenant=job.tenant.slug,
        kind=job.kind,  # type: ignore[arg-type]  # validated choices
        priority=job.priority,
        pool=job.pool.name,
        queue=queue_name(job.tenant.slug, job.pool.name),
        replica_groups=groups,
        topology_mode=topo.get("mode", "none"),
        topology_highest_tier=_TIER.get(topo.get("highest_tier", "")),
        max_retry=job.max_retries,
        volumes=tuple(
            ws.VolumeMount(
                name=v["name"],
                claim_name=v["claim"],
                mount_path=v["mount_path"],
                read_only=bool(v.get("read_only", False)),
            )
            for v in spec.get("volumes") or []
        ),
        notebook=(
            ws.NotebookSpec(
                flavor=notebook.get("flavor", "jupyter"),
                token=notebook_token(job),
                storage_gib=int(notebook.get("storage_gib", ws.DEFAULT_NOTEBOOK_STORAGE_GIB)),
                home_job_id=notebook.get("home_job"),
            )
            if job.kind == "notebook"
            else None
        ),
        inference=_inference(inference or {}, groups[0].replicas)
        if job.kind == "inference"
        else None,
    )


# Rollout and probe settings of an inference job's spec; absent keys keep InferenceSpec's
# defaults (jobs submitted before these were stored).
_INFERENCE_INTS = (
    "port", "probe_initial_delay_s", "probe_period_s", "max_surge", "max_unavailable",
    "startup_timeout_s", "revision",
)  # fmt: skip
_INFERENCE_PATHS = ("readiness_path", "liveness_path")


def _inference(values: dict[str, Any], replicas: int) -> ws.InferenceSpec:
    fields: dict[str, Any] = {k: int(values[k]) for k in _INFERENCE_INTS if k in values}
    fields.update({k: str(values[k]) for k in _INFERENCE_PATHS if k in values})
    return ws.InferenceSpec(replicas=replicas, **fields)
