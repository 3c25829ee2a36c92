"""The write path for node health: reports in, incidents, cordon/drain/spare, self-healing
restarts, alerts, node tokens. Cluster calls run after commit through ``get_backend()``;
``sync_cordons`` re-applies the database's cordon state level-triggered, so a failed call is
repaired on the next tick instead of being lost."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.accounts import tokens
from apps.accounts.models import User
from apps.clusters.backends.base import BackendError
from apps.clusters.models import Node, NodeHealth, ResourcePool
from apps.clusters.registry import get_backend
from apps.core.events import publish_pools_changed
from apps.health import catalogue
from apps.health.checkpoints import latest_checkpoint
from apps.health.models import (
    Alert,
    AlertState,
    CheckChange,
    FaultAction,
    FaultRule,
    Incident,
    IncidentJob,
    IncidentState,
    NodeCheck,
    NodeToken,
    Severity,
)
from apps.jobs import services as jobs
from apps.jobs.models import HOLDING, Allocation, Job, JobEvent, JobState, OutboxAction
from apps.jobs.notes import note
from apps.quotas.services import guaranteed, pool_capacity
from apps.scheduling.models import SchedulerLock

log = logging.getLogger("zhisuan.health")
CORDONING = (FaultAction.CORDON, FaultAction.CORDON_DRAIN)
CORDONED_NOTE = "cordoned"  # the note that dates a cordon (the what-if replay reads it)
NODE_TOKEN_PREFIX = "zsn_"  # noqa: S105 - a public marker, not a secret
DRAIN_FAULT = "drain"  # the platform's fault code of an operator's maintenance drain


# ------------------------------------------------------------------ catalogue
@dataclass(frozen=True)
class Rule:
    code: str
    severity: str
    action: str
    remediation: str
    max_remediations: int
    substitute_spare: bool
    description: str = ""


def rule_for(code: str) -> Rule:
    """Exact code, then its family, in the operators' catalogue, then the built-in defaults."""
    rows = {
        r.code: r
        for r in FaultRule.objects.filter(code__in=[code, catalogue.family(code)], enabled=True)
    }
    row = rows.get(code) or rows.get(catalogue.family(code))
    if row is not None:
        return Rule(
            row.code,
            row.severity,
            row.action,
            row.remediation,
            row.max_remediations,
            row.substitute_spare,
            row.description,
        )
    defaults = {r.code: r for r in catalogue.DEFAULT_RULES}
    spec = defaults.get(code) or defaults.get(catalogue.family(code)) or catalogue.FALLBACK
    return Rule(spec.code, spec.severity, spec.action, spec.remediation, 1, True, spec.description)


def _note(incident: Incident, what: str) -> None:
    incident.actions_taken = [*incident.actions_taken, [timezone.now().isoformat(), what]]


# ------------------------------------------------------------------ reports
@transaction.atomic
def ingest_report(*, node: Node, results: list[dict[str, Any]]) -> list[str]:
    """Record one agent round; open incidents for reported faults, close alert-only ones that
    cleared. Returns the remediations the agent should perform before its next round."""
    now = timezone.now()
    node = Node.objects.select_for_update().get(pk=node.pk)
    current = {c.check_name: c for c in NodeCheck.objects.filter(node=node)}
    reported: dict[str, set[str]] = {}
    actions: list[str] = []
    for res in results:
        check, status, faults = res["check"], res["status"], list(res.get("faults", []))
        detail = str(res.get("detail", ""))[:500]
        reported[check] = set(faults)
        row = current.get(check)
        if row is None or row.status != status or row.faults != faults:
            CheckChange.objects.create(
                node=node, check_name=check, status=status, faults=faults, detail=detail
            )
        NodeCheck.objects.update_or_create(
            node=node,
            check_name=check,
            defaults={
                "status": status,
                "faults": faults,
                "detail": detail,
                "data": res.get("data", {}),
                "reported_at": now,
                **({"since": now} if row is None or row.status != status else {}),
            },
        )
        for fault in faults:
            actions += open_fault(node=node, fault=fault, detail=detail, check=check)
    for incident in Incident.objects.filter(node=node, state=IncidentState.OPEN):
        cleared = (
            incident.check_name in reported and incident.fault not in reported[incident.check_name]
        )
        if cleared and incident.action not in CORDONING:
            _close(incident, by=None, why="fault cleared")
    return list(dict.fromkeys(actions))


