"""Made-up training curves of the simulated cluster's jobs (they run no code).

One formula serves the curves the platform stores for such a job (``apps/runs/simulate.py``)
and the progress lines of its simulated log (``simlogs``), so the chart and the log tell the
same story: the same step at the same time, the same loss. Pure: no Django, no clock.
"""

from __future__ import annotations

import math
import random

STEPS_PER_S = 2.0
# A 7B dense model, 4,096-token sequences, on A800-class devices (see the SDK's efficiency).
_FLOPS_PER_TOKEN = 6 * 7e9 + 12 * 32 * 4096 * 4096
_PEAK = 312e12


def training_point(job_id: int, devices: int, step: int) -> dict[str, float]:
    """The values a simulated training job reports at ``step``: a decaying loss, a
    warm-up-then-cosine learning rate, gradient norm, throughput and MFU."""
    rng = random.Random(job_id * 1_000_003 + step)
    seed = random.Random(job_id)
    floor, start, tau = 1.6 + seed.random(), 9.0 + seed.random() * 2, 300 + seed.random() * 500
    loss = floor + (start - floor) * math.exp(-step / tau) + rng.gauss(0, 0.03)
    warmup, peak_lr = 200, 3e-4
    lr = peak_lr * min(1.0, (step + 1) / warmup) * (0.55 + 0.45 * math.cos(step / 20_000))
    devices = max(1, devices)
    tokens = devices * 3000 * (1 + rng.gauss(0, 0.02))
    return {
        "loss": max(0.01, loss),
        "lr": lr,
        "grad_norm": 0.5 + 2.0 * math.exp(-step / tau) + abs(rng.gauss(0, 0.1)),
        "perf/tokens_per_s": tokens,
        "perf/mfu": _FLOPS_PER_TOKEN * tokens / (devices * _PEAK),
    }
