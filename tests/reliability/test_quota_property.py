"""Quota accounting under random operations (hypothesis, stateful, on PostgreSQL).

Three tenants share one 16-GPU pool. Each example is a random sequence of submit, cancel,
dispatch, finish, preempt, scheduling cycle and quota edit, run through the product's own
services (submit_job, cancel_job, transition, run_cycle, apply._preempt, set_quota), each step
in its own transaction. After every step, for every tenant:

    used (live allocations) == sum of the requests of its admitted/dispatching/running jobs
    0 <= used <= guarantee + borrow limit

Each example runs inside one outer transaction that is rolled back, so an example costs a few
database round trips per step. ``ZS_PROPERTY_RUNS`` sets the number of examples (CI default
40; the acceptance run is 500), ``ZS_PROPERTY_STEPS`` the steps per example (default 50)."""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Sum
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from apps.accounts.models import User
from apps.clusters.models import ResourcePool
from apps.jobs import services as jobs
from apps.jobs.models import HOLDING, TERMINAL, Allocation, Job, JobKind, JobState
from apps.quotas.admin import QuotaForm
from apps.quotas.models import Quota
from apps.quotas.selectors import usage_milli
from apps.quotas.services import set_quota
from apps.scheduling import core
from apps.scheduling.apply import Applied, _preempt
from apps.scheduling.core.text import phrase
from apps.scheduling.loop import run_cycle
from apps.tenancy.models import Role, Tenant
from tests.factories import make_membership, make_node, make_pool, make_tenant, make_user

pytestmark = pytest.mark.django_db

RUNS = int(os.environ.get("ZS_PROPERTY_RUNS", "40"))
STEPS = int(os.environ.get("ZS_PROPERTY_STEPS", "50"))
CAPACITY = 16
MODEL = "A800"
FULL = 1000
SEEN: Counter[str] = Counter()  # what the examples exercised, so the test cannot be vacuous


def _spec(devices: int, milli: int) -> dict[str, Any]:
    group: dict[str, Any] = {"name": "w", "replicas": 1}
    if milli:
        group["accelerator_milli"] = milli
    else:
        group["accelerators"] = devices
    return {"image": "pytorch:2.5", "accelerator_models": [MODEL], "replica_groups": [group]}


class QuotaMachine(RuleBasedStateMachine):
    tenants: list[Tenant]
    owners: list[User]
    pool: ResourcePool

    def __init__(self) -> None:
        super().__init__()
        self._outer = transaction.atomic()
        self._outer.__enter__()
        self.count = 0

    def teardown(self) -> None:
        transaction.set_rollback(True)
        self._outer.__exit__(None, None, None)

    def _pick(self, states: frozenset[str] | tuple[str, ...], index: int) -> Job | None:
        ids = list(Job.objects.filter(state__in=states).order_by("pk").values_list("pk", flat=True))
        if not ids:
            return None
        return Job.objects.select_related("tenant").get(pk=ids[index % len(ids)])

    @rule(
        tenant=st.integers(0, 2),
        devices=st.sampled_from([1, 1, 2, 4, 8, 0]),
        milli=st.sampled_from([250, 500]),
        priority=st.integers(0, 5),
        then_schedule=st.booleans(),
    )
    def submit(
        self, tenant: int, devices: int, milli: int, priority: int, then_schedule: bool
    ) -> None:
        self.count += 1
        jobs.submit_job(
            tenant=self.tenants[tenant], owner=self.owners[tenant], name=f"p{self.count}",
            kind=JobKind.TRAINING, pool=self.pool, priority=priority,
            spec=_spec(devices, 0 if devices else milli),
        )  # fmt: skip
        if then_schedule:
            self.schedule()

    @rule()
    def schedule(self) -> None:
        report = run_cycle()
        SEEN["admitted"] += report.admitted
        SEEN["preempted by the core"] += report.preempted

    @rule(index=st.integers(0, 99))
    def cancel(self, index: int) -> None:
        job = self._pick(tuple(set(JobState) - TERMINAL), index)
        if job is not None:
            jobs.cancel_job(job=job, actor=self.owners[0])

    @rule(index=st.integers(0, 99))
    def dispatch(self, index: int) -> None:
        job = self._pick((JobState.ADMITTED, JobState.DISPATCHING), index)
        if job is None:
            return
        with transaction.atomic():
            if job.state == JobState.ADMITTED:
                jobs.transition(job, JobState.DISPATCHING, reason="Dispatched")
            else:
                jobs.transition(job, JobState.RUNNING, reason="Running")

    @rule(index=st.integers(0, 99), ok=st.booleans())
    def finish(self, index: int, ok: bool) -> None:
        job = self._pick((JobState.DISPATCHING, JobState.RUNNING), index)
        if job is not None:
            with transaction.atomic():
                jobs.transition(job, JobState.SUCCEEDED if ok else JobState.FAILED, reason="Done")

    @rule(index=st.integers(0, 99))
    def preempt(self, index: int) -> None:
        job = self._pick(HOLDING, index)
        if job is None:
            return
        decision = core.Preemption(
            victim_job_id=str(job.pk), victim_tenant=job.tenant.slug, preemptor_job_id="0",
            kind=core.PreemptionKind.PRIORITY,
            reason=phrase("preemptedBy", job="0", priority=0, tenant="t", devices="8",
                          model="A800", pool="p", victimPriority=job.priority),
        )  # fmt: skip
        with transaction.atomic():
            _preempt(decision, Applied())
        SEEN["preempted"] += 1

    @rule(index=st.integers(0, 99))
    def relay_deletes(self, index: int) -> None:
        """What the relay does once a preempted job's objects are gone: back to the queue."""
        job = self._pick((JobState.PREEMPTED,), index)
        if job is not None:
            with transaction.atomic():
                jobs.transition(job, JobState.QUEUED, reason="Requeued")

    @rule(tenant=st.integers(0, 2), guarantee=st.integers(0, 10), borrow=st.integers(0, 10))
    def edit_quota(self, tenant: int, guarantee: int, borrow: int) -> None:
        others = (
            Quota.objects.exclude(tenant=self.tenants[tenant]).aggregate(n=Sum("guarantee"))["n"]
            or 0
        )
        used = usage_milli().get((self.tenants[tenant].pk, self.pool.pk, MODEL), 0)
        allowed = others + guarantee <= CAPACITY and used <= (guarantee + borrow) * FULL
        try:
            set_quota(tenant=self.tenants[tenant], pool=self.pool, accelerator_model=MODEL,
                      guarantee=guarantee, borrow_limit=borrow)  # fmt: skip
        except ValidationError:
            assert not allowed, "a valid quota edit was refused"
            SEEN["quota edit refused"] += 1
        else:
            assert allowed, "an edit below capacity or usage was accepted"
            SEEN["quota edit accepted"] += 1

    @invariant()
    def used_matches_admitted_and_stays_within_quota(self) -> None:
        used = usage_milli()
        assert not Allocation.objects.exclude(job__state__in=HOLDING).exists()
        for tenant in self.tenants:
            requested = Job.objects.filter(tenant=tenant, state__in=HOLDING).aggregate(
                d=Sum("requested_devices"), m=Sum("requested_milli")
            )
            admitted = (requested["d"] or 0) * FULL + (requested["m"] or 0)
            held = used.get((tenant.pk, self.pool.pk, MODEL), 0)
            quota = Quota.objects.get(tenant=tenant)
            assert held == admitted, (tenant.slug, held, admitted)
            assert 0 <= held <= (quota.guarantee + quota.borrow_limit) * FULL, (
                tenant.slug, held, quota.guarantee, quota.borrow_limit,
            )  # fmt: skip


