from django.contrib import admin

from apps.clusters.models import Cluster, Device, Node, ResourcePool


@admin.register(Cluster)
class ClusterAdmin(admin.ModelAdmin[Cluster]):
    list_display = ("name", "kind", "created_at")


@admin.register(ResourcePool)
class ResourcePoolAdmin(admin.ModelAdmin[ResourcePool]):
    list_display = ("name", "cluster")
    list_filter = ("cluster",)


@admin.register(Node)
class NodeAdmin(admin.ModelAdmin[Node]):
    list_display = (
        "name",
        "pool",
        "accelerator_model",
        "accelerator_count",
        "leaf_switch",
        "health",
        "cordoned",
    )
    list_filter = ("pool", "accelerator_model", "health", "cordoned", "is_spare")
    search_fields = ("name",)


@admin.register(Device)
class DeviceAdmin(admin.ModelAdmin[Device]):
    list_display = ("node", "index", "model", "health")
    list_filter = ("model", "health")
