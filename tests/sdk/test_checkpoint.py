"""Two-stage checkpoints: bit-exact sharded round trips, atomicity under SIGKILL, one
snapshot in flight, snapshot semantics, registration and resume."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from zhisuan import checkpoint as ck

from tests.sdk.conftest import present

pytestmark = pytest.mark.usefixtures("sdk_env")


def _state(seed: int = 0) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    return {
        "model": {
            "w": rng.standard_normal((64, 33)).astype(np.float32),
            "b": rng.standard_normal(33).astype(np.float16),
            "emb": rng.integers(-(2**62), 2**62, size=(5, 7), dtype=np.int64),
            "strided": rng.standard_normal((20, 20))[::3, 1::2],  # not contiguous
            "fortran": np.asfortranarray(rng.standard_normal((4, 6))),
            "mask": rng.random(17) > 0.5,
            "empty": np.zeros((0, 3), dtype=np.float64),
            "scalar0d": np.array(3.5, dtype=np.float64),
            "cplx": (rng.standard_normal(4) + 1j * rng.standard_normal(4)).astype(np.complex64),
        },
        "optim": {
            "state": {0: {"exp_avg": rng.standard_normal(10)}, 1: {"step": np.int64(12)}},
            "param_groups": [{"lr": 3e-4, "betas": (0.9, 0.95), "eps": 1e-8, "name": "all"}],
        },
        "step": 1000,
        "loss": float("nan"),
        "best": float("inf"),
        "rng": b"\x00\x01binary",
        "nothing": None,
        "flag": True,
    }


def _same(a, b) -> bool:
    """Bit-exact equality of state trees (NaN payloads included)."""
    if isinstance(a, (np.ndarray, np.generic)):
        return (
            isinstance(b, (np.ndarray, np.generic))
            and a.dtype == b.dtype
            and a.shape == b.shape
            and np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()
        )
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, float):
        return isinstance(b, float) and a.hex() == b.hex()
    return type(a) is type(b) and a == b


def test_round_trip_is_bit_exact(tmp_path):
    state = _state()
    saver = ck.Checkpointer(str(tmp_path), rank=0, world_size=1, register=False, checksum=True)
    saver.save(state, 1000)
    saver.wait()
    loaded = ck.load_latest(tmp_path, rank=0, verify=True)
    assert loaded is not None and loaded.step == 1000 and loaded.world_size == 1
    assert _same(state, loaded.state)
    assert ck.complete_steps(tmp_path) == [1000]


def test_large_arrays_are_copied_in_parallel_pieces(tmp_path, monkeypatch):
    monkeypatch.setattr(ck, "CHUNK", 4096)
    state = {"big": np.arange(100_003, dtype=np.float64), "i": np.arange(9, dtype=np.int8)}
    saver = ck.Checkpointer(str(tmp_path), rank=0, world_size=1, register=False, copy_threads=2)
    saver.save(state, 1)
    saver.wait()
    assert _same(state, ck.load(ck.step_dir(tmp_path, 1), rank=0).state)


def test_sharded_save_load_and_completeness(tmp_path):
    world = 4
    shards = {r: _state(seed=r) for r in range(world)}
    savers = [ck.Checkpointer(str(tmp_path), rank=r, world_size=world, register=False)
              for r in range(world)]  # fmt: skip
    for r in range(world - 1):
        savers[r].save(shards[r], 10)
        savers[r].wait()
    assert not ck.is_complete(ck.step_dir(tmp_path, 10))  # rank 3 still missing
    assert ck.load_latest(tmp_path, rank=0) is None
    savers[3].save(shards[3], 10)
    savers[3].wait()
    assert ck.is_complete(ck.step_dir(tmp_path, 10))
    for r in range(world):
        loaded = ck.load_latest(tmp_path, rank=r)
        assert loaded is not None and loaded.world_size == world
        assert _same(shards[r], loaded.state)
    with pytest.raises(ck.CheckpointError, match="rank 4 has none"):
        ck.load(ck.step_dir(tmp_path, 10), rank=4)


def test_newest_complete_wins_and_incomplete_or_torn_ones_are_ignored(tmp_path):
    saver = ck.Checkpointer(str(tmp_path), rank=0, world_size=1, register=False)
    for step in (100, 200):
        saver.save({"step": step, "w": np.full(3, step)}, step)
        saver.wait()
    # step 300: shard written but no manifest (a writer killed between the two)
    saver.save({"step": 300}, 300)
    saver.wait()
    (ck.step_dir(tmp_path, 300) / "rank_00000.json").unlink()
    # step 400: manifest present but the shard is truncated
    saver.save({"step": 400, "w": np.zeros(1000)}, 400)
    saver.wait()
    shard = ck.step_dir(tmp_path, 400) / "rank_00000.zsc"
    shard.write_bytes(shard.read_bytes()[:100])
    # step 500: only a temporary file
    (ck.step_dir(tmp_path, 500)).mkdir()
    (ck.step_dir(tmp_path, 500) / ".rank_00000.zsc.tmp.123").write_bytes(b"partial")
    loaded = ck.load_latest(tmp_path, rank=0)
    assert loaded is not None and loaded.step == 200 and loaded.state["w"].tolist() == [200] * 3


def test_save_blocks_only_for_the_copy_and_snapshots_the_state(tmp_path, monkeypatch):
    real_write = ck._write_all

    def slow_write(f, data, digest):
        time.sleep(0.5)
        real_write(f, data, digest)

    monkeypatch.setattr(ck, "_write_all", slow_write)
    weights = np.ones(1000, dtype=np.float32)
    saver = ck.Checkpointer(str(tmp_path), rank=0, world_size=1, register=False)
    first = saver.save({"w": weights}, 1)
    assert first.blocked_s < 0.25  # the 0.5 s write happens in the background
    weights[:] = 7.0  # training goes on and changes the weights in place
    second = saver.save({"w": weights}, 2)  # waits for the first write: one in flight
    assert second.blocked_s >= 0.25
    saver.wait()
    assert first.write_s >= 0.5
    assert ck.load(ck.step_dir(tmp_path, 1), rank=0).state["w"].tolist() == [1.0] * 1000
    assert ck.load(ck.step_dir(tmp_path, 2), rank=0).state["w"].tolist() == [7.0] * 1000


def test_unsupported_objects_fail_at_save_time(tmp_path):
    saver = ck.Checkpointer(str(tmp_path), rank=0, world_size=1, register=False)
    with pytest.raises(TypeError, match="/model/fn"):
        saver.save({"model": {"fn": object()}}, 1)
    with pytest.raises(TypeError, match="object arrays"):
        saver.save({"a": np.array([object()])}, 1)


def test_a_writer_killed_mid_write_leaves_the_previous_checkpoint_loadable(tmp_path):
    script = textwrap.dedent(
        f"""
        import sys, time
        import numpy as np
        from zhisuan import checkpoint as ck
        saver = ck.Checkpointer({str(tmp_path)!r}, rank=0, world_size=1, register=False)
        saver.save({{"step": 1, "w": np.full(1000, 1.0)}}, 1)
        saver.wait()
        real = ck._write_all
        def slow(f, data, digest):          # stage 2 crawls: 1 MiB per 0.2 s
            for lo in range(0, len(data), 1 << 20):
                real(f, data[lo:lo + (1 << 20)], digest)
                f.flush()
                time.sleep(0.2)
        ck._write_all = slow
        saver.save({{"step": 2, "w": np.full(8 << 20, 2.0)}}, 2)   # 64 MiB
        print("STAGE1_DONE", flush=True)
        time.sleep(60)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "STAGE1_DONE"
    folder = ck.step_dir(tmp_path, 2)
    deadline = time.monotonic() + 20
    while not any(p.name.startswith(".rank_00000.zsc.tmp") and p.stat().st_size > 0
                  for p in folder.glob(".*")):  # fmt: skip
        assert time.monotonic() < deadline, "the writer never started stage 2"
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    assert not (folder / "rank_00000.json").exists()
    assert not ck.is_complete(folder)
    loaded = ck.load_latest(tmp_path, rank=0)
    assert loaded is not None and loaded.step == 1
    assert loaded.state["w"].tolist() == [1.0] * 1000
    # a later save of the same step replaces the torn leftovers
    saver = ck.Checkpointer(str(tmp_path), rank=0, world_size=1, register=False)
    saver.save({"step": 2}, 2)
    saver.wait()
    assert [p.name for p in folder.iterdir() if p.name.startswith(".")] == []
    assert present(ck.load_latest(tmp_path, rank=0)).step == 2


