"""The fixes the platform may ask for, by name. Only names on this list run; the agent never
executes a command it was sent. In the DaemonSet (hostPID, privileged) ``nsenter`` reaches the
host's systemd."""

from __future__ import annotations

import logging
import subprocess
from collections.abc import Callable, Sequence

log = logging.getLogger("zhisuan_agent.remediate")

HOST = ("nsenter", "--target", "1", "--mount", "--uts", "--ipc", "--net", "--pid", "--")
ACTIONS: dict[str, tuple[str, ...]] = {
    "restart_fabricmanager": (*HOST, "systemctl", "restart", "nvidia-fabricmanager"),
}

Runner = Callable[[Sequence[str]], int]


def _run(argv: Sequence[str]) -> int:
    return subprocess.run(list(argv), check=False, timeout=120).returncode  # noqa: S603


def perform(actions: Sequence[str], runner: Runner = _run) -> dict[str, str]:
    """Run each known action once; unknown names are refused and reported, not run."""
    outcome: dict[str, str] = {}
    for name in actions:
        argv = ACTIONS.get(name)
        if argv is None:
            outcome[name] = "refused: unknown action"
            continue
        try:
            code = runner(argv)
        except (OSError, subprocess.TimeoutExpired) as exc:
            outcome[name] = f"error: {exc}"
            continue
        outcome[name] = "ok" if code == 0 else f"exit {code}"
        log.info("remediation %s: %s", name, outcome[name])
    return outcome
