"""The idle-GPU decision rule as plain functions, free of Django.

The governance sweep (``services._idle_pass``, ``services.keep_running``) and the
trace-driven simulator (``apps.scheduling.sim.idle``) both decide with these, so the numbers
the simulator reports come from the same rule production applies. Nothing here touches the
database or the clock: callers pass the observed utilization and the times.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeGuard


@dataclass(frozen=True, slots=True)
class IdleRule:
    """The numeric part of an idle policy; the built-in values are the platform defaults."""

    util_threshold_pct: float = 10.0
    training_idle_s: int = 2 * 3600
    notebook_idle_s: int = 3600
    grace_s: int = 30 * 60
    max_extensions: int = 2
    extension_s: int = 3600

    def idle_s(self, notebook: bool) -> int:
        return self.notebook_idle_s if notebook else self.training_idle_s


BUILTIN_RULE = IdleRule()


def reads_idle(peak_util_pct: float | None, threshold_pct: float) -> TypeGuard[float]:
    """A window is idle when its highest utilization is known and below the threshold.
    Unknown (``None``) is never idle: governance must not stop work on missing evidence."""
    return peak_util_pct is not None and peak_util_pct < threshold_pct


def reads_busy(peak_util_pct: float | None, threshold_pct: float) -> TypeGuard[float]:
    """A warned job is busy again when any known utilization reached the threshold."""
    return peak_util_pct is not None and peak_util_pct >= threshold_pct


def may_extend(extensions_used: int, max_extensions: int) -> bool:
    return extensions_used < max_extensions


def extended_stop_s(stop_at_s: float, now_s: float, extension_s: float) -> float:
    """Where one 'keep running' click moves the stop (seconds on any common clock)."""
    return max(stop_at_s, now_s) + extension_s


# Waits before each retry of a failed notice delivery; after the last it is given up: five
# attempts over about 2.6 h, long enough to ride out a receiver's restart or deploy.
RETRY_AFTER_S: tuple[int, ...] = (60, 300, 1800, 7200)


def delivery_retryable(outcome: str) -> bool:
    """Whether a channel's outcome is worth another attempt: the connection or the mail server
    failed (``error: ...``), or the receiver answered 408, 429 or 5xx. A refused target and
    any other answer are final."""
    if outcome.startswith("error:"):
        return True
    if not outcome.startswith("http "):
        return False
    code = outcome[5:].strip()
    return code.isdigit() and (int(code) in (408, 429) or int(code) >= 500)


def retry_after_s(attempts: int) -> int | None:
    """The wait before the next attempt after ``attempts`` of them; None: give up."""
    return RETRY_AFTER_S[attempts - 1] if 1 <= attempts <= len(RETRY_AFTER_S) else None


def reminder_due(*, extended_at_s: float, stop_at_s: float, now_s: float, grace_s: float) -> bool:
    """Whether the owner of a job still idle after a 'keep running' click is reminded now: one
    grace period before the extended stop (the notice the first warning gave), unless the
    click itself came within that period, when the click's own answer said when it stops."""
    remind_at = stop_at_s - grace_s
    return extended_at_s < remind_at <= now_s < stop_at_s
