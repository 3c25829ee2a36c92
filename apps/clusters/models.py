"""Clusters -> resource pools -> nodes -> accelerator devices, with network topology (C2)."""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class ClusterKind(models.TextChoices):
    SIMULATED = "simulated", "Simulated (in-process)"
    KUBERNETES = "kubernetes", "Kubernetes + Volcano"


class Cluster(models.Model):
    """A cluster reached through one cluster interface (Kubernetes or the simulated one)."""

    name = models.CharField(max_length=64, unique=True)
    kind = models.CharField(max_length=16, choices=ClusterKind.choices)
    description = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return self.name


class ResourcePool(models.Model):
    """A group of nodes scheduled together, e.g. "A800 training" or "Ascend 910B inference"."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="pools")
    name = models.CharField(max_length=64)
    description = models.TextField(blank=True)
    price_per_device_hour = models.DecimalField(
        max_digits=10, decimal_places=4, default=0, help_text="Cost of one accelerator-hour."
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["cluster", "name"], name="uniq_pool_name"),
        ]

    def __str__(self) -> str:
        return f"{self.cluster.name}/{self.name}"


class Arch(models.TextChoices):
    X86_64 = "x86_64", "x86_64"
    ARM64 = "arm64", "arm64"


class Vendor(models.TextChoices):
    NVIDIA = "nvidia", "NVIDIA"
    HUAWEI = "huawei", "Huawei Ascend"
    NONE = "none", "No accelerator"


class NodeHealth(models.TextChoices):
    HEALTHY = "healthy", "Healthy"
    DEGRADED = "degraded", "Degraded"
    FAULTY = "faulty", "Faulty"


class Node(models.Model):
    """A server. Topology: Scalable Unit -> leaf switch -> spine tier (2-tier leaf/spine)."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="nodes")
    pool = models.ForeignKey(
        ResourcePool, on_delete=models.SET_NULL, null=True, blank=True, related_name="nodes"
    )
    name = models.CharField(max_length=128)
    arch = models.CharField(max_length=8, choices=Arch.choices, default=Arch.X86_64)
    cpu_milli = models.PositiveIntegerField()
    memory_mib = models.PositiveBigIntegerField()
    accelerator_vendor = models.CharField(max_length=16, choices=Vendor.choices)
    accelerator_model = models.CharField(max_length=32, blank=True)
    accelerator_count = models.PositiveSmallIntegerField(default=0)
    rdma_nics = models.PositiveSmallIntegerField(default=0)
    scalable_unit = models.CharField(max_length=32, blank=True)
    leaf_switch = models.CharField(max_length=32, blank=True)
    spine = models.CharField(max_length=32, blank=True)
    labels = models.JSONField(default=dict, blank=True)
    health = models.CharField(max_length=16, choices=NodeHealth.choices, default="healthy")
    cordoned = models.BooleanField(default=False)
    is_spare = models.BooleanField(default=False, help_text="Hot spare held back for failover.")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["cluster", "name"], name="uniq_node_name"),
        ]
        indexes = [models.Index(fields=["pool", "accelerator_model"])]

    def __str__(self) -> str:
        return self.name


class Device(models.Model):
    """One accelerator (GPU or NPU) in a node, addressed by its index on the node."""

    node = models.ForeignKey(Node, on_delete=models.CASCADE, related_name="devices")
    index = models.PositiveSmallIntegerField()
    uuid = models.CharField(max_length=64, blank=True)
    model = models.CharField(max_length=32)
    health = models.CharField(max_length=16, choices=NodeHealth.choices, default="healthy")

    class Meta:
        ordering = ["node_id", "index"]
        constraints = [
            models.UniqueConstraint(fields=["node", "index"], name="uniq_device_index"),
        ]

    def __str__(self) -> str:
        return f"{self.node.name}/{self.index}"