def open_fault(*, node: Node, fault: str, detail: str, check: str = "") -> list[str]:
    """Open (or refresh) the incident for ``fault`` on ``node`` and take the catalogue's
    action once. Call inside a transaction holding the node's row lock."""
    now = timezone.now()
    rule = rule_for(fault)
    incident = Incident.objects.filter(node=node, fault=fault, state=IncidentState.OPEN).first()
    if incident is not None:
        incident.last_seen_at = now
        Alert.objects.filter(incident=incident, state=AlertState.OPEN).update(
            occurrences=F("occurrences") + 1
        )
        again = _still_faulty(node, incident, rule)
        if incident.action in CORDONING and not node.cordoned:
            # Defence in depth: a node must not serve while a cordoning fault is still
            # reported (uncordon is refused while the incident is open, but a cluster-side
            # or database change could still undo the cordon).
            _cordon_for(node, incident, rule, incident.action, again=True)
        incident.save()
        return again
    incident = Incident.objects.create(
        node=node,
        fault=fault,
        check_name=check,
        severity=rule.severity,
        action=rule.action,
        detail=detail[:500],
    )
    health_changed(node.pool_id)
    actions: list[str] = []
    if rule.action == FaultAction.REMEDIATE and rule.remediation:
        incident.remediations = 1
        _note(incident, f"asked the agent to {rule.remediation}")
        actions.append(rule.remediation)
    else:
        _act(node, incident, rule, rule.action)
    incident.save()
    return actions


def _still_faulty(node: Node, incident: Incident, rule: Rule) -> list[str]:
    """A fault reported again while open: try the fix again, or escalate to cordon."""
    if incident.action != FaultAction.REMEDIATE:
        return []
    if incident.remediations < rule.max_remediations and rule.remediation:
        incident.remediations += 1
        _note(incident, f"asked the agent to {rule.remediation} again")
        return [rule.remediation]
    incident.action = FaultAction.CORDON
    _note(incident, f"{rule.remediation or 'fix'} did not help: escalated")
    _act(node, incident, rule, FaultAction.CORDON)
    return []


def alert_message(node: Node, incident: Incident, rule: Rule) -> str:
    """``node: fault (detail)``; without a detail, how the fault was looked up, never the
    fallback rule's code ``*``."""
    if incident.detail:
        why = incident.detail
    elif rule.code == catalogue.FALLBACK.code:
        why = "not in the fault catalogue"
    elif rule.code != incident.fault:
        why = f"rule {rule.code}"
    else:
        return f"{node.name}: {incident.fault}"
    return f"{node.name}: {incident.fault} ({why})"


def _act(node: Node, incident: Incident, rule: Rule, action: str) -> None:
    if action in CORDONING:
        _cordon_for(node, incident, rule, action)
    raise_alert(
        node=node,
        fault=incident.fault,
        severity=incident.severity,
        message=alert_message(node, incident, rule),
        incident=incident,
    )


def _cordon_for(
    node: Node, incident: Incident, rule: Rule, action: str, *, again: bool = False
) -> None:
    """The cordoning part of an action: cordon (noted only if this made the cordon), drain
    for ``cordon_drain``, and bring in a spare unless the node already has one."""
    faulty = action == FaultAction.CORDON_DRAIN
    made = cordon_node(
        node=node,
        reason=f"{incident.fault}: {incident.detail}"[:200],
        health=NodeHealth.FAULTY if faulty else NodeHealth.DEGRADED,
    )
    if made:
        _note(incident, CORDONED_NOTE)
        if again:
            _note(incident, "the fault is still reported: cordoned again")
    else:
        _note(incident, "node already cordoned")
    if faulty:
        drain_node(node=node, incident=incident)
    if rule.substitute_spare:
        substitute_spare(node=node, incident=incident)


