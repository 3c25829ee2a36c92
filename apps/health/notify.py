"""Alert delivery to receivers: webhooks (JSON POST) and email (Django's email backend).
A round that leaves a receiver unserved is retried by ``tasks.deliver_alert`` with a growing
delay; each round serves only the receivers still waiting."""

from __future__ import annotations

import json
import logging
import urllib.request
from datetime import datetime

from django.conf import settings
from django.core.mail import send_mail
from django.db.models import F

from apps.health import catalogue
from apps.health.models import Alert, AlertReceiver, ReceiverKind
from apps.health.services import rule_for

log = logging.getLogger("zhisuan.health.notify")
RANK = {"info": 0, "warning": 1, "critical": 2}
DELIVERY_RETRIES = 4  # after the first round: 5 rounds in all, over about 7.5 minutes
RETRY_BASE_S = 30  # 30 s, 60 s, 120 s, 240 s


def delivered(outcome: str) -> bool:
    return outcome.startswith(("http 2", "sent"))


def delivery_state(outcome: str, attempts: int) -> str:
    """sent, retrying (another round is due) or failed (no round left)."""
    if delivered(outcome):
        return "sent"
    return "retrying" if attempts <= DELIVERY_RETRIES else "failed"


def retry_delay(retries: int) -> int:
    """Seconds before the next round, after ``retries`` retries so far."""
    return int(RETRY_BASE_S * 2**retries)


def payload(alert: Alert) -> dict[str, object]:
    return {
        "id": alert.pk,
        "node": alert.node.name,
        "fault": alert.fault,
        "severity": alert.severity,
        "message": alert.message,
        "incident": alert.incident_id,
        "created_at": alert.created_at.isoformat(),
    }


def _utc(at: datetime | str) -> str:
    moment = datetime.fromisoformat(at) if isinstance(at, str) else at
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def email_text(alert: Alert) -> tuple[str, str]:
    """Subject and body of an alert's email: what broke, where, what the platform did about it
    and where to look, for the person on call; the webhook's JSON follows, for mail filters and
    scripts that parse it."""
    node = alert.node
    subject = f"[zhisuan {alert.severity}] {node.name}: {alert.fault}"
    where = f"pool {node.pool.name}" if node.pool is not None else "in no pool"
    lines = [
        f"{alert.severity.capitalize()}: fault {alert.fault} on node {node.name} ({where}).",
        alert.message,
    ]
    rule = rule_for(alert.fault)  # the catalogue entry that decided what was done
    if rule.code != catalogue.FALLBACK.code and rule.description:
        lines.append(f"What it means: {rule.description}.")
    lines.append("")
    incident = alert.incident
    if incident is not None:
        lines.append(
            f"Incident #{incident.pk} ({incident.state}), opened {_utc(incident.opened_at)}; "
            f"the rule's action: {incident.get_action_display().lower()}."
        )
        taken = [(at, what) for at, what in incident.actions_taken if isinstance(what, str)]
        if taken:
            lines.append("What the platform did:")
            lines.extend(f"  {_utc(at)}  {what}" for at, what in taken)
        lines.append("")
    lines += [
        f"Raised {_utc(alert.created_at)}. Acknowledge it and follow the incident on the "
        f"dashboard's Health page: {settings.PUBLIC_API_URL}/health",
        "",
        "The alert as webhooks receive it:",
        json.dumps(payload(alert), indent=2),
    ]
    return subject, "\n".join(lines)


def _webhook(url: str, body: dict[str, object]) -> str:
    request = urllib.request.Request(  # noqa: S310 - an operator-configured http(s) URL
        url,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310
        return f"http {response.status}"


def deliver(alert_id: int) -> dict[str, str]:
    """Send once to each matching receiver not yet delivered to (a retry skips those done)."""
    alert = Alert.objects.select_related("node__pool", "incident").filter(pk=alert_id).first()
    if alert is None:
        return {}
    outcome = dict(alert.deliveries)
    body = payload(alert)
    email: tuple[str, str] | None = None  # written once a round, for the first email receiver
    for receiver in AlertReceiver.objects.filter(enabled=True):
        key = str(receiver.pk)
        if delivered(outcome.get(key, "")):
            continue
        if RANK[alert.severity] < RANK[receiver.min_severity]:
            continue
        try:
            if receiver.kind == ReceiverKind.WEBHOOK:
                outcome[key] = _webhook(receiver.target, body)
            else:
                email = email or email_text(alert)
                send_mail(email[0], email[1], None, [receiver.target])
                outcome[key] = "sent"
        except (OSError, ValueError) as exc:  # URLError, SMTP errors, timeouts, a bad URL
            outcome[key] = f"error: {exc}"[:200]
            log.warning("alert %s to %s failed: %s", alert.pk, receiver, exc)
    Alert.objects.filter(pk=alert.pk).update(
        deliveries=outcome, delivery_attempts=F("delivery_attempts") + 1
    )
    return outcome
