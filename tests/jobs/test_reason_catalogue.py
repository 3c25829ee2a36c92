"""Every reason the server records on a job event has a label in the dashboard's catalogue
(the ``jobReason`` labels of frontend/src/lib/i18n/en.ts; zh.ts has the same keys, which
its ``Messages`` type enforces), so a new one cannot ship untranslated."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.ui_catalogue import section

ROOT = Path(__file__).resolve().parents[2]
# The calls that write JobEvent.reason (apps/jobs/services.py) and the model itself.
WRITERS = {"transition", "record_event", "JobEvent"}


def _called(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Attribute):
        if func.attr == "create" and isinstance(func.value, ast.Attribute):
            # JobEvent.objects.create(...)
            owner = func.value.value
            return owner.id if isinstance(owner, ast.Name) else ""
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def recorded_reasons() -> set[str]:
    found: set[str] = set()
    for path in (ROOT / "apps").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call) and _called(node) in WRITERS:
                for kw in node.keywords:
                    if kw.arg != "reason":
                        continue
                    # a constant, or either constant of `"A" if cond else "B"`
                    value = kw.value
                    options = (
                        [value.body, value.orelse] if isinstance(value, ast.IfExp) else [value]
                    )
                    found.update(str(v.value) for v in options if isinstance(v, ast.Constant))
    return found


def test_every_recorded_reason_is_in_the_dashboard_catalogue() -> None:
    reasons = recorded_reasons()
    # The scan finds the writers (a broken scan would pass vacuously).
    assert {
        "Submitted",
        "Requeued",
        "NodeFault",
        "NodeDrained",
        "IdleStopped",
        "RuntimeLimitSoon",
    } <= reasons
    assert reasons - set(section("jobReason")) == set(), "add these to jobReason in en.ts and zh.ts"
