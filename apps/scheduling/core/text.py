"""The sentences the scheduling core writes for people, as keys and arguments.

Why a job waits and why a running job was stopped. A pending reason is a ``Text``: clauses
joined by "; ", each a ``Phrase`` (a key of ``PHRASES`` and its arguments). An argument is a
number, a name, another phrase (a tier, a job's shape), a ``Text`` (the reason a partly
placed gang's other replicas wait), an ``Items`` list (the models a pool offers) or a
``Time``. The English is what the API's
``pending_message`` and the CLI show; ``as_json`` travels beside it (``pending_detail``) so the
dashboard says the same in the reader's language (``schedulerNote`` in
frontend/src/lib/i18n/en.ts; tests/scheduling_core/test_text.py holds the two catalogues to
the same keys and placeholders). A preemption's reason is one ``Phrase`` of flat arguments,
written on the victim's event as a note (apps/jobs/notes.py). Plain Python, like the rest of
the core.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

PHRASES: dict[str, str] = {
    # the request as written
    "duplicateId": "the job id appears twice in the queue",
    "alreadyRunning": "a job with this id is already running",
    "badPriority": "priority {priority} is not one of P0..P5",
    "noGroups": "the job has no replica groups",
    "groupNoReplicas": "group '{group}' needs at least one replica",
    "groupNegative": "group '{group}' has a negative resource request",
    "groupBadShare": (
        "group '{group}' asks for {milli} milli of a device; a share must be between 1 and "
        "999 milli (use accelerators=1 for a whole device)"
    ),
    "groupMixed": "group '{group}' asks for whole devices and a fractional share at once",
    "groupTwice": "replica group name '{group}' is used twice",
    # policy and order
    "blockedBehind": (
        "waiting behind job {job} in pool '{pool}' (backfill is off, so the queue is served "
        "strictly in order)"
    ),
    "sharingDisabled": "GPU sharing is disabled by policy",
    "overMaxWait": "waited {waited}, over its max wait of {limit}",
    "afterJobs": "starts after job(s) {jobs} succeed",
    # quota
    "noQuota": "tenant '{tenant}' has no {model} quota in pool '{pool}'",
    "overQuota": (
        "quota: tenant '{tenant}' would use {after} {model} in pool '{pool}', over its limit "
        "of {limit} (guarantee {guarantee} + borrowing {borrow}); {used} in use"
    ),
    "quotaKeptStarving": (
        "tenant '{tenant}' keeps its quota room in pool '{pool}' for starving job {job} "
        "(P{priority})"
    ),
    "quotaKeptPlanned": (
        "tenant '{tenant}' keeps quota room in pool '{pool}' for a planned large job, and this "
        "job is not declared to end before that one starts"
    ),
    # what the pool has
    "poolMissing": "pool '{pool}' does not exist",
    "noMatch": "no schedulable node in pool '{pool}' matches {wanted}; the pool has {offered}",
    "anyModel": "any model",
    "models": "model in [{models}]",
    "vendor": "vendor {vendor}",
    "arch": "arch {arch}",
    "noAcceleratorNodes": "no schedulable accelerator nodes",
    "replicaTooBig": (
        "each '{group}' replica needs {k} {model} on one node, but the largest {model} node in "
        "pool '{pool}' has {most}"
    ),
    "sharesShort": (
        "needs {replicas} x {milli}m shares of {model}; the most left on a shared device is "
        "{best}m and {free} whole {model} are free in pool '{pool}'"
    ),
    "cpuShort": "no node in pool '{pool}' has {cpu}m CPU and {mem}Mi memory free for '{group}'",
    "cpuShortEvery": (
        "no node in pool '{pool}' has {cpu}m CPU and {mem}Mi memory free for every '{group}' "
        "replica"
    ),
    "shapeReplicas": "{need} {model} ({replicas} x {k})",
    "shapeTotal": "{need} {model}",
    "topologyShort": "needs {shape} under {tier}; largest free block under {tier} is {block}",
    "softTopologyWait": (
        "soft topology: it waits for that within its topology patience (or while nodes held "
        "for it drain), then takes any placement"
    ),
    "capacityShort": (
        "needs {shape} in pool '{pool}'; {usable} free on nodes that can host a {k}-device "
        "replica ({free} free in total)"
    ),
    "heldShort": "needs {shape}; {held} of the free {model} are held for starving job(s) {jobs}",
    "resourcesShort": (
        "enough free {model} by count, but no placement also gives each replica its CPU, "
        "memory and labels ({asks})"
    ),
    "ask": "'{group}' needs {cpu}m CPU and {mem}Mi",
    "askLabels": "'{group}' needs {cpu}m CPU and {mem}Mi on nodes labelled {labels}",
    "tierNode": "one node",
    "tierLeaf": "one leaf switch",
    "tierSu": "one Scalable Unit",
    "tierSpine": "one spine",
    "tierPool": "the pool",
    # what happens next
    "noPreemptRoom": "preempting eligible P4/P5 work would not make room",
    "gangOff": "gang is off: {placed} of {total} replicas placed; the rest: {rest}",
    "plannedStart": "planned to start within {wait} on {nodes} held nodes",
    "heldUntil": "{nodes} nodes are held for it until {until}",
    "drainUnknown": "some of them run work without a runtime limit, so when they drain is unknown",
    "drainWithin": "the runtime limits of the work on them free them within {wait}",
    # why a running job was stopped (its Preempted event)
    "reclaimedBy": (
        "reclaimed by tenant '{tenant}' for job {job} (P{priority}): tenant '{victimTenant}' "
        "was borrowing {model} above its guarantee in pool '{pool}'"
    ),
    "preemptedBy": (
        "preempted by job {job} (P{priority}, tenant '{tenant}'), which needs {devices} "
        "{model} in pool '{pool}'; P{victimPriority} work yields to P0-P2"
    ),
}


@dataclass(frozen=True, slots=True)
class Items:
    """A list inside a sentence (models, job ids): ", " in English."""

    items: tuple[Arg, ...]


@dataclass(frozen=True, slots=True)
class Time:
    """A moment: ISO 8601 in English; the dashboard writes it the reader's way."""

    at: datetime