def test_keep_last_prunes_old_checkpoints(tmp_path):
    saver = ck.Checkpointer(str(tmp_path), rank=0, world_size=1, register=False, keep_last=2)
    for step in range(5):
        saver.save({"s": step}, step)
    saver.wait()
    assert ck.complete_steps(tmp_path) == [4, 3]


def test_shards_are_registered_with_the_platform(tmp_path, platform, monkeypatch):
    monkeypatch.setenv("ZS_API_URL", platform.url)
    monkeypatch.setenv("ZS_TOKEN", "zsj_9_sig")
    monkeypatch.setenv("ZS_TENANT", "tenant-a")
    monkeypatch.setenv("ZS_RUN_ID", "5")
    platform.fail_next = 1  # the first registration attempt hits a 503
    monkeypatch.setattr(ck, "_sleep", lambda s: None)
    saver = ck.Checkpointer(str(tmp_path), rank=1, world_size=2, checksum=True)
    saver.save({"w": np.arange(10)}, 42)
    saver.wait()
    (body,) = platform.checkpoints
    assert body["step"] == 42 and body["rank"] == 1 and body["world_size"] == 2
    assert body["path"] == str(ck.step_dir(tmp_path, 42).resolve())
    assert body["files"][0]["name"] == "rank_00001.zsc" and len(body["files"][0]["sha256"]) == 64
    assert body["shard_bytes"] == (ck.step_dir(tmp_path, 42) / "rank_00001.zsc").stat().st_size


def test_resume_prefers_the_platforms_choice(tmp_path, monkeypatch):
    saver = ck.Checkpointer(str(tmp_path), rank=0, world_size=1, register=False)
    for step in (10, 20):
        saver.save({"s": step}, step)
    saver.wait()
    monkeypatch.setenv("ZS_CHECKPOINT_DIR", str(tmp_path))
    assert present(ck.resume()).step == 20
    monkeypatch.setenv("ZS_RESUME_FROM", str(ck.step_dir(tmp_path, 10)))
    assert present(ck.resume()).step == 10
    monkeypatch.setenv("ZS_RESUME_FROM", str(Path(tmp_path) / "step_000000000099"))
    assert present(ck.resume()).step == 20  # not complete: fall back to the newest complete one


def test_module_level_save_uses_the_checkpoint_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("ZS_CHECKPOINT_DIR", str(tmp_path))
    times = ck.save({"w": np.ones(4)}, 3)
    ck.wait()
    assert times.copy_s <= times.blocked_s and ck.complete_steps(tmp_path) == [3]
