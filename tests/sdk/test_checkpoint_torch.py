"""Torch tensors through two-stage checkpoints. torch is optional and not in the dev venv:
these run where torch is installed (e.g. a venv with the CPU build), and skip elsewhere.
The CUDA path (pinned staging buffers, non-blocking copies) needs a GPU and is not covered
here."""

from __future__ import annotations

import pytest
from zhisuan import checkpoint as ck

from tests.sdk.conftest import present

pytestmark = pytest.mark.usefixtures("sdk_env")
torch = pytest.importorskip("torch", reason="torch is optional; run with torch installed")


def test_torch_tensors_round_trip_bit_exactly(tmp_path):
    state = {
        "w": torch.randn(8, 5, dtype=torch.bfloat16),
        "h": torch.randn(3, dtype=torch.float16),
        "i": torch.arange(6, dtype=torch.int64).reshape(2, 3),
        "t": torch.randn(4, 4).t(),  # non-contiguous
        "g": torch.randn(3, requires_grad=True),
        "e": torch.empty(0, 2),
    }
    saver = ck.Checkpointer(str(tmp_path), rank=0, world_size=1, register=False)
    expected_w = state["w"].clone()
    saver.save(state, 1)
    state["w"].add_(1)  # later in-place updates do not reach the snapshot
    saver.wait()
    loaded = present(ck.load_latest(tmp_path, rank=0)).state
    assert loaded["w"].dtype == torch.bfloat16
    assert torch.equal(loaded["w"].view(torch.int16), expected_w.view(torch.int16))
    for k in ("h", "i", "t", "e"):
        assert loaded[k].dtype == state[k].dtype and torch.equal(loaded[k], state[k])
    assert torch.equal(loaded["g"], state["g"].detach()) and not loaded["g"].requires_grad