@dataclass(frozen=True, slots=True)
class Phrase:
    key: str
    # Not hashed (a dict cannot be): equal phrases still hash alike, by their key.
    args: dict[str, Arg] = field(default_factory=dict, hash=False)

    def __str__(self) -> str:
        return _english(self)


@dataclass(frozen=True, slots=True)
class Text:
    """Clauses of one reason; adding two texts joins them."""

    clauses: tuple[Phrase, ...] = ()

    def __add__(self, other: Text) -> Text:
        return Text(self.clauses + other.clauses)

    def __bool__(self) -> bool:
        return bool(self.clauses)

    def __str__(self) -> str:
        return "; ".join(_english(c) for c in self.clauses)

    def as_json(self) -> list[dict[str, Any]]:
        """The clauses as the API sends them (``pending_detail``)."""
        return [_json(c) for c in self.clauses]


Arg = str | int | Phrase | Text | Items | Time

EMPTY = Text()


def phrase(key: str, **args: Arg) -> Phrase:
    """A phrase; a key missing from ``PHRASES`` fails here, where it is written."""
    if key not in PHRASES:
        raise KeyError(key)
    return Phrase(key, args)


def say(key: str, **args: Arg) -> Text:
    """A reason of one clause."""
    return Text((phrase(key, **args),))


def _english(value: Arg) -> str:
    if isinstance(value, Phrase):
        return PHRASES[value.key].format(**{k: _english(v) for k, v in value.args.items()})
    if isinstance(value, Items):
        return ", ".join(_english(v) for v in value.items)
    if isinstance(value, Time):
        return value.at.isoformat()
    return str(value)


def _json(value: Arg) -> Any:
    """Phrases as ``{"key", "args"}``, texts as lists of phrases, lists as ``{"items"}`` and
    moments as ``{"time"}``; numbers and names as they are."""
    if isinstance(value, Phrase):
        return {"key": value.key, "args": {k: _json(v) for k, v in value.args.items()}}
    if isinstance(value, Text):
        return value.as_json()
    if isinstance(value, Items):
        return {"items": [_json(v) for v in value.items]}
    if isinstance(value, Time):
        return {"time": value.at.isoformat()}
    return value