# ------------------------------------------------------------------ node actions
def health_changed(pool_id: int | None) -> None:
    """Tell dashboards an incident or alert of the pool's nodes opened or closed: the
    ``pools`` topic's ``pools.changed`` after commit (docs/websockets.md), which the Health
    page refetches on."""
    publish_pools_changed(pool_id)


def _after_commit_call(what: str, fn: Any, *args: Any) -> None:
    def call() -> None:
        try:
            fn(*args)
        except BackendError as exc:  # sync_cordons repairs it on the next tick
            log.warning("%s failed: %s", what, exc)

    transaction.on_commit(call)


def cordon_node(*, node: Node, reason: str, health: str | None = None) -> bool:
    """Cordon once: True if it was schedulable before. ``health`` is what a fault makes of the
    node (only ever worse); None, an operator's maintenance cordon, leaves health alone."""
    if health is not None and (health == NodeHealth.FAULTY or node.health == NodeHealth.HEALTHY):
        if node.cordoned and node.health != health:
            Node.objects.filter(pk=node.pk).update(health=health)
            publish_pools_changed(node.pool_id)
        node.health = health
    if node.cordoned:
        return False
    Node.objects.filter(pk=node.pk).update(cordoned=True, health=node.health)
    node.cordoned = True
    publish_pools_changed(node.pool_id)
    _after_commit_call(f"cordon {node.name}", get_backend().cordon, node.name, reason)
    return True


class NodeHeldError(Exception):
    """Open incidents that cordoned the node still hold it."""

    def __init__(self, node: Node, incidents: list[Incident]) -> None:
        self.incidents = incidents
        names = ", ".join(f"#{i.pk} ({i.fault})" for i in incidents)
        super().__init__(
            _(
                "{node} is held by open incident(s) {incidents}: resolve them after the repair "
                "(resolving the last one uncordons the node)"
            ).format(node=node.name, incidents=names)
        )


def holding_incidents(node: Node) -> QuerySet[Incident]:
    """Open incidents whose action cordoned the node."""
    return Incident.objects.filter(
        node=node, state=IncidentState.OPEN, action__in=CORDONING
    ).order_by("id")


def uncordon_node(*, node: Node, repaired: bool = False) -> bool:
    """Put the node back into service: True if it was cordoned. Refused while an open
    incident holds it. ``repaired`` (the last fault was resolved) makes it healthy again; an
    operator's uncordon leaves health alone, as their cordon did."""
    held = list(holding_incidents(node))
    if held:
        raise NodeHeldError(node, held)
    if not node.cordoned:
        return False
    if repaired:
        node.health = NodeHealth.HEALTHY
    Node.objects.filter(pk=node.pk).update(cordoned=False, health=node.health)
    node.cordoned = False
    publish_pools_changed(node.pool_id)
    _after_commit_call(f"uncordon {node.name}", get_backend().uncordon, node.name)
    return True


class NodeBusyError(Exception):
    """The node holds jobs' devices, so it cannot become a spare now."""


class GuaranteeError(Exception):
    """The pool would hold fewer devices than its quotas guarantee."""


def guarantee_shortfall(node: Node) -> tuple[int, int, int]:
    """(capacity without the node, guaranteed, shortfall) of the node's pool and model: a
    spare is held back from the scheduler, so it does not count towards guarantees."""
    if node.pool is None:
        return 0, 0, 0
    capacity = pool_capacity(node.pool, node.accelerator_model)
    if not node.is_spare:
        capacity -= node.accelerator_count
    total = guaranteed(node.pool.pk, node.accelerator_model)
    return capacity, total, max(0, total - capacity)


