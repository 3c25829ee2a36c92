"""Copy the dashboard's Chinese sentences of the platform's notes into the server's package.

The server writes to people who are not looking at the dashboard (notices by email), so it
needs the catalogue the dashboard says notes with: ``jobNote``, ``schedulerNote`` and
``jobNoteTier`` of frontend/src/lib/i18n/zh.ts. The translations are kept there, once; this
writes apps/jobs/notes.zh.json from them (``make messages`` runs it, and
tests/jobs/test_note_languages.py fails while the two differ). English needs no copy: it is
the server's own (apps/jobs/notes.py, apps/scheduling/core/text.py).

    .venv/bin/python scripts/export_notes.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "apps" / "jobs" / "notes.zh.json"
SECTIONS = ("jobNote", "schedulerNote", "jobNoteTier")


def exported() -> str:
    """The file's text as it should be now."""
    sys.path.insert(0, str(ROOT))
    from tests.ui_catalogue import section

    catalogue = {name: dict(sorted(section(name, "zh").items())) for name in SECTIONS}
    header = {"_source": "frontend/src/lib/i18n/zh.ts, by scripts/export_notes.py; do not edit"}
    return json.dumps({**header, **catalogue}, ensure_ascii=False, indent=1) + "\n"


if __name__ == "__main__":
    TARGET.write_text(exported(), encoding="utf-8")
    print(f"wrote {TARGET.relative_to(ROOT)}")
