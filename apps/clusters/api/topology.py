"""Serializers of a pool's topology view (``apps.clusters.topology``)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from apps.clusters.topology import NodeState


class CountsSerializer(serializers.Serializer[Any]):
    nodes = serializers.IntegerField()
    devices = serializers.IntegerField(help_text="Accelerators of the schedulable nodes.")
    used = serializers.IntegerField(help_text="Held by jobs (a shared device counts once).")
    free = serializers.IntegerField()
    unavailable = serializers.IntegerField(
        help_text="On faulty or cordoned nodes, or unhealthy devices."
    )
    stranded = serializers.IntegerField(
        help_text="Free, on nodes with fewer free devices than a whole-node replica needs."
    )
    whole_free_nodes = serializers.IntegerField()
    spare_nodes = serializers.IntegerField()


class TopologyNodeSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    name = serializers.CharField()
    model = serializers.CharField()
    devices = serializers.IntegerField()
    used = serializers.IntegerField()
    free = serializers.IntegerField()
    broken = serializers.IntegerField()
    state = serializers.ChoiceField(choices=NodeState.choices)
    health = serializers.CharField()
    cordoned = serializers.BooleanField()
    held = serializers.BooleanField(
        help_text="Kept by a delay-scheduling hold for a starving large job."
    )


class LeafSerializer(serializers.Serializer[Any]):
    name = serializers.CharField()
    summary = CountsSerializer()
    nodes = TopologyNodeSerializer(many=True)


class UnitSerializer(serializers.Serializer[Any]):
    name = serializers.CharField()
    summary = CountsSerializer()
    leaves = LeafSerializer(many=True)


class SpineSerializer(serializers.Serializer[Any]):
    name = serializers.CharField()
    summary = CountsSerializer()
    units = UnitSerializer(many=True)


class LargestGangSerializer(serializers.Serializer[Any]):
    model = serializers.CharField()
    leaf = serializers.IntegerField(help_text="Whole free devices in the best leaf.")
    scalable_unit = serializers.IntegerField()
    pool = serializers.IntegerField()


class QueueCodeSerializer(serializers.Serializer[Any]):
    code = serializers.CharField(help_text="Pending code (blank: not yet considered).")
    jobs = serializers.IntegerField()
    devices = serializers.IntegerField()


class QueueSummarySerializer(serializers.Serializer[Any]):
    jobs = serializers.IntegerField()
    devices = serializers.IntegerField()
    by_code = QueueCodeSerializer(many=True)


class PoolRefSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    name = serializers.CharField()


class PoolTopologySerializer(serializers.Serializer[Any]):
    pool = PoolRefSerializer()
    replica_size = serializers.IntegerField()
    summary = CountsSerializer()
    largest_gang = LargestGangSerializer(many=True)
    queue = QueueSummarySerializer()
    spines = SpineSerializer(many=True)
