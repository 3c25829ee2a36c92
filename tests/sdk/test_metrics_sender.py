"""The SDK's metric reporting against a real local HTTP server: batching, retries,
the bounded offline buffer, non-blocking log() and the flush at exit."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

import pytest
import zhisuan
from zhisuan._sender import MetricSender
from zhisuan.client import ApiClient
from zhisuan.run import Run

pytestmark = pytest.mark.usefixtures("sdk_env")


def _run(platform, **sender_kw) -> Run:
    client = ApiClient(platform.url, "zsj_1_x", "tenant-a", timeout=2)
    base = client.tenant_path("runs/5/")
    sender = MetricSender(
        lambda pts: client.post(f"{base}metrics/", {"points": pts}),
        patch_run=lambda changes: client.patch(base, changes),
        **{"initial_backoff_s": 0.01, "max_backoff_s": 0.05, "flush_interval_s": 0.05, **sender_kw},
    )
    return Run(client, 5, sender=sender)


def test_points_are_sent_in_bounded_batches_exactly_once(platform):
    run = _run(platform, batch_values=1000)
    for step in range(2500):
        run.log(step, loss=1.0 / (step + 1), lr=3e-4)
    assert run.flush(10)
    assert len(platform.values("loss")) == 2500 and len(platform.values("lr")) == 2500
    sizes = [sum(len(r["values"]) for r in b) for b in platform.batches]
    assert max(sizes) <= 1000 and sum(sizes) == 5000
    assert len(platform.batches) >= 5
    assert run.stats.sent == 5000 and run.stats.batches == len(platform.batches)
    assert platform.values("loss")[9] == pytest.approx(0.1)
    run.finish(timeout_s=5)


def test_a_flaky_endpoint_is_retried_with_backoff_until_the_points_arrive(platform):
    platform.fail_next = 4  # four 503s in a row
    run = _run(platform, batch_values=100)
    for step in range(300):
        run.log(step, loss=float(step))
    assert run.flush(10)
    assert platform.values("loss") == {s: float(s) for s in range(300)}
    assert run.stats.retries == 4
    assert run.stats.dropped_rejected == 0 and run.stats.dropped_overflow == 0
    run.finish(timeout_s=5)


def test_rejected_batches_are_dropped_not_retried(platform):
    platform.reject_all = True
    run = _run(platform, batch_values=10)
    for step in range(20):
        run.log(step, loss=1.0)
    assert run.flush(5)
    assert run.stats.dropped_rejected == 20 and run.stats.retries == 0
    run.finish(timeout_s=1)


def test_an_outage_never_blocks_or_raises_and_the_buffer_drops_oldest():
    # Nothing listens on this port: every send is "connection refused".
    run = Run(None, None)
    client = ApiClient("http://127.0.0.1:9", "t", "x", timeout=0.2)
    sender = MetricSender(
        lambda pts: client.post("/m", {"points": pts}),
        max_buffer_rows=100, batch_values=10, initial_backoff_s=0.05, max_backoff_s=0.1,
    )  # fmt: skip
    run = Run(client, 1, sender=sender)
    started = time.perf_counter()
    for step in range(10_000):
        run.log(step, loss=1.0)
    per_call = (time.perf_counter() - started) / 10_000
    assert per_call < 1e-3  # never waits for the network
    time.sleep(0.3)
    stats = run.stats
    # at most 100 rows buffered plus one batch (10 values) in flight; the rest counted
    assert sender.pending_values <= 110
    assert stats.dropped_overflow >= 10_000 - 110
    assert stats.dropped_overflow + sender.pending_values + stats.sent == 10_000
    lost = run.finish(timeout_s=0.3)
    assert lost <= 110 and stats.retries >= 1


def test_invalid_values_are_dropped_client_side(platform):
    run = _run(platform)
    run.log(0, loss=float("nan"), ok=1.0)
    run.log(1, {"perf/mfu": 0.41, "bad key": 1.0}, grad=float("inf"))
    run.log(-1, loss=1.0)
    run.log(2, loss="x")
    run.log(3, loss=10**400)  # too big for a float
    assert run.flush(5)
    assert platform.values("ok") == {0: 1.0} and platform.values("perf/mfu") == {1: 0.41}
    assert platform.values("loss") == {}
    assert run.dropped_invalid == 5
    run.finish(timeout_s=1)


def test_config_and_tags_are_patched(platform):
    run = _run(platform)
    run.config(lr=3e-4, batch=512)
    run.config(warmup=100)
    run.tag("sweep", "7b")
    assert run.flush(5)
    merged: dict[str, object] = {}
    for p in platform.patches:
        merged.update(p.get("config", {}))
    assert merged == {"lr": 3e-4, "batch": 512, "warmup": 100}
    run.tag("7b", "lr-3e-4")  # a repeat is not sent again
    assert run.flush(5)
    added = [t for p in platform.patches for t in p.get("add_tags", [])]
    assert added == ["sweep", "7b", "lr-3e-4"]
    assert all("tags" not in p for p in platform.patches)  # never replaces the run's tags
    run.finish(timeout_s=1)


def test_init_without_a_platform_is_a_quiet_no_op():
    run = zhisuan.init()
    assert not run.enabled
    zhisuan.log(1, loss=1.0)  # nothing to send to, nothing raised
    assert zhisuan.finish() == 0


def test_only_rank_zero_reports_by_default(platform, monkeypatch):
    monkeypatch.setenv("RANK", "3")
    run = zhisuan.init(url=platform.url, token="t", tenant="tenant-a", run_id=5)
    assert not run.enabled
    run = zhisuan.init(url=platform.url, token="t", tenant="tenant-a", run_id=5, all_ranks=True)
    assert run.enabled
    zhisuan.finish(timeout_s=1)


def test_points_logged_before_exit_are_flushed_by_atexit(platform, tmp_path):
    script = textwrap.dedent(
        """
        import zhisuan
        zhisuan.init()
        for step in range(777):
            zhisuan.log(step, loss=1.0 / (step + 1))
        # no flush, no finish: the interpreter exits right after logging
        """
    )
    env = {"ZS_API_URL": platform.url, "ZS_TOKEN": "zsj_1_abc", "ZS_TENANT": "tenant-a",
           "ZS_RUN_ID": "5", "ZS_JOB_ID": "1", "PATH": "/usr/bin:/bin",
           "XDG_CONFIG_HOME": str(tmp_path)}  # fmt: skip
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert len(platform.values("loss")) == 777
    assert set(platform.auth) == {"Bearer zsj_1_abc"}


def test_init_outside_a_job_creates_a_run(platform):
    run = zhisuan.init(url=platform.url, token="zs_x_y", tenant="tenant-a", name="laptop",
                       config={"lr": 0.1}, tags=["dev"])  # fmt: skip
    assert run.enabled and run.id == 77
    zhisuan.finish(timeout_s=2)
    assert platform.patches[-1] == {"state": "finished"}
