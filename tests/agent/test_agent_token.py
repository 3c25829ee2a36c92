"""The agent picks its own node's token from the mounted Secret folder, and re-reads it."""

from __future__ import annotations

import subprocess
import sys
from http.server import HTTPServer
from pathlib import Path

from zhisuan_agent.token import read_token

from tests.agent.conftest import AGENT, FIXTURES
from tests.agent.test_agent_cli import _Recorder, platform_server  # noqa: F401 - fixture

TOKENS = {"gpu-007": "zsn_aaaa1111_own", "gpu-008": "zsn_bbbb2222_other"}


def secret_folder(tmp_path: Path, tokens: dict[str, str]) -> Path:
    # As the kubelet lays out a Secret volume: a data folder and one link per key.
    data = tmp_path / "tokens" / "..2026_11_30_03_00_00.1"
    data.mkdir(parents=True)
    for node, token in tokens.items():
        (data / node).write_text(token)
    (tmp_path / "tokens" / "..data").symlink_to(data.name)
    for node in tokens:
        (tmp_path / "tokens" / node).symlink_to(Path("..data") / node)
    return tmp_path / "tokens"


def test_picks_its_own_nodes_key(tmp_path: Path) -> None:
    folder = secret_folder(tmp_path, TOKENS)
    assert read_token("", str(folder), "gpu-007") == "zsn_aaaa1111_own"
    assert read_token("", str(folder), "gpu-008") == "zsn_bbbb2222_other"
    assert read_token("", str(folder), "gpu-009") is None  # not distributed yet
    assert read_token("", str(folder), "../tokens/gpu-007") is None
    assert read_token("", "", "gpu-007") is None


def test_a_single_token_file_still_works(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("zsn_cccc3333_file\n")
    assert read_token(str(tmp_path / "token"), "", "any") == "zsn_cccc3333_file"


def _run_once(tmp_path: Path, server: HTTPServer, node: str) -> subprocess.CompletedProcess[str]:
    """One agent round on the healthy HGX fixture, tokens from a kubelet-style Secret folder."""
    root = FIXTURES / "hgx_healthy"
    return subprocess.run(
        [
            sys.executable, "-m", "zhisuan_agent", "--once",
            "--root", str(root), "--nvml-fixture", str(root / "nvml.json"),
            "--platform-url", f"http://127.0.0.1:{server.server_address[1]}",
            "--token-dir", str(secret_folder(tmp_path, TOKENS)), "--node", node,
        ],
        cwd=AGENT, capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip


def test_once_reports_with_its_own_token_and_never_prints_one(
    tmp_path: Path,
    platform_server: HTTPServer,  # noqa: F811
) -> None:
    done = _run_once(tmp_path, platform_server, "gpu-007")
    [(path, auth, body)] = _Recorder.received
    assert path == "/api/v1/health/report/"
    assert auth == "Bearer zsn_aaaa1111_own" and body["node"] == "gpu-007"
    for token in TOKENS.values():
        assert token not in done.stdout + done.stderr


def test_without_its_key_the_agent_checks_but_does_not_report(
    tmp_path: Path,
    platform_server: HTTPServer,  # noqa: F811
) -> None:
    done = _run_once(tmp_path, platform_server, "gpu-999")
    assert _Recorder.received == []
    assert "no token for node gpu-999" in done.stderr