def set_spare(*, node: Node, spare: bool) -> bool:
    """Move a node into the pool's hot spares (the scheduler stops placing on it; a failed
    node's replacement comes from here) or back. Under the pool's row lock (as quota edits)
    and the admission lock, so no cycle places a job on a node that has just become a spare
    and no guarantee grows past what the pool keeps. True if it changed."""
    if node.pool_id is not None:  # the pool first, then admission: set_quota's order
        ResourcePool.objects.select_for_update().filter(pk=node.pool_id).first()
    SchedulerLock.objects.select_for_update().get_or_create(name="admission")
    if node.is_spare == spare:
        return False
    if spare and Allocation.objects.filter(node=node, job__state__in=HOLDING).exists():
        raise NodeBusyError(
            _("{node} runs jobs: drain it (or let them end) before making it a spare").format(
                node=node.name
            )
        )
    if spare:
        capacity, guaranteed, short = guarantee_shortfall(node)
        if short:
            assert node.pool is not None
            raise GuaranteeError(
                _(
                    "Making {node} a spare would leave pool {pool} {capacity} {model} devices "
                    "for {guaranteed} guaranteed ({short} short): lower the guarantees first"
                ).format(
                    node=node.name,
                    pool=node.pool.name,
                    capacity=capacity,
                    model=node.accelerator_model,
                    guaranteed=guaranteed,
                    short=short,
                )
            )
    Node.objects.filter(pk=node.pk).update(is_spare=spare)
    node.is_spare = spare
    publish_pools_changed(node.pool_id)
    return True


def drain_node(*, node: Node, incident: Incident, is_failure: bool = True) -> list[IncidentJob]:
    """Gang semantics: every job holding devices on the node is restarted as a whole.
    ``is_failure``: the restart counts against the jobs' retry budgets (a fault does; an
    operator's maintenance drain does not)."""
    job_ids = set(
        Allocation.objects.filter(node=node, job__state__in=HOLDING).values_list(
            "job_id", flat=True
        )
    )
    hit = []
    for job in (
        Job.objects.select_for_update(of=("self",)).select_related("tenant").filter(pk__in=job_ids)
    ):
        if job.state in HOLDING:
            hit.append(heal_job(job=job, incident=incident, is_failure=is_failure))
    _note(incident, f"drained: {len(hit)} job(s) restarted as whole gangs")
    _after_commit_call(f"drain {node.name}", get_backend().drain, node.name)
    return hit


def substitute_spare(*, node: Node, incident: Incident) -> Node | None:
    """Bring a hot spare of the same pool and model into service, so a job that needs the
    whole pool restarts at full size."""
    if node.pool_id is None or node.is_spare:
        return None
    if incident.spare_id is not None:  # this incident already brought one in
        return None
    replaced = (
        Incident.objects.filter(node=node, state=IncidentState.OPEN, spare__isnull=False)
        .select_related("spare")
        .first()
    )
    if replaced is not None and replaced.spare is not None:  # one replacement per failed node
        _note(incident, f"hot spare {replaced.spare.name} already replaces the node")
        return None
    spare = (
        Node.objects.select_for_update()
        .filter(
            pool_id=node.pool_id,
            is_spare=True,
            cordoned=False,
            health=NodeHealth.HEALTHY,
            accelerator_model=node.accelerator_model,
        )
        .order_by("id")
        .first()
    )
    if spare is None:
        _note(incident, "no hot spare available")
        return None
    Node.objects.filter(pk=spare.pk).update(is_spare=False)
    publish_pools_changed(spare.pool_id)
    incident.spare = spare
    _note(incident, f"hot spare {spare.name} in service")
    return spare


def drain_for_maintenance(*, node: Node, actor: User) -> Incident | None:
    """An operator's drain: cordon the node (health left alone) and restart every job on it
    elsewhere from its newest complete checkpoint, as a fault's drain does but without
    spending the jobs' retries. Recorded as a closed ``drain`` incident with the jobs it hit
    (resume points, lost GPU time); None when no job ran there, so a repeat changes nothing.
    Call inside a transaction holding the node's row lock."""
    cordon_node(node=node, reason=f"drained by {actor}")
    if not Allocation.objects.filter(node=node, job__state__in=HOLDING).exists():
        return None
    incident = Incident.objects.create(
        node=node,
        fault=DRAIN_FAULT,
        severity=Severity.INFO,
        action=FaultAction.CORDON_DRAIN,
        detail=f"maintenance drain by {actor}"[:500],
    )
    drain_node(node=node, incident=incident, is_failure=False)
    _close(incident, by=actor, why="drained")
    return incident


# ------------------------------------------------------------------ self-healing jobs
def restart_backoff(failures: int) -> timedelta:
    base = float(getattr(settings, "HEALTH_RESTART_BACKOFF_S", 10.0))
    return timedelta(seconds=min(300.0, base * 2 ** max(0, failures - 1)))


