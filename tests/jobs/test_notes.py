"""The platform's own event sentences (apps/jobs/notes.py) travel as a key and arguments
beside their English text, and the dashboard's catalogue (``jobNote`` in en.ts) has the same
keys with the same placeholders, so a note cannot ship that the dashboard shows wrong."""

from __future__ import annotations

import ast
import re
import string
from pathlib import Path
from typing import Any

import pytest

from apps.jobs.models import JobEvent
from apps.jobs.notes import NOTES, Duration, Said, note, scheduler_note
from apps.scheduling.core.text import PHRASES, phrase
from apps.tenancy.models import Role
from tests.conftest import World
from tests.jobs.conftest import Cluster, training_body
from tests.ui_catalogue import section

ROOT = Path(__file__).resolve().parents[2]


def _python_placeholders(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_dashboard_has_every_note_with_its_placeholders(language: str) -> None:
    catalogue = section("jobNote", language)
    assert set(catalogue) == set(NOTES)
    for key, template in NOTES.items():
        assert set(re.findall(r"\{\{(\w+)\}\}", catalogue[key])) == _python_placeholders(
            template
        ), key


def test_the_english_reads_the_same_on_the_dashboard() -> None:
    catalogue = section("jobNote")
    for key, template in NOTES.items():
        assert catalogue[key] == re.sub(r"\{(\w+)\}", r"{{\1}}", template), key


def test_every_note_the_code_writes_is_in_the_catalogue() -> None:
    used: set[str] = set()
    for path in (ROOT / "apps").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "note"
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                used.add(str(node.args[0].value))
    assert {"submittedBy", "placed", "resumeCheckpoint"} <= used  # the scan finds the calls
    assert used <= set(NOTES)


def test_the_scheduler_s_phrases_travel_as_notes_under_their_own_keys() -> None:
    # One key, one catalogue: the dashboard looks in jobNote first, then schedulerNote.
    assert not set(NOTES) & set(PHRASES)
    said = phrase("reclaimedBy", tenant="nlp", job="7", priority=1, victimTenant="vision",
                  model="A800", pool="train")  # fmt: skip
    made = scheduler_note(said)
    assert (made.key, made.text) == ("reclaimedBy", str(said))
    assert made.args["priority"] == 1
    with pytest.raises(TypeError):
        scheduler_note(phrase("heldShort", shape=phrase("shapeTotal", need=8, model="A800"),
                              held=8, model="A800", jobs="1"))  # fmt: skip


def test_a_wrong_key_or_missing_argument_fails_where_it_is_written() -> None:
    with pytest.raises(KeyError):
        note("noSuchNote")
    with pytest.raises(KeyError):
        note("submittedBy")
    assert note("placed", nodes=2, tier="leaf").text == "placed on 2 node(s), tier leaf"


@pytest.mark.django_db
def test_events_carry_key_and_arguments_beside_the_english(
    world: World, client_for: Any, cluster: Cluster
) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    created = client.post("/api/v1/tenants/tenant-a/jobs/", training_body(cluster.pool),
                          format="json")  # fmt: skip
    assert created.status_code == 201, created.json()
    job_id = created.json()["id"]
    row = JobEvent.objects.get(job_id=job_id, reason="Submitted")
    owner = str(world.user("a", Role.MEMBER))
    assert (row.message, row.message_key, row.message_args) == (
        f"submitted by {owner}",
        "submittedBy",
        {"owner": owner},
    )
    events = client.get(f"/api/v1/tenants/tenant-a/jobs/{job_id}/events/").json()
    submitted = next(e for e in events if e["reason"] == "Submitted")
    assert submitted["message_key"] == "submittedBy"
    assert submitted["message_args"] == {"owner": owner}
    cancelled = client.post(f"/api/v1/tenants/tenant-a/jobs/{job_id}/cancel/")
    assert cancelled.status_code == 200
    row = JobEvent.objects.get(job_id=job_id, reason="Cancelled")
    assert row.message_key == "cancelledBy" and row.message == f"cancelled by {owner}"


def test_a_note_says_nested_notes_and_the_scheduler_s_words_in_english_and_as_json() -> None:
    where = note("checkpointAt", step=400, location="s3://ckpt/400")
    made = note("noticeCheckpoint", checkpoint=note("checkpointNotAsked", where=where))
    assert made.text == (
        "Checkpoint: no checkpoint requested; newest complete checkpoint: step 400 at "
        "s3://ckpt/400."
    )
    assert made.json_args() == {
        "checkpoint": {
            "key": "checkpointNotAsked",
            "args": {"where": {"key": "checkpointAt", "args": {"step": 400,
                                                              "location": "s3://ckpt/400"}}},
        }
    }  # fmt: skip
    detail = [{"key": "noQuota", "args": {"tenant": "cv", "model": "A800", "pool": "p1"}}]
    said = Said("tenant 'cv' has no A800 quota in pool 'p1'", detail)
    expired = note("queueExpired", waited="2 h 00 min", limit="2 h 00 min", blocking=said)
    assert expired.text == (
        "expired in queue (waited 2 h 00 min, limit 2 h 00 min: tenant 'cv' has no A800 quota "
        "in pool 'p1')"
    )
    assert expired.json_args()["blocking"] == detail
    # Words recorded before the scheduler's phrases were: the English is all there is.
    before = note("queueEscalated", waited="1", limit="1", blocking=Said("full", []))
    assert before.json_args()["blocking"] == "full"
    with pytest.raises(KeyError):  # a nested note's placeholders are checked like any other
        note("noticeCheckpoint", checkpoint=note("checkpointNotAsked"))


def test_a_duration_reads_in_minutes_and_travels_as_whole_minutes_in_seconds() -> None:
    made = note("runtimeLimit", held=Duration(3959), limit=Duration(59))
    assert (
        made.text == "stopped at its runtime limit (held its accelerators 1 h 05 min, limit 0 min)"
    )
    assert made.json_args() == {"held": {"seconds": 3900}, "limit": {"seconds": 0}}
