"""The sentences the platform itself writes on job events, as a key and its arguments.

The English text is stored in ``JobEvent.message`` as before (the CLI, the API and the audit
read it); the key and the arguments travel beside it so the dashboard can say the same in the
reader's language (``jobNote`` in frontend/src/lib/i18n/en.ts; tests/jobs/test_notes.py holds
the two catalogues to the same keys and placeholders). Text that comes from elsewhere (a
cluster's status message, a user's note) stays a plain string. A preemption's reason is the
scheduling core's own phrase (``scheduler_note``; its key is in ``schedulerNote``).

A note's argument is a value, a ``Duration``, another note (a clause said in its own words,
e.g. where a checkpoint is), or what the scheduler said elsewhere (``Said``: a job's pending
reason, as its English and its phrases). Notices to a job's owner (apps/governance) are
notes too: a title and sentences, under ``notice*`` keys.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from apps.scheduling.core.text import PHRASES, Phrase

NOTES: dict[str, str] = {
    "submittedBy": "submitted by {owner}",
    "cancelledBy": "cancelled by {actor}",
    # a job that starts after others (apps/jobs/after.py)
    "afterMet": "the jobs it starts after have succeeded; it joins the queue",
    "afterFailed": "job #{job} ({name}) failed, so this job, which starts after it, never will",
    "afterCancelled": (
        "job #{job} ({name}) was cancelled, so this job, which starts after it, never will"
    ),
    # a sweep's trial stopped early (apps/sweeps/stopping.py): the median rule, successive halving
    "earlyStopped": (
        "stopped early at step {step}: {metric} {value} is worse than the median {median} of "
        "the sweep's other trials at that step"
    ),
    "earlyStoppedRung": (
        "stopped early at the rung at step {step}: {metric} {value} ranks {rank} of the {count} "
        "trials there, and only the best {keep} go on"
    ),
    "earlyStoppedBracket": (
        "stopped early at the rung at step {step} of bracket {bracket}: {metric} {value} ranks "
        "{rank} of the {count} trials of its bracket there, and only the best {keep} go on"
    ),
    "placed": "placed on {nodes} node(s), tier {tier}",
    "objectsCreated": "objects created",
    "afterPreemption": "after preemption",
    # rolling updates of an inference service (apps/inference/rollouts.py)
    "rolloutStarted": "rolling out revision {revision}: image {image}, model {model}",
    "rolloutRollback": (
        "rolling back to revision {of} as revision {revision}: image {image}, model {model}"
    ),
    "rolloutSettings": "rolling out revision {revision}: {changes}",
    "revisionSettings": "changed {changes}",
    "rolloutPending": "revision {revision} takes effect when the service starts",
    "rolloutWaiting": "revision {revision} waits for room for a surge replica: {why}",
    "rolloutComplete": "revision {revision} serves on every replica",
    "rolloutFailed": "revision {revision} did not roll out: {why}",
    "rolloutAutoRollback": "automatic rollback: revision {revision} did not roll out",
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
    "idleReminder": "still idle since kept running; stops at {stop} UTC ({left} extension(s) left)",
    "idleExempt": "exempted by {actor}: {reason}",
    "idleStopped": "stopped: idle GPUs",
    "runtimeLimit": "stopped at its runtime limit (held its accelerators {held}, limit {limit})",
    "runtimeLimitSoon": "stops at its runtime limit in {left} ({stop} UTC)",
    "queueExpired": "expired in queue (waited {waited}, limit {limit}: {blocking})",
    "queueEscalated": "waited {waited}, limit {limit}: {blocking}",
    "noPendingReason": "no pending reason recorded",
    # where a stopped job may resume (an idle or runtime-limit stop); {where} is one of the
    # last two
    "checkpointNotApplicable": "no checkpoint applies (not a training job)",
    "checkpointNotAsked": "no checkpoint requested; {where}",
    "checkpointSaved": "checkpoint requested {at} UTC, saved at step {step}; {where}",
    "checkpointNotSaved": "checkpoint requested {at} UTC, none saved since; {where}",
    "checkpointAt": "newest complete checkpoint: step {step} at {location}",
    "checkpointNone": "no complete checkpoint registered",
    # a node fault or a maintenance drain (apps/health); {resume} is one of the last two
    "faultRequeued": "node {node} fault {fault}; requeued",
    "faultNoRetries": "node {node} fault {fault}; no retries left",
    "faultResumes": "node {node} fault {fault}; will resume from {resume}",
    "drainRequeued": "node {node} drained for maintenance; requeued",
    "drainResumes": "node {node} drained for maintenance; will resume from {resume}",
    "resumeStep": "checkpoint step {step} {location}",
    "resumeStart": "start (no checkpoint registered)",
    # why an autoscaler's extra replicas were not admitted (apps/scheduling/replicas.py)
    "serviceNotRunning": "the service is not running",
    "noRoom": "no room",
    "deviceTaken": "device {device} of node {node} is no longer free",
    "quotaChanged": "quota changed since the snapshot",
    # notices to a job's owner (apps/governance): a title, then whole sentences
    "noticeIdleWarning": "{name}: GPUs idle, stopping in {grace}",
    "noticeIdleWarningBody": (
        "Job {name} (#{job}) used at most {peak}% of its GPUs over the last {idle} (threshold "
        "{threshold}%). It will be stopped at {stop} UTC. Use 'keep running' to extend it "
        "({most} extension(s) of {extension} allowed)."
    ),
    "noticeIdleReminder": "{name}: still idle, stopping at {stop} UTC",
    "noticeIdleReminderBody": (
        "Job {name} (#{job}) has stayed idle since it was kept running. It will be stopped at "
        "{stop} UTC; 'keep running' extends it again while extensions are left ({left} of "
        "{most})."
    ),
    "noticeCheckpointAsked": (
        "A checkpoint was requested from the job (zhisuan.checkpoint_requested() turns true); "
        "without the SDK, save one yourself."
    ),
    "noticeCheckpoint": "Checkpoint: {checkpoint}.",
    "noticeIdleStopped": "{name}: stopped for idle GPUs",
    "noticeIdleStoppedBody": (
        "Job {name} (#{job}) was stopped: its GPUs stayed idle through the grace period. "
        "{gpus} GPU(s) went back to the pool."
    ),
    "noticeQueueExpired": "{name}: expired in queue",
    "noticeQueueExpiredBody": (
        "Job {name} (#{job}) expired in queue after {waited} (its limit: {limit}). "
        "Why it waited: {blocking}."
    ),
    "noticeQueueEscalated": "{name}: waiting past its limit",
    "noticeQueueEscalatedBody": (
        "Job {name} (#{job}) is still queued after {waited} (its limit: {limit}). "
        "Why it waits: {blocking}."
    ),
    "noticeRuntimeLimit": "{name}: stopped at its runtime limit",
    "noticeRuntimeLimitBody": (
        "Job {name} (#{job}) was stopped: it held its accelerators {held}, its limit is {limit}."
    ),
    "noticeRuntimeLimitSoon": "{name}: runtime limit soon",
    "noticeRuntimeLimitSoonBody": (
        "Job {name} (#{job}) stops at its runtime limit in {left} ({stop} UTC); a clone "
        "resumes from its newest checkpoint."
    ),
}


@dataclass(frozen=True)
class Duration:
    """A span of time: "1 h 05 min" (or "7 min") in English; the dashboard says it its
    reader's way, from the seconds."""

    seconds: float

    def __str__(self) -> str:
        minutes = int(self.seconds // 60)
        return f"{minutes // 60} h {minutes % 60:02d} min" if minutes >= 60 else f"{minutes} min"


@dataclass(frozen=True)
class Said:
    """What the scheduler said elsewhere (a job's pending reason) inside a note: its English as
    written, and its phrases (``pending_detail``) for the dashboard to say again."""

    english: str
    detail: list[Any] = field(default_factory=list, hash=False)

    @classmethod
    def note(cls, said: Note) -> Said:
        """One of the platform's own notes, said where the scheduler's words go."""
        return cls(said.text, [said.as_json()])

    def __bool__(self) -> bool:
        return bool(self.english)


@dataclass(frozen=True)
class Note:
    """One of ``NOTES`` with its arguments filled in."""

    key: str
    args: Mapping[str, Arg] = field(default_factory=dict, hash=False)

    @property
    def text(self) -> str:
        template = NOTES[self.key] if self.key in NOTES else PHRASES[self.key]
        return template.format(**{name: _english(value) for name, value in self.args.items()})

    def json_args(self) -> dict[str, Any]:
        """The arguments as events and notices store them: a note as ``{"key", "args"}``,
        what the scheduler said as its list of phrases (its English when it has none)."""
        return {name: _json(value) for name, value in self.args.items()}

    def as_json(self) -> dict[str, Any]:
        return {"key": self.key, "args": self.json_args()}


Arg = str | int | Note | Said | Duration


def _english(value: Arg) -> str:
    if isinstance(value, Note):
        return value.text
    if isinstance(value, Said):
        return value.english
    return str(value)


def _json(value: Arg) -> Any:
    if isinstance(value, Note):
        return value.as_json()
    if isinstance(value, Said):
        return list(value.detail) or value.english
    if isinstance(value, Duration):  # whole minutes, as the English says it
        return {"seconds": int(value.seconds // 60) * 60}
    return value


def note(key: str, **args: Arg) -> Note:
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


def split(message: Message) -> tuple[str, str, dict[str, Any]]:
    """(English text, key, arguments) of a message; a plain string has no key."""
    if isinstance(message, Note):
        return message.text, message.key, message.json_args()
    return message, "", {}
