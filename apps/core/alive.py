"""Liveness files of the platform's long-running loops, for Kubernetes exec probes.

The web process answers ``/healthz``; the Celery worker and beat, the telemetry collector and
the inference autoscaler serve no HTTP. Each touches a file in ``ZS_ALIVE_DIR`` from its own
loop (the worker from its consumer's timer, beat on every scheduler tick), and the probe runs
``python -m apps.core.alive <name> <max age s>``: it fails when the file is older than that,
that is when the loop is stuck (a hung call, a deadlock), not when what the loop talks to is
down: a loop that logs an error and goes on still touches its file, so an outage of Redis or
Prometheus does not restart every pod at once.

No Django import here: the probe starts a fresh interpreter every period.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ENV = "ZS_ALIVE_DIR"


def path_for(name: str, directory: str | None = None) -> Path | None:
    directory = directory if directory is not None else os.environ.get(ENV, "")
    return Path(directory) / f"{name}.alive" if directory else None


def touch(name: str) -> None:
    """Mark loop ``name`` alive now; nothing when ``ZS_ALIVE_DIR`` is unset (the default)."""
    path = path_for(name)
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
    except OSError:  # a probe file must never break the loop it reports on
        pass


def age(name: str, directory: str | None = None, now: float | None = None) -> float | None:
    """Seconds since loop ``name`` last touched its file; None when it never did."""
    path = path_for(name, directory)
    if path is None:
        return None
    try:
        modified = path.stat().st_mtime
    except OSError:
        return None
    return max(0.0, (time.time() if now is None else now) - modified)


def main(argv: list[str]) -> int:
    """``python -m apps.core.alive NAME MAX_AGE_S``: exit 0 when alive, 1 when stale or never
    touched, 2 on bad usage. One line on stdout says which (the probe's event message)."""
    if len(argv) != 2:
        print("usage: python -m apps.core.alive NAME MAX_AGE_S")
        return 2
    name, raw = argv
    try:
        limit = float(raw)
    except ValueError:
        print(f"MAX_AGE_S must be a number of seconds, got {raw!r}")
        return 2
    if not os.environ.get(ENV):
        print(f"{ENV} is not set; {name} writes no liveness file")
        return 2
    seconds = age(name)
    if seconds is None:
        print(f"{name}: no liveness file yet")
        return 1
    if seconds > limit:
        print(f"{name}: last alive {seconds:.0f} s ago (limit {limit:.0f} s)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
