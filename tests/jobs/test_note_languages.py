"""Notes said on the server in a person's language (apps/jobs/translate.py): the Chinese is the
dashboard's own catalogue, copied, and a notice emailed to someone who chose Chinese reads in
Chinese; what cannot be said whole stays English."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest
from django.core import mail

from apps.governance import notify
from apps.governance.models import NoticeKind
from apps.jobs import translate
from apps.jobs.notes import NOTES, Duration, Said, note
from apps.scheduling.core.text import Items, phrase, say
from apps.tenancy.models import Role
from tests.conftest import World
from tests.ui_catalogue import section

ROOT = Path(__file__).resolve().parents[2]


def _exporter() -> ModuleType:
    spec = importlib.util.spec_from_file_location("export_notes", ROOT / "scripts/export_notes.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_server_s_copy_is_the_dashboard_s_chinese() -> None:
    exporter = _exporter()
    assert exporter.TARGET.read_text(encoding="utf-8") == exporter.exported(), (
        "apps/jobs/notes.zh.json differs from frontend/src/lib/i18n/zh.ts: run make messages"
    )
    copy = translate._catalogue()
    assert copy["jobNote"] == section("jobNote", "zh")
    assert set(copy["jobNote"]) == set(NOTES)


def test_a_note_in_chinese_with_nested_notes_durations_and_tiers() -> None:
    placed = note("placed", nodes=4, tier="leaf")
    said = translate.note_text(placed.as_json(), "zh", placed.text)
    assert said == "已放置到 4 个节点，拓扑层级：叶交换机"
    warning = note(
        "noticeIdleWarningBody", name="sft", job=7, peak=3, idle=Duration(7200), threshold=10,
        stop="2026-12-07 14:05", most=2, extension=Duration(3600),
    )  # fmt: skip
    said = translate.note_text(warning.as_json(), "zh", warning.text)
    assert said.startswith(
        "作业 sft（#7）在过去 2小时 内 GPU 利用率最高为 3%（阈值 10%），将于 2026-12-07 14:05 UTC"
    )
    assert "允许 2 次，每次 1小时" in said
    assert "{{" not in said and "{" not in said
    # English asked for, or unset: the English as the server wrote it.
    assert translate.note_text(warning.as_json(), "en", warning.text) == warning.text
    assert translate.note_text(warning.as_json(), "", warning.text) == warning.text


def test_what_the_scheduler_said_is_said_in_chinese_too() -> None:
    reason = say("heldShort", shape=phrase("shapeTotal", need=16, model="A800"), held=8,
                 model="A800", jobs=Items(("12", "14")))  # fmt: skip
    body = note(
        "noticeQueueEscalatedBody", name="pretrain", job=9, waited=Duration(5400),
        limit=Duration(3600), blocking=Said(str(reason), reason.as_json()),
    )  # fmt: skip
    said = translate.sentences_text([body.as_json()], "zh", body.text)
    assert said == (
        "作业 pretrain（#9）已排队 1小时30分钟，仍在等待（上限 1小时）。等待原因：需要 16 张 A800；"
        "空闲的 A800 中有 8 张为等待过久的作业 12、14 保留。"
    )


@pytest.mark.parametrize(
    "detail",
    [
        {"key": "noSuchNote", "args": {}},  # a key this build does not know
        {"key": "placed", "args": {"nodes": 4}},  # an argument missing
        # an argument it cannot say
        {"key": "placed", "args": {"nodes": {"odd": 1}, "tier": "leaf"}},
        "placed",
        None,
    ],
)
def test_what_cannot_be_said_whole_stays_english(detail: object) -> None:
    assert translate.note_text(detail, "zh", "the English") == "the English"
    assert translate.sentences_text([detail], "zh", "the English") == "the English"


def test_chinese_durations_and_times_read_as_the_dashboard_writes_them() -> None:
    assert [translate.duration_zh(s) for s in (0, 45, 60, 5400, 7200, 90_061)] == [
        "0秒", "45秒", "1分钟", "1小时30分钟", "2小时", "1天1小时",
    ]  # fmt: skip
    assert translate.time_zh("2026-12-07T14:05:09+08:00") == "2026/12/07 06:05:09 UTC"


@pytest.mark.django_db
def test_a_notice_is_emailed_in_the_recipient_s_language(world: World) -> None:
    member = world.user("a", Role.MEMBER)
    member.email = "a-member@example.com"
    member.language = "zh"
    member.save()
    english_reader = world.user("a", Role.TENANT_ADMIN)
    english_reader.email = "a-admin@example.com"
    english_reader.save()
    body = [
        note("noticeIdleStoppedBody", name="sft", job=7, gpus=8),
        note("noticeCheckpoint", checkpoint=note("checkpointNone")),
    ]
    notices = [
        notify.notify(
            tenant=world.tenant_a,
            recipient=user,
            kind=NoticeKind.IDLE_STOPPED,
            job=None,
            title=note("noticeIdleStopped", name="sft"),
            body=body,
        )
        for user in (member, english_reader)
    ]
    for notice in notices:
        assert notify.deliver(notice.pk) == {"email": "sent"}
    chinese, english = mail.outbox
    assert chinese.to == ["a-member@example.com"]
    assert chinese.subject == "[zhisuan tenant-a] sft：因 GPU 空闲已停止"
    assert chinese.body == (
        "作业 sft（#7）已停止：宽限期内 GPU 一直空闲。8 张 GPU 已归还资源池。"
        "检查点：没有登记完整的检查点。"
    )
    # The stored notice, and so the webhook and the API, stay in English.
    assert notices[0].title == "sft: stopped for idle GPUs"
    assert english.subject == "[zhisuan tenant-a] sft: stopped for idle GPUs"
    assert english.body == notices[1].body
