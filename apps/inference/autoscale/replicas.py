"""A simulated LLM service: replicas with continuous batching, queueing and cold starts.

This is a fluid model, advanced in small time steps, not a per-request simulator: replaying a
day of production traffic (millions of requests) must take seconds, and the same code runs in
the product's embedded mode on every tick. What it keeps from a real vLLM-style server:

* **Continuous batching.** Every decode step serves all running sequences; a step takes
  ``step_base_s + step_per_seq_s * batch`` seconds, so per-token latency grows with the batch.
* **Saturation.** A replica runs at most ``max_batch`` sequences; beyond that requests wait in
  a queue (FIFO, shared through least-outstanding-requests balancing), and beyond
  ``max_queue_per_replica`` they are rejected (the errors we count).
* **Cold start.** A new replica loads its model for ``cold_start_s`` before it serves.
* **Output length.** Requests produce ``tokens_mean`` tokens on average, with exponential
  length; latency percentiles use the matching token-count quantiles.

No Django import: the benchmark and the product use this module as is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(message)


@dataclass(frozen=True)
class ReplicaModel:
    """Performance of one replica (defaults: a 7-8B model on one H100-class GPU)."""

    step_base_s: float = 0.012
    step_per_seq_s: float = 0.0004
    prefill_s: float = 0.05
    tokens_mean: float = 128.0
    max_batch: int = 64
    max_queue_per_replica: int = 256
    cold_start_s: float = 60.0

    def __post_init__(self) -> None:
        _require(self.step_base_s > 0 and self.step_per_seq_s >= 0, "step times must be > 0")
        _require(self.prefill_s >= 0, "prefill_s must be >= 0")
        _require(self.tokens_mean >= 1, "tokens_mean must be >= 1")
        _require(self.max_batch >= 1, "max_batch must be >= 1")
        _require(self.max_queue_per_replica >= 0, "max_queue_per_replica must be >= 0")
        _require(self.cold_start_s >= 0, "cold_start_s must be >= 0")

    def tokens_quantile(self, q: float) -> float:
        """Output length at quantile ``q`` (exponential lengths with the given mean)."""
        return -self.tokens_mean * math.log(1.0 - q)

    def step_s(self, batch: float) -> float:
        return self.step_base_s + self.step_per_seq_s * batch

    def service_s(self, batch: float, tokens: float | None = None) -> float:
        """Time one request spends in the batch when ``batch`` sequences run together."""
        return self.prefill_s + (self.tokens_mean if tokens is None else tokens) * self.step_s(
            batch
        )

    def throughput(self, batch: float) -> float:
        """Requests per second one replica completes at this batch size."""
        return batch / self.service_s(batch) if batch > 0 else 0.0

    @property
    def max_throughput(self) -> float:
        return self.throughput(self.max_batch)

    def latency_at_batch(self, batch: float, q: float) -> float:
        return self.service_s(batch, self.tokens_quantile(q))

    def slo_batch(self, p95_target_s: float) -> float:
        """Largest batch at which the p95 latency (no queueing) still meets the target."""
        tokens = self.tokens_quantile(0.95)
        per_token = (p95_target_s - self.prefill_s) / tokens
        return max(
            0.0, min(float(self.max_batch), (per_token - self.step_base_s) / self.step_per_seq_s)
        )


@dataclass(frozen=True)
class TickMetrics:
    """What the service looked like over one step: the traffic metrics of the product."""

    t: float
    qps: float
    concurrency: float
    queued: float
    ready: int
    loading: int
    p50_s: float
    p95_s: float
    p99_s: float
    errors: float
    gpu_util: float

    @property
    def replicas(self) -> int:
        return self.ready + self.loading


@dataclass
class ServiceSim:
    """The replicas of one service. ``set_desired`` is what a scaler (or a Deployment) asks
    for; ``step`` advances time by ``dt`` with ``arrivals`` requests arriving in it."""

    model: ReplicaModel
    ready: int = 0
    loading: list[float] = field(default_factory=list)  # seconds left to load, per replica
    in_system: float = 0.0  # requests admitted: in the batch plus waiting
    now: float = 0.0
    substeps: int = 4
    # Ready replicas still on the previous revision while a rolling update runs (they serve
    # like the others; loading replicas are always of the newest revision).
    outdated: int = 0

    @property
    def replicas(self) -> int:
        return self.ready + len(self.loading)

    def set_desired(self, desired: int) -> None:
        """Start replicas (they load first) or stop some (loading ones first, then idle ones
        of an old revision, then the others)."""
        desired = max(0, desired)
        while self.replicas < desired:
            self.loading.append(self.model.cold_start_s)
        while self.replicas > desired and self.loading:
            self.loading.pop()
        if self.replicas > desired:
            self.outdated = max(0, self.outdated - (self.ready - desired))
            self.ready = desired

    def begin_rollout(self) -> None:
        """A new revision: every ready replica is now outdated, and replicas still loading
        start over with the new revision's model."""
        self.outdated = self.ready
        self.loading = [self.model.cold_start_s for _ in self.loading]

    def roll(self, start: int, stop_outdated: int, stop_fresh: int) -> None:
        """Apply one rollout step (``rollout.rollout_step``)."""
        for _ in range(stop_fresh):
            if self.loading:
                self.loading.pop()
            elif self.ready > self.outdated:
                self.ready -= 1
        stop = min(stop_outdated, self.outdated)
        self.outdated -= stop
        self.ready -= stop
        self.loading.extend(self.model.cold_start_s for _ in range(start))

    def _advance_loading(self, dt: float) -> None:
        left = []
        for remaining in self.loading:
            remaining -= dt
            if remaining <= 0:
                self.ready += 1
            else:
                left.append(remaining)
        self.loading = left

    def batch(self) -> float:
        """Sequences in the batch of each ready replica (equal split across replicas)."""
        if self.ready == 0:
            return 0.0
        return min(float(self.model.max_batch), self.in_system / self.ready)

    def step(self, arrivals: float, dt: float = 1.0) -> TickMetrics:
        model = self.model
        h = dt / self.substeps
        errors = 0.0
        busy = 0.0
        conc = 0.0
        for _ in range(self.substeps):
            self._advance_loading(h)
            self.in_system += arrivals / self.substeps
            limit = (
                self.ready * (model.max_batch + model.max_queue_per_replica)
                if self.ready
                else (model.max_queue_per_replica if self.loading else 0)
            )
            if self.in_system > limit:
                errors += self.in_system - limit
                self.in_system = float(limit)
            b = self.batch()
            done = min(self.in_system, self.ready * model.throughput(b) * h)
            self.in_system -= done
            busy += b / model.max_batch
            conc += self.in_system
        self.now += dt
        b = self.batch()
        queued = max(0.0, self.in_system - self.ready * model.max_batch)
        if self.ready:
            wait = queued / (self.ready * model.throughput(max(b, 1e-9)))
        elif self.loading:
            wait = min(self.loading) + self.in_system / model.max_throughput
        else:
            wait = 0.0
        eff_b = b if self.ready else min(self.in_system, float(model.max_batch))
        served = arrivals > 0 or self.in_system > 0
        lat = [
            wait + model.latency_at_batch(max(eff_b, 1.0), q) if served else 0.0
            for q in (0.50, 0.95, 0.99)
        ]
        return TickMetrics(
            t=self.now,
            qps=arrivals / dt,
            concurrency=conc / self.substeps,
            queued=queued,
            ready=self.ready,
            loading=len(self.loading),
            p50_s=lat[0],
            p95_s=lat[1],
            p99_s=lat[2],
            errors=errors,
            gpu_util=busy / self.substeps,
        )