def attempt_started(job: Job) -> datetime | None:
    """When the current attempt started running (the newest ``running`` event)."""
    event = JobEvent.objects.filter(job=job, to_state=JobState.RUNNING).order_by("-id").first()
    return event.created_at if event else job.started_at


def heal_job(*, job: Job, incident: Incident, is_failure: bool = True) -> IncidentJob:
    """Restart ``job`` after a node fault, with its retry budget and a backoff; it resumes from
    its newest complete checkpoint. Lost GPU time = devices x time since that checkpoint (or
    since the attempt started). Mirrors ``relay._restart_or_fail`` without changing it.
    A maintenance drain (``is_failure=False``) restarts the same way but spends no retry."""
    now = timezone.now()
    devices = job.requested_devices or sum(
        len(a.devices) for a in Allocation.objects.filter(job=job)
    )
    checkpoint = latest_checkpoint(job)
    lost = 0.0
    started = attempt_started(job) if job.state == JobState.RUNNING else None
    if started is not None:
        since = max(started, checkpoint.created_at) if checkpoint else started
        lost = devices * max(0.0, (now - since).total_seconds())
    resume = (
        note("resumeStep", step=checkpoint.step, location=checkpoint.location)
        if checkpoint
        else note("resumeStart")
    )
    # The node, and the fault when it is one: the sentences below say the rest.
    why: dict[str, str] = {"node": incident.node.name}
    if is_failure:
        why["fault"] = incident.fault
    attempt = job.attempt
    if job.state == JobState.ADMITTED:  # never reached the cluster: back to the queue
        jobs.transition(
            job,
            JobState.QUEUED,
            reason="NodeFault" if is_failure else "NodeDrained",
            message=note("faultRequeued", **why) if is_failure else note("drainRequeued", **why),
        )
        outcome = "requeued"
    elif is_failure and job.failures >= job.max_retries:
        jobs.transition(
            job, JobState.FAILED, reason="RetriesExhausted", message=note("faultNoRetries", **why)
        )
        jobs.enqueue_outbox(job, OutboxAction.DELETE)
        outcome = "failed"
    else:
        jobs.transition(
            job,
            JobState.RESTARTING,
            reason="NodeFault" if is_failure else "NodeDrained",
            message=(
                note("faultResumes", **why, resume=resume)
                if is_failure
                else note("drainResumes", **why, resume=resume)
            ),
            extra={"attempt": job.attempt + 1, "failures": job.failures + int(is_failure)},
        )
        jobs.enqueue_outbox(job, OutboxAction.DELETE, at=now + restart_backoff(job.failures))
        outcome = "restarted"
    row = IncidentJob.objects.create(
        incident=incident,
        job=job,
        outcome=outcome,
        devices=devices,
        attempt=attempt,
        resume_step=checkpoint.step if checkpoint else None,
        resume_from=resume.text.strip()[:300],
        lost_gpu_seconds=lost,
    )
    incident.lost_gpu_seconds += lost
    return row


# ------------------------------------------------------------------ alerts
def raise_alert(
    *, node: Node, fault: str, severity: str, message: str, incident: Incident | None
) -> Alert:
    """One open alert per (node, fault): a repeat counts, it does not notify again."""
    alert = (
        Alert.objects.select_for_update()
        .filter(node=node, fault=fault, state=AlertState.OPEN)
        .first()
    )
    if alert is not None:
        Alert.objects.filter(pk=alert.pk).update(occurrences=alert.occurrences + 1)
        alert.occurrences += 1
        return alert
    alert = Alert.objects.create(
        node=node, fault=fault, severity=severity, message=message[:500], incident=incident
    )
    health_changed(node.pool_id)

    def notify() -> None:
        from apps.health.tasks import deliver_alert

        deliver_alert.delay(alert.pk)

    transaction.on_commit(notify)
    return alert


@transaction.atomic
def acknowledge_alert(*, alert: Alert, actor: User) -> Alert:
    alert = Alert.objects.select_for_update().get(pk=alert.pk)
    if alert.acknowledged_at is None:
        alert.acknowledged_at, alert.acknowledged_by = timezone.now(), actor
        alert.save(update_fields=["acknowledged_at", "acknowledged_by"])
        health_changed(alert.node.pool_id)
    return alert


