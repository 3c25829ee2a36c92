"""LiveCluster (the core's index kept across cycles) stays exactly what a fresh snapshot
would give, and patience keeps soft gangs in one leaf for a while."""

import random
from datetime import datetime, timedelta

from apps.scheduling.core import (
    ClusterSnapshot,
    Packing,
    PendingJob,
    Policy,
    Quota,
    ReplicaGroup,
    Tier,
    TopologyMode,
    TopologyRequirement,
)
from apps.scheduling.core.index import ClusterState
from apps.scheduling.core.live import LiveCluster
from apps.scheduling.core.synthetic import reference_nodes

T0 = datetime(2025, 1, 1)


def _fingerprint(state: ClusterState):
    classes = {}
    for key, cls in state.classes.items():
        classes[key] = (
            [sorted(ns.node.node_id for ns in b) for b in cls.buckets],
            list(cls.cap),
            {k: list(v) for k, v in cls.leaf_cap.items()},
            {k: list(v) for k, v in cls.su_cap.items()},
            sorted((rem, state.node_list[i].node.node_id, d) for rem, i, d in cls.shared),
        )
    nodes = {
        ns.node.node_id: (sorted(ns.free), dict(ns.shares), ns.cpu_free, ns.mem_free)
        for ns in state.node_list
    }
    usage = {k: v for k, v in state.ledger.usage.items() if v}
    return classes, nodes, usage, sorted(state.running)


def _job(i: int, rng: random.Random, now: datetime) -> PendingJob:
    roll = rng.random()
    if roll < 0.3:
        group = ReplicaGroup("w", 1, accelerator_milli=rng.choice([250, 500, 700]), cpu_milli=1000)
    elif roll < 0.8:
        group = ReplicaGroup("w", 1, accelerators=rng.choice([1, 2, 4, 8]), cpu_milli=2000)
    else:
        group = ReplicaGroup("w", rng.choice([2, 3]), accelerators=8)
    return PendingJob(
        job_id=f"j{i}",
        tenant=rng.choice(["a", "b"]),
        pool="train",
        priority=rng.choice([1, 3, 4, 5]),
        groups=(group,),
        submit_time=now,
        topology=TopologyRequirement(TopologyMode.SOFT),
    )


def test_a_kept_index_equals_a_fresh_one_after_many_cycles_and_releases():
    rng = random.Random(3)
    nodes = reference_nodes(16, nodes_per_leaf=4, leaves_per_su=2)
    quotas = (Quota("a", "train", "A800", 64, 64), Quota("b", "train", "A800", 64, 64))
    for packing in (Packing.BINPACK, Packing.FRAGMENTATION):
        policy = Policy(packing=packing)
        live = LiveCluster(ClusterSnapshot(nodes=tuple(nodes), quotas=quotas))
        queue: list[PendingJob] = []
        for step in range(60):
            now = T0 + timedelta(minutes=step)
            queue += [_job(step * 10 + k, rng, now - timedelta(hours=1)) for k in range(4)]
            decisions = live.schedule(queue, policy, now)
            placed = {p.job_id for p in decisions.placements}
            queue = [j for j in queue if j.job_id not in placed]
            for job_id in list(live.running):
                if rng.random() < 0.2:
                    live.release(job_id)
            fresh = ClusterState(live.snapshot(), quotas_enabled=True)
            assert _fingerprint(live.state) == _fingerprint(fresh), step


def test_a_failed_node_leaves_the_index_and_comes_back():
    from dataclasses import replace

    nodes = reference_nodes(2)
    live = LiveCluster(ClusterSnapshot(nodes=tuple(nodes)), quotas_enabled=False)
    live.set_node(replace(nodes[0], healthy=False))
    job = PendingJob("x", "a", "train", 3, (ReplicaGroup("w", 2, accelerators=8),), T0)
    assert not live.schedule([job], Policy(quotas=False), T0).placements
    live.set_node(nodes[0])
    assert live.schedule([job], Policy(quotas=False), T0).placements


