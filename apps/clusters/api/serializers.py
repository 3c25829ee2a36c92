from rest_framework import serializers

from apps.clusters.models import Cluster


class ClusterSerializer(serializers.ModelSerializer[Cluster]):
    pools = serializers.IntegerField(source="pool_count", read_only=True)
    nodes = serializers.IntegerField(source="node_count", read_only=True)
    gpus = serializers.IntegerField(source="gpu_count", read_only=True)

    class Meta:
        model = Cluster
        fields = ["id", "name", "kind", "description", "pools", "nodes", "gpus", "created_at"]
        read_only_fields = ["created_at"]
