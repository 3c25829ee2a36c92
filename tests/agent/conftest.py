"""The agent is its own deliverable (agent/); tests import it from its source folder."""

from __future__ import annotations

import sys
from pathlib import Path

AGENT = Path(__file__).resolve().parents[2] / "agent"
if str(AGENT) not in sys.path:
    sys.path.insert(0, str(AGENT))

FIXTURES = Path(__file__).resolve().parent / "fixtures"