def test_patience_keeps_a_soft_gang_waiting_for_one_leaf_then_lets_it_spread():
    from apps.scheduling.core.synthetic import running_job

    nodes = reference_nodes(8, nodes_per_leaf=4, leaves_per_su=2)
    busy = tuple(
        running_job(f"r{n}", [(f"n0000{n}", range(8))], started_at=T0) for n in (0, 1, 4, 5)
    )
    policy = Policy(quotas=False, topology_patience=timedelta(minutes=30))
    live = LiveCluster(ClusterSnapshot(nodes=tuple(nodes), running=busy), quotas_enabled=False)
    gang = PendingJob(
        "g",
        "a",
        "train",
        3,
        (ReplicaGroup("w", 3, accelerators=8),),
        T0,
        TopologyRequirement(TopologyMode.SOFT),
    )
    # 2 free nodes per leaf: the gang fits only across leaves.
    assert not live.schedule([gang], policy, T0 + timedelta(minutes=10)).placements
    late = live.schedule([gang], policy, T0 + timedelta(minutes=31))
    assert late.placements and late.placements[0].tier == Tier.SU
    # Without patience it spreads at once.
    live = LiveCluster(ClusterSnapshot(nodes=tuple(nodes), running=busy), quotas_enabled=False)
    assert live.schedule([gang], Policy(quotas=False), T0).placements


def test_large_gangs_have_their_own_shorter_patience():
    from apps.scheduling.core.delay import topology_patience_for
    from apps.scheduling.core.synthetic import running_job

    policy = Policy(
        quotas=False,
        topology_patience=timedelta(minutes=60),
        large_topology_patience=timedelta(minutes=10),
        large_patience_devices=24,
    )
    assert topology_patience_for(16, policy) == timedelta(minutes=60)
    assert topology_patience_for(24, policy) == timedelta(minutes=10)
    assert topology_patience_for(24, Policy(topology_patience=timedelta(minutes=5))) == timedelta(
        minutes=5
    )
    nodes = reference_nodes(8, nodes_per_leaf=4, leaves_per_su=2)
    busy = tuple(running_job(f"r{n}", [(f"n0000{n}", range(8))], started_at=T0) for n in (0, 4))

    def gang(replicas: int) -> PendingJob:
        return PendingJob(
            f"g{replicas}",
            "a",
            "train",
            3,
            (ReplicaGroup("w", replicas, accelerators=8),),
            T0,
            TopologyRequirement(TopologyMode.SOFT),
        )

    def placed(replicas: int, minutes: int) -> bool:
        live = LiveCluster(ClusterSnapshot(nodes=tuple(nodes), running=busy), quotas_enabled=False)
        d = live.schedule([gang(replicas)], policy, T0 + timedelta(minutes=minutes))
        return bool(d.placements)

    # 3 free nodes per leaf: a 4-node gang (32 devices, large here) only fits across leaves
    # and does so after its 10 minutes, not the 60 of smaller gangs; a 2-node gang fits one
    # leaf at once.
    assert not placed(4, 5)
    assert placed(4, 11)
    assert placed(2, 0)


def test_scored_single_node_jobs_fill_the_busiest_leaf_first():
    from apps.scheduling.core.synthetic import running_job

    nodes = reference_nodes(8, nodes_per_leaf=4, leaves_per_su=2)
    # leaf 0 has one busy node (3 empty), leaf 1 has three busy nodes (1 empty)
    busy = tuple(
        running_job(f"r{n}", [(f"n0000{n}", range(8))], started_at=T0) for n in (0, 4, 5, 6)
    )
    job = PendingJob("s", "a", "train", 3, (ReplicaGroup("w", 1, accelerators=8),), T0)
    for packing, expect in ((Packing.FRAGMENTATION, "n00007"), (Packing.BEST_FIT, None)):
        live = LiveCluster(ClusterSnapshot(nodes=tuple(nodes), running=busy), quotas_enabled=False)
        policy = Policy(quotas=False, packing=packing, topology=packing == Packing.FRAGMENTATION)
        d = live.schedule([job], policy, T0)
        node_id = d.placements[0].replicas[0].node_id
        if expect is not None:
            assert node_id == expect
        else:  # topology off: the group's order, whatever the leaves
            assert node_id == "n00001"
