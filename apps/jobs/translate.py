"""The platform's notes said in a person's language on the server, for what it writes to them
when they are not looking at the dashboard (notices by email).

A note travels as ``{"key", "args"}`` (apps/jobs/notes.py; the scheduler's phrases likewise,
apps/scheduling/core/text.py). English is the text the server already wrote; Chinese comes
from the dashboard's own catalogue (frontend/src/lib/i18n/zh.ts, copied into notes.zh.json by
scripts/export_notes.py), said the way the dashboard's ``noteText`` says it
(frontend/src/features/jobs/schedulerText.ts): arguments that are notes, lists of clauses,
``{"items"}``, ``{"time"}`` and ``{"seconds"}``. A note it cannot say whole (a key the
catalogue lacks, an argument missing) gives the English, never half of each.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")


class UnsayableError(Exception):
    """The note cannot be said whole in the language."""


@cache
def _catalogue() -> dict[str, dict[str, str]]:
    path = Path(__file__).with_name("notes.zh.json")
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return {name: section for name, section in data.items() if isinstance(section, dict)}


def duration_zh(seconds: float) -> str:
    """Its two largest units, zero parts left out: "2小时", "1小时30分钟", "45秒"."""
    left = max(0, round(seconds))
    parts: list[tuple[int, str]] = []
    for size, unit in ((86_400, "天"), (3600, "小时"), (60, "分钟"), (1, "秒")):
        parts.append((left // size, unit))
        left %= size
    first = next((i for i, (n, _) in enumerate(parts) if n > 0), None)
    if first is None:
        return "0秒"
    return "".join(f"{n}{unit}" for n, unit in parts[first : first + 2] if n > 0)


def time_zh(iso: str) -> str:
    """A moment in UTC, as the dashboard writes Chinese dates: "2026/12/07 14:05:00 UTC"."""
    at = datetime.fromisoformat(iso)
    if at.tzinfo is not None:
        at = at.astimezone(UTC)
    return at.strftime("%Y/%m/%d %H:%M:%S UTC")


class _Chinese:
    clause = "；"
    list = "、"

    def phrase(self, value: object) -> str:
        if not isinstance(value, Mapping) or not isinstance(value.get("args"), Mapping):
            raise UnsayableError
        key, args = value.get("key"), value["args"]
        catalogue = _catalogue()
        name = next((c for c in ("jobNote", "schedulerNote") if key in catalogue[c]), None)
        if name is None or not isinstance(key, str):
            raise UnsayableError
        tiers = catalogue["jobNoteTier"]

        def fill(match: re.Match[str]) -> str:
            arg = match.group(1)
            if arg not in args:
                raise UnsayableError
            given = args[arg]
            if name == "jobNote" and arg == "tier" and isinstance(given, str) and given in tiers:
                return tiers[given]
            return self.value(given)

        return _PLACEHOLDER.sub(fill, catalogue[name][key])

    def value(self, value: object) -> str:
        if isinstance(value, bool):
            raise UnsayableError
        if isinstance(value, float) and value.is_integer():
            return str(int(value))  # as JavaScript's String(1.0) says it
        if isinstance(value, str | int | float):
            return str(value)
        if isinstance(value, list):
            return self.clause.join(self.phrase(c) for c in value)
        if isinstance(value, Mapping):
            if "key" in value:
                return self.phrase(value)
            if isinstance(value.get("items"), list):
                return self.list.join(self.value(v) for v in value["items"])
            if isinstance(value.get("time"), str):
                return time_zh(value["time"])
            if isinstance(value.get("seconds"), int | float):
                return duration_zh(value["seconds"])
        raise UnsayableError


def note_text(note: object, language: str, english: str) -> str:
    """One note (``{"key", "args"}``) in ``language``; ``english`` when it is English or the
    note cannot be said whole."""
    if language != "zh":
        return english
    try:
        return _Chinese().phrase(note)
    except UnsayableError:
        return english


def sentences_text(notes: Sequence[object], language: str, english: str) -> str:
    """Whole sentences (a notice's body), each a note; ``english`` when one cannot be said."""
    if language != "zh":
        return english
    try:
        return "".join(_Chinese().phrase(n) for n in notes)
    except UnsayableError:
        return english
