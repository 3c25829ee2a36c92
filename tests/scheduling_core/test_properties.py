"""Property-based tests: invariants that must hold for any cluster, queue and policy.

The checker below recomputes everything from the inputs and the decisions alone (it does not
use the core's index), so a bookkeeping bug in the index cannot hide itself.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import timedelta

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from apps.scheduling.core import (
    FULL_DEVICE_MILLI,
    ClusterSnapshot,
    Decisions,
    DeviceShare,
    Node,
    NodeAllocation,
    Packing,
    PendingJob,
    Policy,
    PreemptionKind,
    Quota,
    ReplicaGroup,
    RunningJob,
    Tier,
    TopologyMode,
    TopologyRequirement,
    schedule,
)

from .helpers import NOW, ago
from .test_text import english_from_json

TENANTS = ("t1", "t2", "t3")
MODELS = {"A800": ("nvidia", "x86_64"), "910B": ("huawei", "arm64")}


@dataclass
class _Spec:
    """A running job being generated: who it is and what it holds per node."""

    tenant: str
    priority: int
    started: int
    preemptible: bool
    devices: defaultdict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    shares: defaultdict[str, list[DeviceShare]] = field(default_factory=lambda: defaultdict(list))


@st.composite
def clusters(draw: st.DrawFn, contended: bool = False) -> ClusterSnapshot:
    """Random clusters; ``contended`` ones are full of mostly preemptible P4/P5 work."""
    n_nodes = draw(st.integers(1, 10))
    n_running = draw(st.integers(1 if contended else 0, 6))
    priorities = [3, 4, 4, 5, 5, 5] if contended else [1, 3, 4, 4, 5, 5]
    jobs = [
        _Spec(
            tenant=draw(st.sampled_from(TENANTS)),
            priority=draw(st.sampled_from(priorities)),
            started=draw(st.integers(0, 600)),
            preemptible=draw(st.sampled_from([True, True, True, False])),
        )
        for _ in range(n_running)
    ]
    nodes: list[Node] = []
    for i in range(n_nodes):
        model = draw(st.sampled_from(sorted(MODELS)))
        vendor, arch = MODELS[model]
        count = draw(st.sampled_from([4, 8]))
        broken = draw(st.sets(st.integers(0, count - 1), max_size=1))
        for dev in range(count):
            if dev in broken or not jobs:
                continue
            owner = draw(st.integers(-1 if contended else -3, len(jobs) - 1))
            if owner >= 0:
                jobs[owner].devices[f"n{i}"].append(dev)
            elif owner == -3:
                left = FULL_DEVICE_MILLI
                for j in draw(st.lists(st.integers(0, len(jobs) - 1), min_size=1, max_size=2)):
                    milli = draw(st.integers(1, left))
                    left -= milli
                    jobs[j].shares[f"n{i}"].append(DeviceShare(dev, milli))
                    if left == 0:
                        break
        nodes.append(
            Node(
                node_id=f"n{i}",
                pool="train",
                accelerator_model=model,
                accelerator_vendor=vendor,
                accelerator_count=count,
                free_devices=frozenset(range(count)) - broken if broken else None,
                cpu_milli=draw(st.sampled_from([16_000, 128_000])),
                memory_mib=512_000,
                arch=arch,
                healthy=draw(st.sampled_from([True] * 9 + [False])),
                cordoned=draw(st.sampled_from([False] * 9 + [True])),
                spine="s0",
                scalable_unit=f"su{i // 4}",
                leaf_switch=f"leaf{i // 2}",
            )
        )
    running = tuple(
        RunningJob(
            job_id=f"r{j}",
            tenant=spec.tenant,
            pool="train",
            priority=spec.priority,
            started_at=ago(spec.started),
            preemptible=spec.preemptible,
            allocations=tuple(
                NodeAllocation(node, tuple(spec.devices[node]), tuple(spec.shares[node]))
                for node in sorted(spec.devices.keys() | spec.shares.keys())
            ),
        )
        for j, spec in enumerate(jobs)
    )
    quotas = tuple(
        Quota(t, "train", m, draw(st.integers(0, 24)), draw(st.integers(0, 24)))
        for t in TENANTS
        for m in MODELS
        if draw(st.integers(0, 9)) > 0
    )
    return ClusterSnapshot(nodes=tuple(nodes), running=running, quotas=quotas)


@st.composite
def groups(draw: st.DrawFn, name: str) -> ReplicaGroup:
    kind = draw(st.sampled_from(["whole", "whole", "whole", "share", "cpu"]))
    models = draw(st.sampled_from([frozenset(), frozenset({"A800"}), frozenset({"910B"})]))
    arch = draw(st.sampled_from([None, None, "x86_64", "arm64"]))
    return ReplicaGroup(
        name=name,
        replicas=draw(st.sampled_from([1, 1, 2, 4])),
        accelerators=draw(st.sampled_from([1, 1, 2, 4, 8])) if kind == "whole" else 0,
        accelerator_milli=draw(st.integers(1, 999)) if kind == "share" else 0,
        models=models,
        arch=arch,
        cpu_milli=draw(st.sampled_from([0, 0, 4000, 12_000])),
    )


@st.composite
def queues(draw: st.DrawFn, urgent: bool = False) -> list[PendingJob]:
    out = []
    for i in range(draw(st.integers(1, 8))):
        n_groups = draw(st.integers(1, 2))
        mode = draw(st.sampled_from(list(TopologyMode)))
        out.append(
            PendingJob(
                job_id=f"j{i}",
                tenant=draw(st.sampled_from(TENANTS)),
                pool="train",
                priority=draw(st.sampled_from([0, 1, 2, 3] if urgent else [0, 1, 2, 2, 3, 4, 5])),
                groups=tuple(draw(groups(f"g{k}")) for k in range(n_groups)),
                submit_time=ago(draw(st.integers(0, 300))),
                topology=TopologyRequirement(
                    mode, draw(st.sampled_from([Tier.NODE, Tier.LEAF, Tier.SU, Tier.SPINE]))
                ),
                max_wait=draw(st.sampled_from([None, timedelta(hours=1)])),
            )
        )
    return out


@st.composite
def policies(draw: st.DrawFn) -> Policy:
    return Policy(
        gang=draw(st.sampled_from([True, True, True, False])),
        packing=draw(st.sampled_from(list(Packing))),
        preemption=draw(st.booleans()),
        topology=draw(st.booleans()),
        delay_scheduling=draw(st.booleans()),
        large_job_devices=draw(st.sampled_from([4, 16])),
        quotas=draw(st.booleans()),
        reclaim=draw(st.booleans()),
        fair_share=draw(st.booleans()),
        sharing=draw(st.booleans()),
        backfill=draw(st.booleans()),
    )


def _tier(nodes: list[Node]) -> Tier:
    if len({n.node_id for n in nodes}) == 1:
        return Tier.NODE
    if len({(n.spine, n.scalable_unit, n.leaf_switch) for n in nodes}) == 1:
        return Tier.LEAF
    if len({(n.spine, n.scalable_unit) for n in nodes}) == 1:
        return Tier.SU
    if len({n.spine for n in nodes}) == 1:
        return Tier.SPINE
    return Tier.ANY


def _check_fragmentation(
    snap: ClusterSnapshot,
    allocated: set[tuple[str, int]],
    whole: dict[tuple[str, int], str],
    shared: dict[tuple[str, int], int],
    d: Decisions,
) -> None:
    """The fragmentation the index reports equals a recount from the final occupancy, which
    cross-checks the index aggregates after every trial, rollback and preemption."""
    classes: defaultdict[tuple[str, ...], list[tuple[Node, int]]] = defaultdict(list)
    for n in snap.nodes:
        if not n.healthy or n.cordoned or not n.accelerator_count:
            continue
        base = set(range(n.accelerator_count) if n.free_devices is None else n.free_devices)
        base |= {x for node, x in allocated if node == n.node_id}
        free = [
            x
            for x in base
            if 0 <= x < n.accelerator_count
            and (n.node_id, x) not in whole
            and shared.get((n.node_id, x), 0) == 0
        ]
        key = (n.pool, n.accelerator_model, n.accelerator_vendor, n.arch)
        classes[key].append((n, len(free)))
    free_total = stranded = hostable = whole_nodes = 0
    for members in classes.values():
        top = max(n.accelerator_count for n, _ in members)
        threshold = min(8, top)
        for _, f in members:
            free_total += f
            stranded += f if f < threshold else 0
            hostable += f // threshold
            whole_nodes += 1 if f == top else 0
    got = d.fragmentation
    assert (got.free_devices, got.stranded_devices, got.hostable_replicas) == (
        free_total,
        stranded,
        hostable,
    )
    assert got.whole_free_nodes == whole_nodes


def check(snap: ClusterSnapshot, queue: list[PendingJob], policy: Policy, d: Decisions) -> None:
    """Every invariant, in one place, recomputed from the inputs and the decisions."""
    nodes = {n.node_id: n for n in snap.nodes}
    running = {r.job_id: r for r in snap.running}
    jobs = {j.job_id: j for j in queue}
    placements = {p.job_id: p for p in d.placements}
    pending = {p.job_id: p for p in d.pending}
    assert len(placements) == len(d.placements)
    assert len(pending) == len(d.pending)

    # Every job is answered; every pending job has a reason.
    for job_id in jobs:
        assert job_id in placements or job_id in pending
    for reason in d.pending:
        assert reason.message.strip()
        assert english_from_json(reason.text.as_json()) == reason.message  # the dashboard's
    for job_id, placement in placements.items():
        assert job_id in jobs
        assert (job_id in pending) == placement.partial

    # Preemption rules.
    victims = [p.victim_job_id for p in d.preemptions]
    assert len(victims) == len(set(victims))
    for pre in d.preemptions:
        victim = running[pre.victim_job_id]
        preemptor = jobs[pre.preemptor_job_id]
        assert policy.preemption
        assert victim.preemptible
        assert victim.priority in (4, 5)  # P3 is never a victim, nor is P0-P2
        assert preemptor.priority <= 2  # P3, P4, P5 never preempt
        assert victim.priority > preemptor.priority
        assert pre.preemptor_job_id in placements and not placements[pre.preemptor_job_id].partial
        if policy.quotas and victim.tenant != preemptor.tenant:
            assert pre.kind == PreemptionKind.RECLAIM

    # Occupancy after the cycle: survivors plus new placements.
    whole: dict[tuple[str, int], str] = {}
    shared: defaultdict[tuple[str, int], int] = defaultdict(int)
    allocated: set[tuple[str, int]] = set()
    cpu: defaultdict[str, int] = defaultdict(int)
    usage: defaultdict[tuple[str, str, str], int] = defaultdict(int)
    for r in snap.running:
        for a in r.allocations:
            allocated |= {(a.node_id, x) for x in a.devices}
            allocated |= {(a.node_id, s.device) for s in a.shares}
        if r.job_id in victims:
            continue
        for a in r.allocations:
            model = nodes[a.node_id].accelerator_model
            for x in a.devices:
                whole[(a.node_id, x)] = r.job_id
                usage[(r.tenant, r.pool, model)] += FULL_DEVICE_MILLI
            for s in a.shares:
                shared[(a.node_id, s.device)] += s.milli
                usage[(r.tenant, r.pool, model)] += s.milli
    charged: set[tuple[str, str, str]] = set()
    for p in d.placements:
        job = jobs[p.job_id]
        by_group = {g.name: g for g in job.groups}
        models = set()
        for rp in p.replicas:
            node = nodes[rp.node_id]
            g = by_group[rp.group]
            assert node.healthy and not node.cordoned and node.pool == job.pool
            if g.arch is not None:
                assert node.arch == g.arch
            cpu[rp.node_id] += rp.cpu_milli
            if not (g.accelerators or g.accelerator_milli):
                assert rp.devices == ()
                continue
            models.add(node.accelerator_model)
            assert not g.models or node.accelerator_model in g.models
            key = (job.tenant, job.pool, node.accelerator_model)
            charged.add(key)
            for x in rp.devices:
                slot = (rp.node_id, x)
                assert 0 <= x < node.accelerator_count
                usable = node.free_devices is None or x in node.free_devices or slot in allocated
                assert usable, "a broken device was used"
                assert slot not in whole, f"device {slot} given twice"
            if g.accelerators:
                assert rp.share_milli == 0 and len(rp.devices) == g.accelerators
                for x in rp.devices:
                    assert (rp.node_id, x) not in shared, "a shared device was given whole"
                    whole[(rp.node_id, x)] = p.job_id
                usage[key] += g.accelerators * FULL_DEVICE_MILLI
            else:
                assert policy.sharing
                assert rp.share_milli == g.accelerator_milli and len(rp.devices) == 1
                shared[(rp.node_id, rp.devices[0])] += rp.share_milli
                usage[key] += rp.share_milli
        assert len(models) <= 1, "a job was spread over several accelerator models"

        # Gang: all replicas, each exactly once.
        got = sorted((rp.group, rp.replica_index) for rp in p.replicas)
        want = sorted((g.name, i) for g in job.groups for i in range(g.replicas))
        if policy.gang or not p.partial:
            assert got == want
        else:
            assert got and set(got) < set(want)

        # Topology: the reported tier is right, and hard never crosses its tier.
        tier = _tier([nodes[rp.node_id] for rp in p.replicas])
        assert p.tier == tier
        if job.topology.mode == TopologyMode.HARD:
            assert tier <= job.topology.max_tier

    for slot, milli in shared.items():
        assert milli <= FULL_DEVICE_MILLI, f"device {slot} shared beyond 1000 milli"
    _check_fragmentation(snap, allocated, whole, shared, d)
    for node_id, used in cpu.items():
        assert used <= nodes[node_id].cpu_milli

    # Quota: whatever was admitted keeps usage <= guarantee + borrowing limit.
    if policy.quotas:
        limits = {(q.tenant, q.pool, q.accelerator_model): q for q in snap.quotas}
        for key in charged:
            q = limits.get(key)
            assert q is not None, "admitted without a quota row"
            assert usage[key] <= (q.guarantee + q.borrow_limit) * FULL_DEVICE_MILLI

    # Holds: visible, bounded, only for pending jobs, respected by lower-priority work.
    for res in d.reservations:
        assert policy.delay_scheduling
        assert res.job_id in pending and res.expires_at > NOW
        held = set(res.node_ids)
        for other in d.placements:
            if jobs[other.job_id].priority > res.priority:
                assert not held & {rp.node_id for rp in other.replicas if rp.devices}
    assert len(d.reservations) <= policy.max_holds


def _events(d: Decisions) -> None:
    """Coverage of the interesting paths, shown by --hypothesis-show-statistics."""
    event("placed" if d.placements else "nothing placed")
    if d.preemptions:
        event(f"preempted ({d.preemptions[0].kind})")
    if d.reservations:
        event("held")
    if any(r.share_milli for p in d.placements for r in p.replicas):
        event("shared")
    if any(p.partial for p in d.placements):
        event("partial")
    if any(p.tier > Tier.NODE for p in d.placements):
        event("multi-node")


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(snap=clusters(), queue=queues(), policy=policies())
def test_invariants_hold_for_any_cluster_queue_and_policy(snap, queue, policy):
    d = schedule(snap, queue, policy, NOW)
    check(snap, queue, policy, d)
    _events(d)
    assert schedule(snap, queue, policy, NOW) == d  # deterministic


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(snap=clusters(), queue=queues(), quotas=st.booleans())
def test_defaults_with_everything_on(snap, queue, quotas):
    policy = Policy(quotas=quotas)
    d = schedule(snap, queue, policy, NOW)
    check(snap, queue, policy, d)
    _events(d)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(snap=clusters(contended=True), queue=queues(urgent=True), quotas=st.booleans())
def test_preemption_rules_hold_under_contention(snap, queue, quotas):
    policy = Policy(quotas=quotas, delay_scheduling=False)
    d = schedule(snap, queue, policy, NOW)
    check(snap, queue, policy, d)
    _events(d)
