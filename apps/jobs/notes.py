"""The sentences the platform itself writes on job events, as a key and its arguments.

The English text is stored in ``JobEvent.message`` as before (the CLI, the API and the audit
read it); the key and the arguments travel beside it so the dashboard can say the same in the
reader's language (``jobNote`` in frontend/src/lib/i18n/en.ts; tests/jobs/test_notes.py holds
the two catalogues to the same keys and placeholders). Text that comes from elsewhere (a
cluster's status message, a user's note) stays a plain string. A preemption's reason is the
scheduling core's own phrase (``scheduler_note``; its key is in ``schedulerNote``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from apps.scheduling.core.text import PHRASES, Phrase

NOTES: dict[str, str] = {
    "submittedBy": "submitted by {owner}",
    "cancelledBy": "cancelled by {actor}",
    "placed": "placed on {nodes} node(s), tier {tier}",
    "objectsCreated": "objects created",
    "afterPreemption": "after preemption",
    "resumeNotebook": "attempt {attempt} restarts the notebook; files in its home folder are kept",
    "resumeReplicas": "attempt {attempt} starts new replicas",
    "resumeFromStart": "attempt {attempt} starts from the beginning (no complete checkpoint yet)",
    "resumeCheckpoint": "attempt {attempt} resumes from the checkpoint at step {step}",
    "homeFrom": "restarted by {actor}; mounts the home folder of notebook #{job}",
    "homeDeletedBy": "files in the home folder deleted by {actor}",
    "homeExpired": "files in the home folder deleted: no notebook used them for {days} days",
    # governance (apps/governance/services.py); times are UTC, durations like "1 h 05 min"
    "idleWarning": (
        "GPUs below {threshold}% for {idle} (peak {peak}%); stops at {stop} UTC unless kept running"
    ),
    "idleCleared": "GPUs busy again ({busy}%)",
    "idleExtended": "kept running ({used}/{most}); stops at {stop} UTC if still idle",
    "idleExempt": "exempted by {actor}: {reason}",
    "idleStopped": "stopped: idle GPUs",
    "runtimeLimit": "stopped at its runtime limit (held its accelerators {held}, limit {limit})",
    "runtimeLimitSoon": "stops at its runtime limit in {left} ({stop} UTC)",
}


@dataclass(frozen=True)
class Note:
    """One of ``NOTES`` with its arguments filled in."""

    key: str
    args: Mapping[str, str | int] = field(default_factory=dict)

    @property
    def text(self) -> str:
        template = NOTES[self.key] if self.key in NOTES else PHRASES[self.key]
        return template.format(**self.args)


def note(key: str, **args: str | int) -> Note:
    """A note; a key that is not in the catalogue, or a missing argument, fails here at once."""
    made = Note(key, args)
    made.text  # noqa: B018 - formats now, so a wrong key or argument fails at the call site
    return made


def scheduler_note(said: Phrase) -> Note:
    """A sentence of the scheduling core (a preemption's reason) as an event's note: the
    dashboard finds its key in ``schedulerNote``. Only flat phrases fit an event."""
    args: dict[str, str | int] = {}
    for name, value in said.args.items():
        if not isinstance(value, str | int):
            raise TypeError(f"{said.key}: argument {name} is not a value; events take values")
        args[name] = value
    return Note(said.key, args)


Message = str | Note


def split(message: Message) -> tuple[str, str, dict[str, str | int]]:
    """(English text, key, arguments) of a message; a plain string has no key."""
    if isinstance(message, Note):
        return message.text, message.key, dict(message.args)
    return message, "", {}
