"""A real Prometheus (the Debian package) for tests, scraping one target every second."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.net import free_port

PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"
requires_prometheus = pytest.mark.skipif(
    not Path(PROMETHEUS).exists(),
    reason="prometheus is not installed (scripts/ensure-prometheus.sh installs it)",
)


@contextmanager
def running_prometheus(tmp_path: Path, job: str, target_port: int) -> Iterator[str]:
    """Prometheus scraping ``127.0.0.1:target_port`` as ``job`` (labels kept as exported);
    yields its base URL and stops it afterwards."""
    port = free_port()
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
        "scrape_configs:\n"
        f"  - job_name: {job}\n"
        "    honor_labels: true\n"
        f"    static_configs: [{{targets: ['127.0.0.1:{target_port}']}}]\n"
    )
    proc = subprocess.Popen(
        [PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
         f"--web.listen-address=127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(10)
