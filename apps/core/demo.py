"""Demo data for the embedded default: a platform admin, two tenants, one simulated cluster.

The demo passwords are printed by ``make run`` and are meant for a laptop, never production
(``seed_demo`` refuses to run under production settings).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.utils import timezone

from apps.accounts.models import User
from apps.clusters.backends.spec import DEFAULT_NOTEBOOK_STORAGE_GIB
from apps.clusters.models import Arch, Cluster, ClusterKind, Device, Node, ResourcePool, Vendor
from apps.core.demo_history import seed_history
from apps.jobs.models import Job, JobKind
from apps.jobs.services import submit_job
from apps.quotas.models import Quota
from apps.sweeps import services as sweeps
from apps.sweeps.api.serializers import SweepSerializer
from apps.tenancy.models import Membership, Project, Role, Tenant

DEMO_PASSWORD = "zhisuan-demo"  # noqa: S105 - documented demo login for the local default


@dataclass(frozen=True)
class DemoUser:
    username: str
    display_name: str
    tenant: str | None
    role: Role | None


DEMO_USERS = (
    DemoUser("admin", "Platform Admin", None, None),
    DemoUser("alice", "Alice (vision admin)", "vision", Role.TENANT_ADMIN),
    DemoUser("bob", "Bob (vision researcher)", "vision", Role.MEMBER),
    DemoUser("victor", "Victor (vision viewer)", "vision", Role.VIEWER),
    DemoUser("carol", "Carol (nlp admin)", "nlp", Role.TENANT_ADMIN),
    DemoUser("dave", "Dave (nlp researcher)", "nlp", Role.MEMBER),
)
DEMO_TENANTS = {
    "vision": ("Vision Lab", "Computer vision: detection and video models."),
    "nlp": ("NLP Lab", "Large language model pre-training and serving."),
}


@dataclass(frozen=True)
class PoolShape:
    name: str
    description: str
    vendor: Vendor
    model: str
    arch: Arch
    nodes: int
    per_node: int
    nodes_per_leaf: int
    leaves_per_su: int
    rdma_nics: int
    spares: int = 0
    price: str = "0"  # per device-hour, an illustrative list price for the cost reports


DEMO_POOLS = (
    PoolShape(
        "a800-train", "A800 training (NVSwitch, 4x200G IB)", Vendor.NVIDIA, "A800",
        Arch.X86_64, nodes=16, per_node=8, nodes_per_leaf=4, leaves_per_su=2, rdma_nics=4,
        spares=1, price="2.40",
    ),
    PoolShape(
        "ascend-infer", "Ascend 910B inference", Vendor.HUAWEI, "Ascend910B",
        Arch.ARM64, nodes=4, per_node=8, nodes_per_leaf=4, leaves_per_su=1, rdma_nics=0,
        price="1.50",
    ),
)  # fmt: skip

CLUSTER_NAME = "sim-a800"


def _users() -> dict[str, User]:
    users: dict[str, User] = {}
    for spec in DEMO_USERS:
        user, created = User.objects.get_or_create(
            username=spec.username, defaults={"display_name": spec.display_name}
        )
        if created:
            user.set_password(DEMO_PASSWORD)
            if spec.tenant is None:
                user.is_platform_admin = user.is_staff = user.is_superuser = True
            user.save()
        users[spec.username] = user
    return users


def _tenants(users: dict[str, User]) -> None:
    for slug, (name, description) in DEMO_TENANTS.items():
        tenant, _ = Tenant.objects.get_or_create(
            slug=slug, defaults={"name": name, "description": description}
        )
        Project.objects.get_or_create(tenant=tenant, name="default")
    for spec in DEMO_USERS:
        if spec.tenant and spec.role:
            Membership.objects.get_or_create(
                tenant=Tenant.objects.get(slug=spec.tenant),
                user=users[spec.username],
                defaults={"role": spec.role},
            )


def _cluster() -> Cluster:
    cluster, created = Cluster.objects.get_or_create(
        name=CLUSTER_NAME,
        defaults={
            "kind": ClusterKind.SIMULATED,
            "description": "Simulated cluster (in-process): jobs, telemetry and faults are "
            "generated, not real hardware.",
        },
    )
    if not created:
        return cluster
    for shape in DEMO_POOLS:
        pool = ResourcePool.objects.create(
            cluster=cluster,
            name=shape.name,
            description=shape.description,
            price_per_device_hour=Decimal(shape.price),
        )
        for i in range(shape.nodes + shape.spares):
            leaf = i // shape.nodes_per_leaf
            su = leaf // shape.leaves_per_su
            node = Node.objects.create(
                cluster=cluster,
                pool=pool,
                name=f"{shape.name}-{i:03d}",
                arch=shape.arch,
                cpu_milli=128_000,
                memory_mib=1_024 * 1_024,
                accelerator_vendor=shape.vendor,
                accelerator_model=shape.model,
                accelerator_count=shape.per_node,
                rdma_nics=shape.rdma_nics,
                scalable_unit=f"{shape.name}-su{su}",
                leaf_switch=f"{shape.name}-leaf{leaf}",
                spine="spine0",
                is_spare=i >= shape.nodes,
            )
            Device.objects.bulk_create(
                Device(node=node, index=d, model=shape.model, uuid=f"{node.name}-dev{d}")
                for d in range(shape.per_node)
            )
    return cluster


# (tenant, pool, model, guarantee, borrow limit): vision and nlp split the A800 pool 48/80
# and may each borrow idle capacity from the other; nlp serves on the Ascend pool.
DEMO_QUOTAS = (
    ("vision", "a800-train", "A800", 48, 32),
    ("nlp", "a800-train", "A800", 80, 48),
    ("nlp", "ascend-infer", "Ascend910B", 24, 8),
    ("vision", "ascend-infer", "Ascend910B", 8, 8),
)


def _quotas(cluster: Cluster) -> None:
    for slug, pool_name, model, guarantee, borrow in DEMO_QUOTAS:
        Quota.objects.get_or_create(
            tenant=Tenant.objects.get(slug=slug),
            pool=ResourcePool.objects.get(cluster=cluster, name=pool_name),
            accelerator_model=model,
            defaults={"guarantee": guarantee, "borrow_limit": borrow},
        )


def _training(
    replicas: int, per_replica: int, hours: float, topology: str = "none"
) -> dict[str, Any]:
    return {
        "image": "nvcr.io/nvidia/pytorch:24.09-py3",
        "command": ["torchrun", "--nproc-per-node=8", "train.py"],
        "env": {"ZS_SIM_DURATION_S": str(int(hours * 3600)), "NCCL_DEBUG": "WARN"},
        "replica_groups": [
            {"name": "worker", "replicas": replicas, "accelerators": per_replica,
             "cpu_milli": 64000, "memory_mib": 512000, "rdma_nics": 4}
        ],
        "accelerator_models": ["A800"],
        "topology": {"mode": topology, "highest_tier": "leaf"},
    }  # fmt: skip


def _notebook() -> dict[str, Any]:
    return {
        "image": "quay.io/jupyter/base-notebook:latest",
        "replica_groups": [
            {"name": "notebook", "replicas": 1, "accelerators": 1, "cpu_milli": 8000,
             "memory_mib": 65536}
        ],
        "accelerator_models": ["A800"],
        "notebook": {"flavor": "jupyter", "storage_gib": DEFAULT_NOTEBOOK_STORAGE_GIB},
    }  # fmt: skip


def _jobs(cluster: Cluster) -> None:
    """A week of finished jobs (``demo_history``), then a few long-running jobs so the
    dashboard has something live to show."""
    if Job.objects.exists():
        return
    pool = ResourcePool.objects.get(cluster=cluster, name="a800-train")
    limits = {slug: g + b for slug, name, _, g, b in DEMO_QUOTAS if name == pool.name}
    seed_history(pool, timezone.now(), limits, _training)
    # The last field: the runtime limit each declares, in hours (above its run time, as users
    # declare them; the scheduler plans holds with it).
    demo = [
        ("nlp", "dave", "llama-7b-pretrain", JobKind.TRAINING, 3, _training(4, 8, 8, "soft"), 12),
        ("vision", "bob", "vit-l-imagenet", JobKind.TRAINING, 4, _training(2, 8, 3), 4),
        ("vision", "bob", "detr-finetune", JobKind.TRAINING, 4, _training(1, 4, 1.5), 2),
        # A notebook to open, stop and restart with its files (simulated: a page, no kernel).
        ("vision", "bob", "eda-notebook", JobKind.NOTEBOOK, 4, _notebook(), 8),
    ]
    submitted: dict[str, Job] = {}
    for slug, username, name, kind, priority, spec, limit_h in demo:
        submitted[name] = submit_job(
            tenant=Tenant.objects.get(slug=slug),
            owner=User.objects.get(username=username),
            name=name,
            kind=kind,
            pool=pool,
            priority=priority,
            spec=spec,
            max_runtime_s=limit_h * 3600,
        )
    # A pipeline's next step: queued until the fine-tune succeeds, then it runs.
    finetune = submitted["detr-finetune"]
    submit_job(
        tenant=finetune.tenant,
        owner=User.objects.get(username="bob"),
        name="detr-eval",
        kind=JobKind.TRAINING,
        pool=pool,
        priority=4,
        spec=_training(1, 2, 0.25),
        max_runtime_s=3600,
        after=[finetune],
    )
    _sweep(pool, finetune.tenant)


def _sweep(pool: ResourcePool, tenant: Tenant) -> None:
    """bob's learning-rate sweep: four one-GPU trials, two at a time (the simulated curves
    settle lowest near lr 3e-4, so the sweep has a best trial to show), the later ones judged
    by the median rule against the first two."""
    bob = User.objects.get(username="bob")
    body = {
        "name": "detr-lr",
        "method": "grid",
        "parameters": {"lr": [1e-4, 3e-4, 1e-3, 3e-3]},
        "parallel": 2,
        "metric": "loss",
        "goal": "min",
        "early_stop": "median",
        "stop_after_step": 600,
        "stop_min_trials": 2,
        "template": {
            "pool": pool.pk,
            "image": "nvcr.io/nvidia/pytorch:24.09-py3",
            "command": ["python", "finetune.py"],
            "args": ["--lr", "{{lr}}"],
            "env": {"ZS_SIM_DURATION_S": "1200"},
            "replica_groups": [{"name": "worker", "replicas": 1, "accelerators": 1}],
            "accelerator_model": "A800",
            "max_runtime_s": 3600,
        },
    }
    submitter = sweeps.Submitter(tenant, Role.MEMBER)
    serializer = SweepSerializer(data=body, context={"view": submitter})
    serializer.is_valid(raise_exception=True)
    sweep = serializer.save(tenant=tenant, owner=bob)
    sweeps.fill_slots(sweep, timezone.now())


@transaction.atomic
def seed() -> Cluster:
    """Create the demo objects; running it again changes nothing."""
    users = _users()
    _tenants(users)
    cluster = _cluster()
    _quotas(cluster)
    _jobs(cluster)
    return cluster


def demo_gpu_count() -> int:
    return sum(shape.nodes * shape.per_node for shape in DEMO_POOLS)
