"""Fixtures shared by the reliability tests: the kmock cluster of tests/kube, a world that
subprocesses can see (committed rows), and the environment those subprocesses run with."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.db import connection

from tests.conftest import World
from tests.kube.conftest import _kmock_namespace_paths, cluster  # noqa: F401 - fixtures
from tests.kube.test_worker_kill import _kubeconfig


@pytest.fixture
def world_sync(transactional_db: Any) -> Iterator[World]:
    yield World()
    _wait_for_foreign_sessions()


def _wait_for_foreign_sessions(timeout_s: float = 15.0) -> None:
    """Processes these tests SIGKILLed leave database sessions that the server reaps a moment
    later; wait for them (then end any left), or the test database cannot be dropped."""
    query = (
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
        "AND pid <> pg_backend_pid()"
    )
    deadline = time.monotonic() + timeout_s
    with connection.cursor() as cursor:
        while True:
            cursor.execute(query)
            pids = [row[0] for row in cursor.fetchall()]
            if not pids:
                return
            if time.monotonic() > deadline:
                for pid in pids:  # sessions of our own killed processes, on our test database
                    cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
                return
            time.sleep(0.2)


def process_env(tmp_path: Path, kube_url: str, redis_url: str) -> dict[str, str]:
    """What a web, worker or beat process of the production stack gets, pointed at the test
    database, a kmock API server and ``redis_url``."""
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.dev",
        "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{connection.settings_dict['NAME']}",
        "REDIS_URL": redis_url,
        "ZS_CLUSTER_BACKEND": "kubernetes",
        "KUBECONFIG": str(_kubeconfig(tmp_path / "kubeconfig", kube_url)),
        "ZS_DATA_DIR": str(tmp_path),
        "ZS_EMBEDDED_WORKER": "false",
        "ZS_LOG_LEVEL": "WARNING",
    }
