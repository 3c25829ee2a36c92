"""Made-up training curves of the simulated cluster's jobs (they run no code).

One formula serves the curves the platform stores for such a job (``apps/runs/simulate.py``)
and the progress lines of its simulated log (``simlogs``), so the chart and the log tell the
same story: the same step at the same time, the same loss. Pure: no Django, no clock.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Mapping
from typing import Any

STEPS_PER_S = 2.0
# A 7B dense model, 4,096-token sequences, on A800-class devices (see the SDK's efficiency).
_FLOPS_PER_TOKEN = 6 * 7e9 + 12 * 32 * 4096 * 4096
_PEAK = 312e12


BEST_LR = 3e-4


def learning_rate(values: Mapping[str, Any]) -> float | None:
    """A positive ``lr`` (or ``learning_rate``) among a job's hyperparameters, if any."""
    for key in ("lr", "learning_rate"):
        value = values.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
            return float(value)
    return None


def env_learning_rate(env: Mapping[str, str]) -> float | None:
    """The learning rate of a sweep's trial, from the ``ZS_TRIAL_PARAMS`` the platform gives
    its containers."""
    try:
        values = json.loads(env.get("ZS_TRIAL_PARAMS", "{}"))
    except ValueError:
        return None
    return learning_rate(values) if isinstance(values, dict) else None


def training_point(
    job_id: int, devices: int, step: int, lr: float | None = None
) -> dict[str, float]:
    """The values a simulated training job reports at ``step``: a decaying loss, a
    warm-up-then-cosine learning rate, gradient norm, throughput and MFU. ``lr``: the job's
    peak learning rate when it has one (a sweep's trial); the further it is from
    ``BEST_LR`` (in decades), the higher the loss settles, so a simulated sweep has a best
    trial to find."""
    rng = random.Random(job_id * 1_000_003 + step)
    seed = random.Random(job_id)
    spread = seed.random()
    floor, start, tau = 1.6 + spread, 9.0 + seed.random() * 2, 300 + seed.random() * 500
    if lr is not None:
        floor = 1.6 + 0.3 * spread + 0.6 * math.log10(lr / BEST_LR) ** 2
    loss = floor + (start - floor) * math.exp(-step / tau) + rng.gauss(0, 0.03)
    warmup, peak_lr = 200, lr or BEST_LR
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
