"""The preemption search rules out hopeless victim sets before any trial
(``preemption._room_anywhere``): that must never lose a set the trials would have found."""

from __future__ import annotations

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from apps.scheduling.core import Policy, Tier, TopologyMode
from apps.scheduling.core.index import ClusterState
from apps.scheduling.core.placement import Placed, place_in_class, placement_tiers
from apps.scheduling.core.preemption import find_victims, may_preempt
from apps.scheduling.core.request import Request, build_request, compatible_classes
from apps.scheduling.core.text import Text

from .helpers import job, nodes, running, snap, whole
from .test_properties import clusters, queues


def _search(state: ClusterState, req: Request, policy: Policy, *, tight: bool, pruned: bool):
    found = []
    for cls in compatible_classes(state, req):

        def fits(cls=cls) -> bool:
            return isinstance(place_in_class(state, cls, req, policy, tight=tight), Placed)

        loosest = max(placement_tiers(cls, req, policy, tight=tight)) if pruned else None
        victims = find_victims(
            state,
            cls,
            req.job,
            req.total_whole,
            req.accel_milli,
            fits,
            policy,
            req.whole_need,
            loosest,
        )
        found.append(None if victims is None else [v.job.job_id for v in victims])
    return found


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    snap=clusters(contended=True),
    queue=queues(urgent=True),
    quotas=st.booleans(),
    tight=st.booleans(),
    hold=st.integers(0, 3),
)
def test_ruling_out_before_trials_never_loses_a_victim_set(snap, queue, quotas, tight, hold):
    policy = Policy(quotas=quotas, max_preemption_trials=1000)
    state = ClusterState(snap, quotas_enabled=quotas)
    for ns in state.node_list[:hold]:  # some nodes held for another job
        state.hold(ns, "holder", 1)
    for queued in queue:
        req = build_request(queued)
        if isinstance(req, Text) or not may_preempt(queued, policy):
            continue
        plain = _search(state, req, policy, tight=tight, pruned=False)
        quick = _search(state, req, policy, tight=tight, pruned=True)
        for a, b in zip(plain, quick, strict=True):
            event("found" if a else "none")
            # The same victims whenever the trials find some: ruling out skips no trial then.
            assert b == a


def test_a_gang_kept_to_one_leaf_is_ruled_out_when_no_leaf_can_ever_have_the_room():
    # Two leaves of two 8-GPU nodes; P5 work holds one node in each leaf, P3 work (never a
    # victim) the other. A 16-GPU gang that must stay in one leaf cannot start whatever is
    # preempted, though the class would have 16 free GPUs with both P5 jobs gone.
    ns = nodes(4)
    ids = [n.node_id for n in ns]
    work = [
        running("low0", {ids[0]: range(8)}, priority=5),
        running("keep0", {ids[1]: range(8)}, priority=3),
        running("low1", {ids[2]: range(8)}, priority=5),
        running("keep1", {ids[3]: range(8)}, priority=3),
    ]
    state = ClusterState(snap(ns, work), quotas_enabled=False)
    policy = Policy(quotas=False)
    big = job("big", whole(2, 8), priority=1, topology=TopologyMode.HARD, max_tier=Tier.LEAF)
    req = build_request(big)
    assert not isinstance(req, Text)
    cls = compatible_classes(state, req)[0]
    trials = []

    def fits() -> bool:
        trials.append(1)
        return isinstance(place_in_class(state, cls, req, policy), Placed)

    loosest = max(placement_tiers(cls, req, policy, tight=False))
    assert loosest == Tier.LEAF
    args = (state, cls, big, req.total_whole, req.accel_milli, fits, policy, req.whole_need)
    assert find_victims(*args, loosest) is None
    assert trials == []  # ruled out without a trial
    assert find_victims(*args, None) is None
    assert trials  # the trials alone reach the same answer, at a cost
    # Across leaves the same gang does find its victims.
    spread = job("spread", whole(2, 8), priority=1)
    req2 = build_request(spread)
    assert not isinstance(req2, Text)
    loose = max(placement_tiers(cls, req2, policy, tight=False))
    got = find_victims(
        state,
        cls,
        spread,
        req2.total_whole,
        req2.accel_milli,
        lambda: isinstance(place_in_class(state, cls, req2, policy), Placed),
        policy,
        req2.whole_need,
        loose,
    )
    assert got is not None
    assert sorted(v.job.job_id for v in got) == ["low0", "low1"]