def test_quota_usage_stays_within_limits_under_random_operations(db: Any) -> None:
    pool = make_pool(name="prop")
    make_node(pool=pool, name="p0", leaf_switch="leaf0", accelerator_count=8)
    make_node(pool=pool, name="p1", leaf_switch="leaf0", accelerator_count=8)
    tenants = [make_tenant(f"prop-{i}") for i in range(3)]
    owners = []
    for i, tenant in enumerate(tenants):
        owner = make_user(f"prop-user-{i}")
        make_membership(tenant=tenant, user=owner, role=Role.MEMBER)
        owners.append(owner)
    for tenant, guarantee, borrow in zip(tenants, (6, 5, 5), (4, 6, 0), strict=True):
        Quota.objects.create(tenant=tenant, pool=pool, accelerator_model=MODEL,
                             guarantee=guarantee, borrow_limit=borrow)  # fmt: skip

    class Machine(QuotaMachine):
        pass

    Machine.tenants, Machine.owners, Machine.pool = tenants, owners, pool
    SEEN.clear()
    run_state_machine_as_test(
        Machine,
        settings=settings(
            max_examples=RUNS,
            stateful_step_count=STEPS,
            deadline=None,
            database=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        ),
    )
    for what in ("admitted", "preempted", "quota edit refused", "quota edit accepted"):
        assert SEEN[what] > 0, f"no example exercised: {what} ({dict(SEEN)})"
    print(f"\n{RUNS} examples x {STEPS} steps: {dict(SEEN)}")


def test_a_quota_cut_below_what_the_tenant_holds_is_a_400(db: Any, client_for: Any) -> None:
    pool = make_pool(name="cut")
    make_node(pool=pool, name="c0", accelerator_count=8)
    tenant, owner = make_tenant("cut"), make_user("cut-user")
    make_membership(tenant=tenant, user=owner, role=Role.MEMBER)
    quota = Quota.objects.create(tenant=tenant, pool=pool, accelerator_model=MODEL, guarantee=4,
                                 borrow_limit=2)  # fmt: skip
    jobs.submit_job(tenant=tenant, owner=owner, name="held", kind=JobKind.TRAINING, pool=pool,
                    priority=4, spec=_spec(4, 0))  # fmt: skip
    assert run_cycle().admitted == 1
    admin = client_for(make_user("cut-root", is_platform_admin=True))
    response = admin.patch(f"/api/v1/quotas/{quota.pk}/", {"guarantee": 2, "borrow_limit": 1},
                           format="json")  # fmt: skip
    assert response.status_code == 400, response.content
    assert "holds 4 A800" in response.json()["errors"]["borrow_limit"][0]
    response = admin.patch(f"/api/v1/quotas/{quota.pk}/", {"guarantee": 2, "borrow_limit": 2},
                           format="json")  # fmt: skip
    assert response.status_code == 200, response.content
    form = QuotaForm(
        data={"tenant": tenant.pk, "pool": pool.pk, "accelerator_model": MODEL, "guarantee": 1,
              "borrow_limit": 1, "weight": 1},
        instance=Quota.objects.get(pk=quota.pk),
    )  # fmt: skip
    assert not form.is_valid()
    assert "holds 4 A800" in form.errors["borrow_limit"][0]  # the admin form refuses it too
