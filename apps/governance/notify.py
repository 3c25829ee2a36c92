"""In-app notices and their webhook/email copies.

The notice row is written in the caller's transaction; delivery runs after commit in a worker
(``tasks.deliver_notification``), once per channel: a retry skips channels already served or
failed for good. A channel that failed in a way worth retrying (a connection error, 408, 429,
5xx) is tried again by the governance pass after 1 min, 5 min, 30 min and 2 h
(``rules.RETRY_AFTER_S``), then given up; a receiver may so see a notice twice, and its ``id``
says so.
A notice is said as notes (apps/jobs/notes.py): its title and body are stored in English, which
the webhook carries, and its ``detail`` (the notes' keys and arguments) lets the dashboard say
it in the reader's language, and the email in the recipient's (``User.language``, which the
dashboard's language switch sets; apps/jobs/translate.py).
"""

from __future__ import annotations

import http.client
import logging
from collections.abc import Sequence
from datetime import datetime, timedelta

from django.core.mail import send_mail
from django.db import transaction
from django.utils import timezone

from apps.accounts.models import User
from apps.governance import rules
from apps.governance.models import NoticeKind, Notification
from apps.governance.webhook import UnsafeTargetError, post_json
from apps.jobs import translate
from apps.jobs.models import Job
from apps.jobs.notes import Note
from apps.tenancy.models import Tenant

log = logging.getLogger("zhisuan.governance.notify")


def notify(
    *,
    tenant: Tenant,
    recipient: User,
    kind: NoticeKind,
    job: Job | None,
    title: Note,
    body: Sequence[Note],
) -> Notification:
    """A notice of a title and whole sentences."""
    notice = Notification.objects.create(
        tenant=tenant,
        recipient=recipient,
        kind=kind,
        job=job,
        title=title.text[:200],
        body=" ".join(sentence.text for sentence in body)[:1000],
        detail={"title": title.as_json(), "body": [sentence.as_json() for sentence in body]},
    )

    def send() -> None:
        from apps.governance.tasks import deliver_notification

        deliver_notification.delay(notice.pk)

    transaction.on_commit(send)
    return notice


def payload(notice: Notification) -> dict[str, object]:
    return {
        "id": notice.pk,
        "tenant": notice.tenant.slug,
        "recipient": notice.recipient.get_username(),
        "kind": notice.kind,
        "job": notice.job_id,
        "title": notice.title,
        "body": notice.body,
        "detail": notice.detail,
        "created_at": notice.created_at.isoformat(),
    }


def said_to_recipient(notice: Notification) -> tuple[str, str]:
    """The notice's title and body in its recipient's language (English when unset)."""
    language = notice.recipient.language
    detail = notice.detail if isinstance(notice.detail, dict) else {}
    title = translate.note_text(detail.get("title"), language, notice.title)
    body = detail.get("body")
    if not isinstance(body, list) or not body:  # a notice without its notes: as stored
        return title, notice.body
    return title, translate.sentences_text(body, language, notice.body)


def deliver(notice_id: int) -> dict[str, str]:
    """Email the recipient (when they have an address) and POST to the tenant's webhook."""
    from apps.governance.policy import effective_policy

    notice = Notification.objects.select_related("tenant", "recipient").filter(pk=notice_id).first()
    if notice is None:
        return {}
    outcome = dict(notice.deliveries)
    channels: dict[str, str] = {}
    if notice.recipient.email:
        channels["email"] = notice.recipient.email
    webhook = effective_policy(notice.tenant).webhook_url
    if webhook:
        channels["webhook"] = webhook
    for channel, target in channels.items():
        said = outcome.get(channel, "")
        if said and not rules.delivery_retryable(said):
            continue  # served ("sent", "http 2xx"), or failed for good
        try:
            if channel == "email":
                title, body = said_to_recipient(notice)
                send_mail(f"[zhisuan {notice.tenant.slug}] {title}", body, None, [target])
                outcome[channel] = "sent"
            else:
                # Checked again now, not only when saved: the name may resolve elsewhere today.
                outcome[channel] = post_json(target, payload(notice))
        except UnsafeTargetError as exc:
            outcome[channel] = f"refused: {exc}"[:200]
            log.warning("notice %s via %s refused: %s", notice.pk, channel, exc)
        except (OSError, http.client.HTTPException) as exc:  # SMTP errors, timeouts, bad replies
            outcome[channel] = f"error: {exc}"[:200]
            log.warning("notice %s via %s failed: %s", notice.pk, channel, exc)
    attempts = notice.delivery_attempts + 1
    wait = rules.retry_after_s(attempts)
    again = wait is not None and any(
        rules.delivery_retryable(outcome.get(channel, "")) for channel in channels
    )
    Notification.objects.filter(pk=notice.pk).update(
        deliveries=outcome,
        delivery_attempts=attempts,
        retry_at=timezone.now() + timedelta(seconds=wait) if again and wait else None,
    )
    return outcome


def redeliver_due(now: datetime, most: int = 100) -> int:
    """Queue the notices whose retry is due (the governance pass calls this). Each is claimed
    by clearing its ``retry_at`` in a conditional update, so passes that overlap queue it once;
    the delivery sets the next retry if one is still due."""
    from apps.governance.tasks import deliver_notification

    claimed: list[int] = []
    due = Notification.objects.filter(retry_at__lte=now).order_by("retry_at")
    for pk, at in due.values_list("pk", "retry_at")[:most]:
        if Notification.objects.filter(pk=pk, retry_at=at).update(retry_at=None):
            claimed.append(pk)

    def send() -> None:
        for pk in claimed:
            deliver_notification.delay(pk)

    if claimed:
        transaction.on_commit(send)
    return len(claimed)
