"""Read one section of the dashboard's message catalogue (frontend/src/lib/i18n/<lang>.ts), so
tests can hold the server's codes and sentences to the labels the dashboard has for them."""

from __future__ import annotations

import re
from pathlib import Path

I18N = Path(__file__).resolve().parents[1] / "frontend" / "src" / "lib" / "i18n"
# `key: 'text',` or `'a key': 'text',`, the text on the same line or (wrapped) the next one;
# text holding an apostrophe is in double quotes.
_ENTRY = re.compile(r"""^\s+(?:'([^']+)'|(\w+)):\s*(?:\n\s*)?(?:'(.*)'|"(.*)"),$""", re.M)


def section(name: str, language: str = "en") -> dict[str, str]:
    """The flat ``name: { key: 'text', ... }`` section of the language file, key -> text."""
    text = (I18N / f"{language}.ts").read_text()
    body = re.search(rf"\n(\s+){re.escape(name)}: \{{\n(.*?)\n\1\}},", text, re.S)
    assert body, f"section {name} not found in {language}.ts"
    return {
        quoted or bare: single or double
        for quoted, bare, single, double in _ENTRY.findall(body.group(2))
    }
