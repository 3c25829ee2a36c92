"""The scheduler's pending reasons as phrases (apps/scheduling/core/text.py): the English the API
and the CLI show is exactly what the phrases say, the JSON the dashboard reads carries all of
it, and the dashboard's catalogues (``schedulerNote`` in en.ts and zh.ts) have every phrase with
the same placeholders, so a reason cannot ship that the dashboard shows wrong."""

from __future__ import annotations

import ast
import re
import string
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from apps.scheduling.core.model import PendingCode
from apps.scheduling.core.text import EMPTY, PHRASES, Items, Text, Time, phrase, say
from apps.scheduling.core.topology import TIER_PHRASES
from tests.scheduling_core.helpers import job, nodes, pending, run, snap, whole
from tests.ui_catalogue import section

CORE = Path(__file__).resolve().parents[2] / "apps" / "scheduling" / "core"


def _placeholders(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def english_from_json(detail: Any) -> str:
    """The English of ``pending_detail`` rebuilt from the JSON alone, as a client would."""
    if isinstance(detail, list):
        return "; ".join(english_from_json(c) for c in detail)
    if isinstance(detail, dict):
        if "key" in detail:
            args = {k: english_from_json(v) for k, v in detail["args"].items()}
            return PHRASES[detail["key"]].format(**args)
        if "items" in detail:
            return ", ".join(english_from_json(v) for v in detail["items"])
        return str(detail["time"])
    return str(detail)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_dashboard_has_every_phrase_with_its_placeholders(language: str) -> None:
    catalogue = section("schedulerNote", language)
    assert set(catalogue) == set(PHRASES)
    for key, template in PHRASES.items():
        found = set(re.findall(r"\{\{(\w+)\}\}", catalogue[key]))
        assert found == _placeholders(template), key


def test_the_english_reads_the_same_on_the_dashboard() -> None:
    catalogue = section("schedulerNote")
    for key, template in PHRASES.items():
        assert catalogue[key] == re.sub(r"\{(\w+)\}", r"{{\1}}", template), key


def test_every_phrase_the_core_writes_is_in_the_catalogue_with_its_arguments() -> None:
    """``say`` and ``phrase`` are only called with a literal key and keyword arguments, so
    a wrong key or argument is found here, not in a scheduling cycle."""
    used: set[str] = set()
    for path in CORE.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in {"say", "phrase"}
            ):
                continue
            if path.name == "text.py":
                continue  # the definitions' own forwarding calls
            if ast.unparse(node) == "phrase(TIER_PHRASES[limit])":
                continue  # the tiers, checked below
            assert node.args and isinstance(node.args[0], ast.Constant), (path, node.lineno)
            key = str(node.args[0].value)
            assert key in PHRASES, (path.name, node.lineno, key)
            names = {kw.arg for kw in node.keywords}
            assert None not in names, (path.name, node.lineno)  # no **kwargs
            assert names == _placeholders(PHRASES[key]), (path.name, node.lineno, key)
            used.add(key)
    tiers = set(TIER_PHRASES.values())
    assert all(not _placeholders(PHRASES[key]) for key in tiers)
    assert used | tiers == set(PHRASES)  # and no phrase is left unused


def test_a_text_renders_nested_phrases_lists_and_times() -> None:
    rest = say("noQuota", tenant="t", model="A800", pool="p") + say("drainUnknown")
    text = say("gangOff", placed=2, total=4, rest=rest) + say(
        "heldUntil", nodes=3, until=Time(datetime(2026, 12, 6, 3, 0))
    )
    assert str(text) == (
        "gang is off: 2 of 4 replicas placed; the rest: tenant 't' has no A800 quota in pool "
        "'p'; some of them run work without a runtime limit, so when they drain is unknown; "
        "3 nodes are held for it until 2026-12-06T03:00:00"
    )
    assert text.as_json()[1] == {
        "key": "heldUntil",
        "args": {"nodes": 3, "until": {"time": "2026-12-06T03:00:00"}},
    }
    assert english_from_json(text.as_json()) == str(text)
    listed = say("heldShort", shape=phrase("shapeTotal", need=16, model="H100"), held=8,
                 model="H100", jobs=Items(("7", "9")))  # fmt: skip
    assert str(listed) == "needs 16 H100; 8 of the free H100 are held for starving job(s) 7, 9"
    assert not EMPTY and str(EMPTY) == "" and EMPTY + listed == listed
    assert len({listed, EMPTY + listed, text}) == 2  # hashable, as decisions were with strings
    with pytest.raises(KeyError):
        say("noSuchPhrase")


def test_a_pending_reason_carries_its_english_as_phrases() -> None:
    d = run(snap(nodes(1)), [job("big", whole(4, 8))])
    reason = pending(d)["big"]
    assert reason.code == PendingCode.CAPACITY
    assert isinstance(reason.text, Text)
    assert reason.text.as_json()[0]["key"] == "capacityShort"
    assert english_from_json(reason.text.as_json()) == reason.message
