"""Every reason the autoscaler records on a scaling decision has a label in the dashboard's
catalogue (``inference.scalingReason`` in frontend/src/lib/i18n/en.ts; zh.ts has the same
keys, which its ``Messages`` type enforces), so a new one cannot ship untranslated."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.ui_catalogue import section

ROOT = Path(__file__).resolve().parents[2]
# ScalingDecision.reason is the Decision's reason, which only the scaler sets.
SCALER = ROOT / "apps/inference/autoscale/scaler.py"


def _names(target: ast.expr) -> list[str]:
    if isinstance(target, ast.Tuple):
        return [e.id if isinstance(e, ast.Name) else "" for e in target.elts]
    return [target.id] if isinstance(target, ast.Name) else []


def recorded_reasons() -> set[str]:
    """Constants assigned to ``reason``: ``reason = "x"``, ``desired, reason = n, "x"`` and
    either side of ``"x" if cond else "y"``."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(SCALER.read_text(), str(SCALER))):
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        names = _names(node.targets[0])
        if "reason" not in names:
            continue
        value = node.value
        if isinstance(value, ast.Tuple) and len(value.elts) == len(names):
            value = value.elts[names.index("reason")]
        options = [value.body, value.orelse] if isinstance(value, ast.IfExp) else [value]
        found.update(str(v.value) for v in options if isinstance(v, ast.Constant))
    return found


def test_every_recorded_scaling_reason_is_in_the_dashboard_catalogue() -> None:
    reasons = recorded_reasons()
    # The scan finds the assignments (a broken scan would pass vacuously).
    assert {"steady", "scale-up", "panic", "hold (scale-down delay)", "scale-down"} <= reasons
    missing = reasons - set(section("scalingReason"))
    assert missing == set(), "add these to inference.scalingReason in en.ts and zh.ts"
