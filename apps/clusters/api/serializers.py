from typing import Any

from rest_framework import serializers

from apps.clusters.models import Cluster
from apps.clusters.selectors import clusters_with_counts


class ClusterSerializer(serializers.ModelSerializer[Cluster]):
    pools = serializers.IntegerField(source="pool_count", read_only=True)
    nodes = serializers.IntegerField(source="node_count", read_only=True)
    gpus = serializers.IntegerField(source="gpu_count", read_only=True)

    class Meta:
        model = Cluster
        fields = ["id", "name", "kind", "description", "pools", "nodes", "gpus", "created_at"]
        read_only_fields = ["created_at"]

    def to_representation(self, instance: Cluster) -> dict[str, Any]:
        # The counts are annotations of the viewset's queryset; a cluster just created (or
        # any instance read elsewhere) lacks them, and DRF would leave the fields out.
        if not hasattr(instance, "gpu_count"):
            instance = clusters_with_counts().get(pk=instance.pk)
        return super().to_representation(instance)