# ------------------------------------------------------------------ incidents
def _close(incident: Incident, *, by: User | None, why: str) -> None:
    now = timezone.now()
    incident.state, incident.closed_at, incident.closed_by = IncidentState.CLOSED, now, by
    _note(incident, f"closed: {why}")
    incident.save()
    Alert.objects.filter(incident=incident, state=AlertState.OPEN).update(
        state=AlertState.RESOLVED, resolved_at=now
    )
    health_changed(incident.node.pool_id)


@transaction.atomic
def resolve_incident(*, incident: Incident, actor: User) -> Incident:
    """After repair: close the incident and, if it cordoned the node, uncordon the node
    unless another open incident still holds it (an alert-only incident leaves an operator's
    cordon alone)."""
    node = Node.objects.select_for_update().get(pk=incident.node_id)
    incident = Incident.objects.select_for_update().get(pk=incident.pk)
    if incident.state == IncidentState.CLOSED:
        return incident
    _close(incident, by=actor, why=f"resolved by {actor}")
    cordoned_it = incident.action in CORDONING
    if (
        cordoned_it
        and not holding_incidents(node).exists()
        and uncordon_node(node=node, repaired=True)
    ):
        _note(incident, "uncordoned")
        incident.save(update_fields=["actions_taken"])
    return incident


# ------------------------------------------------------------------ reconcile
def sync_cordons() -> int:
    """Level-triggered: make the cluster's cordons match the database. Returns fixes made."""
    backend = get_backend()
    wanted = dict(Node.objects.values_list("name", "cordoned"))
    fixed = 0
    for inv in backend.list_nodes():
        want = wanted.get(inv.name)
        if want is None or want == inv.unschedulable:
            continue
        try:
            if want:
                backend.cordon(inv.name, "zhisuan: open health incident")
            else:
                backend.uncordon(inv.name)
            fixed += 1
        except BackendError as exc:
            log.warning("sync cordon of %s failed: %s", inv.name, exc)
    return fixed


# ------------------------------------------------------------------ node tokens
@transaction.atomic
def mint_node_token(*, node: Node, actor: User | None) -> tuple[NodeToken, str]:
    """A token for ``node``'s agent; the plaintext is returned once and never stored."""
    new = tokens.generate()
    plaintext = NODE_TOKEN_PREFIX + new.plaintext[len(tokens.TOKEN_PREFIX) :]
    # One token per node: the earlier ones stop working. A rotation's predecessor has an
    # ``expires_at`` (set before this is called) and lives on until its overlap ends.
    NodeToken.objects.filter(node=node, revoked_at__isnull=True, expires_at__isnull=True).update(
        revoked_at=timezone.now()
    )
    token = NodeToken.objects.create(
        node=node, prefix=new.prefix, digest=new.digest, created_by=actor
    )
    return token, plaintext


def node_for_token(plaintext: str) -> NodeToken | None:
    if not plaintext.startswith(NODE_TOKEN_PREFIX):
        return None
    parts = tokens.split(tokens.TOKEN_PREFIX + plaintext[len(NODE_TOKEN_PREFIX) :])
    if parts is None:
        return None
    token = NodeToken.objects.select_related("node").filter(prefix=parts[0]).first()
    now = timezone.now()
    if token is None or not token_is_live(token, now) or not tokens.matches(parts[1], token.digest):
        return None
    if token.last_used_at is None:
        # The agent has the new token: the ones a rotation replaced are no longer needed.
        NodeToken.objects.filter(
            node_id=token.node_id,
            expires_at__isnull=False,
            revoked_at__isnull=True,
            created_at__lte=token.created_at,
        ).exclude(pk=token.pk).update(revoked_at=now)
    if token.last_used_at is None or now - token.last_used_at > timedelta(minutes=1):
        NodeToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token


def token_is_live(token: NodeToken, now: datetime) -> bool:
    if token.revoked_at is not None:
        return False
    return token.expires_at is None or token.expires_at > now


def revoke_node_token(*, token: NodeToken) -> None:
    NodeToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
