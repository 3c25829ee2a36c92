from __future__ import annotations

from django.db.models import QuerySet

from apps.clusters.api.serializers import ClusterSerializer
from apps.clusters.models import Cluster
from apps.clusters.selectors import clusters_with_counts
from apps.core.viewsets import PlatformModelViewSet


class ClusterViewSet(PlatformModelViewSet[Cluster]):
    """Clusters with their capacity. Every user reads; platform admins register and edit."""

    serializer_class = ClusterSerializer
    queryset = Cluster.objects.all()

    def get_queryset(self) -> QuerySet[Cluster]:
        return clusters_with_counts()
