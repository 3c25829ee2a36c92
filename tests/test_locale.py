"""The API's own sentences in Simplified Chinese (locale/zh_Hans, Django's gettext): every
sentence the code marks is translated, with the same placeholders, and the compiled catalogue
the server reads is the one the .po says. ``make messages`` refreshes both."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PO = ROOT / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.po"
MO = PO.with_suffix(".mo")
# The keywords Django's makemessages gives xgettext, besides its defaults (_, gettext, ...).
KEYWORDS = ["gettext_noop", "gettext_lazy", "ngettext_lazy:1,2", "pgettext:1c,2",
            "npgettext:1c,2,3", "pgettext_lazy:1c,2", "npgettext_lazy:1c,2,3"]  # fmt: skip


def _entries(text: str) -> dict[str, list[str]]:
    """msgid -> its msgstr (or msgstr[n] forms), from a .po or .pot; the header left out."""
    found: dict[str, list[str]] = {}
    for block in text.split("\n\n"):
        fields: dict[str, str] = {}
        key = ""
        for line in block.splitlines():
            if line.startswith("#"):
                continue
            head = re.match(r"^(msgid|msgid_plural|msgstr(?:\[\d+\])?) (\".*\")$", line)
            if head:
                key = head.group(1)
                fields[key] = ""
                line = head.group(2)
            if line.startswith('"'):
                fields[key] += (
                    line[1:-1].encode().decode("unicode_escape").encode("latin-1").decode()
                )
        if fields.get("msgid"):
            found[fields["msgid"]] = [v for k, v in fields.items() if k.startswith("msgstr")]
    return found


def _placeholders(text: str) -> set[str]:
    return set(re.findall(r"\{(\w*)\}", text))


def _tool(name: str) -> str:
    path = shutil.which(name)
    assert path, f"{name} (GNU gettext) is needed: scripts/ensure-gettext.sh installs it"
    return path


def test_every_marked_sentence_is_translated_with_its_placeholders() -> None:
    sources = sorted(str(p) for d in ("apps", "config") for p in (ROOT / d).rglob("*.py"))
    args = [_tool("xgettext"), "--language=Python", "--from-code=UTF-8", "--output=-"]
    pot = subprocess.run(
        args + [f"--keyword={k}" for k in KEYWORDS] + sources,
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    marked = _entries(pot)
    translated = _entries(PO.read_text())
    assert len(marked) > 50  # the scan finds the sentences
    assert set(marked) == set(translated), "run make messages"
    for msgid, forms in translated.items():
        assert forms and all(forms), f"untranslated: {msgid}"
        for form in forms:
            assert _placeholders(form) == _placeholders(msgid), msgid
    assert "#, fuzzy" not in PO.read_text().split('msgid "Invalid input."')[1]


def test_the_compiled_catalogue_is_the_po(tmp_path: Path) -> None:
    built = tmp_path / "django.mo"
    subprocess.run([_tool("msgfmt"), "--check", "-o", str(built), str(PO)], check=True)
    assert built.read_bytes() == MO.read_bytes(), "run make messages"
