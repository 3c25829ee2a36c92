"""Job logs over HTTP: the Kubernetes backend reads the pods' logs with timestamps."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import pytest

from apps.clusters.backends.kubernetes.backend import parse_log_lines
from apps.clusters.backends.spec import LABEL_JOB_ID

from .conftest import POD_RESOURCE, Cluster
from .test_backend_http import run


def _pod(name: str, job_id: int, phase: str = "Running") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "zs-acme", "labels": {LABEL_JOB_ID: str(job_id)}},
        "spec": {"containers": [{"name": "main", "image": "x"}]},
        "status": {"phase": phase},
    }


def _ts(stamp: str) -> float:
    return datetime.fromisoformat(stamp).replace(tzinfo=UTC).timestamp()


def test_parse_reads_nanosecond_stamps_and_skips_unstamped_lines() -> None:
    text = (
        "2026-11-30T03:00:00.123456789Z step 1 loss 2.0\n"
        "not a stamped line\n"
        "2026-11-30T03:00:01Z step 2 loss 1.9\n"
    )
    lines = parse_log_lines(text, "p-0", since=None)
    assert [(line.replica, line.text) for line in lines] == [
        ("p-0", "step 1 loss 2.0"),
        ("p-0", "step 2 loss 1.9"),
    ]
    assert abs(lines[0].ts - (_ts("2026-11-30T03:00:00") + 0.123456)) < 1e-6
    later = parse_log_lines(text, "p-0", since=_ts("2026-11-30T03:00:00.5"))
    assert [line.text for line in later] == ["step 2 loss 1.9"]


@pytest.mark.asyncio
async def test_read_logs_merges_the_job_pods_and_skips_others(cluster: Cluster) -> None:
    cluster.seed(POD_RESOURCE, "zs-acme", _pod("zs-train-7-worker-0", 7))
    cluster.seed(POD_RESOURCE, "zs-acme", _pod("zs-train-7-worker-1", 7))
    cluster.seed(POD_RESOURCE, "zs-acme", _pod("zs-train-7-worker-2", 7, phase="Pending"))
    cluster.seed(POD_RESOURCE, "zs-acme", _pod("zs-train-8-worker-0", 8))
    seen: list[str] = []

    def body(name: str, text: str) -> Any:
        def answer(request: Any) -> bytes:
            seen.append(name)
            assert request.params.get("timestamps") == "true"
            assert request.params.get("container") == "main"
            return text.encode()

        return answer

    kmock = cluster.kmock
    (
        kmock["get", re.compile(r".*/pods/zs-train-7-worker-0/log")]
        << 200
        << body("w0", "2026-11-30T03:00:02Z b\n2026-11-30T03:00:04Z d\n")
    )
    (
        kmock["get", re.compile(r".*/pods/zs-train-7-worker-1/log")]
        << 200
        << body("w1", "2026-11-30T03:00:01Z a\n2026-11-30T03:00:03Z c\n")
    )
    kmock["get", re.compile(r".*/pods/zs-train-8-worker-0/log")] << 200 << body("other", "x\n")

    lines = await run(cluster.backend.read_logs, 7, "acme", "training", since=None, limit=3)

    assert [line.text for line in lines] == ["b", "c", "d"]  # merged by time, newest 3
    assert {line.replica for line in lines} == {"zs-train-7-worker-0", "zs-train-7-worker-1"}
    assert sorted(seen) == ["w0", "w1"]  # the pending pod and job 8's pod were not read
