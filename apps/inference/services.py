"""The write path of inference services: create (with its Job), change settings, and the
embedded-mode autoscaling tick."""

from __future__ import annotations

import logging
import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apps.accounts.models import User
from apps.clusters.models import ClusterKind, ResourcePool
from apps.inference import rollouts
from apps.inference.autoscale.replicas import ReplicaModel, ServiceSim, TickMetrics
from apps.inference.autoscale.scaler import Autoscaler, ScalerConfig
from apps.inference.models import (
    DEFAULT_RUNTIME_IMAGE,
    InferenceService,
    RevisionState,
    RolloutState,
    ScalingDecision,
    ServiceRevision,
    TrafficSample,
)
from apps.inference.runtime_metrics import RuntimeTraffic, read_traffic
from apps.inference.selectors import running_services
from apps.jobs.models import TERMINAL, Job, JobKind
from apps.jobs.notes import Said
from apps.jobs.services import request_scale, submit_job
from apps.scheduling.replicas import admit_replicas, held_replicas, release_replicas
from apps.tenancy.models import Tenant

log = logging.getLogger("zhisuan.inference")

SETTINGS_FIELDS = (
    "runtime_image", "model_uri", "port", "accelerators", "accelerator_milli", "min_replicas",
    "max_replicas", "scale_to_zero", "target_metric", "target_value", "stable_window_s",
    "panic_window_s", "scale_down_delay_s", "max_scale_up_rate", "cold_start_s",
    "forecast_quantile", "max_surge",
    "max_unavailable", "readiness_path", "liveness_path", "probe_initial_delay_s",
    "probe_period_s",
)  # fmt: skip
SAMPLE_PERIOD_S = 10
ADMIT_RETRY_S = 30.0  # a scale-up the scheduler could not admit is asked again this often
KEEP_SAMPLES = timedelta(hours=24)


def _job_spec(s: dict[str, Any], cpu_milli: int, memory_mib: int) -> dict[str, Any]:
    return {
        **rollouts.serving_spec(s["runtime_image"], s["model_uri"], s["port"]),
        "command": [],
        "replica_groups": [
            {
                "name": "server",
                "replicas": max(1, s["min_replicas"]),
                "accelerators": s["accelerators"],
                "accelerator_milli": s["accelerator_milli"],
                "cpu_milli": cpu_milli,
                "memory_mib": memory_mib,
                "rdma_nics": 0,
            }
        ],
        "accelerator_models": [],
        "inference": rollouts.rollout_settings(s),
    }


def on_kubernetes(job: Job) -> bool:
    """Whether the job's pool is on a Kubernetes cluster (its replica count is applied there;
    the simulated cluster's replicas are modelled in this process instead)."""
    return bool(job.pool.cluster.kind == ClusterKind.KUBERNETES)


def _default(field: str) -> Any:
    return getattr(InferenceService._meta.get_field(field), "default", None)


@transaction.atomic
def create_service(
    *,
    tenant: Tenant,
    owner: User,
    name: str,
    pool: ResourcePool,
    priority: int = 4,
    cpu_milli: int = 8000,
    memory_mib: int = 65_536,
    settings: dict[str, Any],
) -> InferenceService:
    """Submit the inference Job (queued like any job) and record its serving settings."""
    values = {k: settings[k] for k in SETTINGS_FIELDS if k in settings}
    values.setdefault("runtime_image", DEFAULT_RUNTIME_IMAGE)
    merged: dict[str, Any] = {
        field: values.get(field, _default(field)) for field in SETTINGS_FIELDS
    }
    job = submit_job(
        tenant=tenant,
        owner=owner,
        name=name,
        kind=JobKind.INFERENCE,
        pool=pool,
        priority=priority,
        spec=_job_spec(merged, cpu_milli, memory_mib),
    )
    service = InferenceService.objects.create(
        job=job,
        tenant=tenant,
        desired_replicas=max(1, merged["min_replicas"]),
        serving_revision=0,  # none until the service runs
        **merged,
    )
    ServiceRevision.objects.create(
        service=service,
        number=1,
        runtime_image=service.runtime_image,
        model_uri=service.model_uri,
        settings=rollouts.serving_settings(service),
        state=RevisionState.PENDING,
        created_at=service.created_at,
        created_by=owner,
    )
    return service


@transaction.atomic
def update_settings(
    *, service: InferenceService, changes: dict[str, Any], actor: User | None = None
) -> InferenceService:
    """Change scaling and rollout settings; the next tick's autoscaler uses them. A new
    runtime image, model, port or probe is a new revision, rolled out replica by replica (an
    ended service only keeps the settings)."""
    service = InferenceService.objects.select_for_update().get(pk=service.pk)
    what_runs = rollouts.REVISION_FIELDS + rollouts.SERVING_FIELDS
    content = {
        key: value
        for key, value in changes.items()
        if key in what_runs and value != getattr(service, key)
    }
    ended = Job.objects.filter(pk=service.job_id, state__in=TERMINAL).exists()
    for key, value in changes.items():
        if key in SETTINGS_FIELDS and (key not in what_runs or ended):
            setattr(service, key, value)
    service.updated_at = timezone.now()
    service.save()
    if content and not ended:
        # Writes the job's spec whole, surge limits included.
        rollouts.new_revision(service, content, actor=actor)
    elif any(key in rollouts.ROLLOUT_FIELDS for key in changes):
        # The surge limits: the next rollout patches them onto the Deployment with the pod
        # template (they say how a rollout goes; nothing rolls for them alone).
        rollouts.write_spec(Job.objects.get(pk=service.job_id), service)
    transaction.on_commit(lambda: _reconfigure_runtime(service))
    return service


def _reconfigure_runtime(service: InferenceService) -> None:
    """The running autoscaler takes the new settings and keeps its windows and held
    recommendations: a settings change must not read as a sudden quiet and drop replicas."""
    rt = _RUNTIME.get(service.pk)
    if rt is None:
        return
    rt.scaler.reconfigure(scaler_config(service))
    rt.sim.model = replace(rt.sim.model, cold_start_s=float(service.cold_start_s))


def scaler_config(service: InferenceService) -> ScalerConfig:
    return ScalerConfig(
        metric=service.target_metric,  # type: ignore[arg-type]  # validated choices
        target=service.target_value,
        min_replicas=service.min_replicas,
        max_replicas=service.max_replicas,
        scale_to_zero=service.scale_to_zero,
        stable_window_s=float(service.stable_window_s),
        panic_window_s=float(service.panic_window_s),
        scale_down_delay_s=float(service.scale_down_delay_s),
        max_scale_up_rate=service.max_scale_up_rate,
        cold_start_s=float(service.cold_start_s),
        forecast_quantile=service.forecast_quantile,
    )


# --- embedded mode: simulated replicas and the autoscaler, one step per control-loop tick ---


@dataclass
class _Runtime:
    """In-process state of one running service (the embedded mode is one process)."""

    sim: ServiceSim
    scaler: Autoscaler
    rng: random.Random
    window: list[TickMetrics]
    started: float
    # Kubernetes services: the runtime's readings since ``sampled_from`` (virtual seconds).
    readings: list[RuntimeTraffic] = field(default_factory=list)
    sampled_from: float = 0.0
    # The last scale-up the scheduler could not fully admit: (wanted, when, why).
    refused: tuple[int, float, Said] | None = None
    # The revision the simulated replicas run (a rollout begins when the service's differs)
    # and when a rollout last asked for surge room.
    revision: int = 0
    surge_asked: float | None = None


_RUNTIME: dict[int, _Runtime] = {}


def simulated_rate(service_id: int, t: float, peak: float) -> float:
    """Demo traffic of the simulated cluster: a 20-minute wave with a burst every hour,
    clearly synthetic (the benchmark replays the real trace instead)."""
    wave = 0.55 + 0.45 * math.sin(2 * math.pi * (t + 97 * service_id) / 1200)
    burst = 1.8 if (t + 311 * service_id) % 3600 < 90 else 1.0
    return peak * wave * burst


def _runtime_for(service: InferenceService, now: float) -> _Runtime:
    rt = _RUNTIME.get(service.pk)
    if rt is None:
        model = ReplicaModel(cold_start_s=float(service.cold_start_s))
        sim = ServiceSim(model, ready=max(service.ready_replicas, service.desired_replicas))
        rt = _Runtime(sim, Autoscaler(scaler_config(service)), random.Random(service.pk), [], now)
        rt.revision = service.serving_revision
        if _rolling(service):
            # A process that restarts mid-rollout goes on where the rollout was: the replicas
            # it had moved to the new revision stay moved, the rest are still the old one's.
            sim.outdated = sim.ready - min(service.updated_replicas, sim.ready)
            rt.revision = service.revision
        _RUNTIME[service.pk] = rt
    return rt


def _poisson(rng: random.Random, lam: float) -> int:
    if lam > 30:
        return max(0, round(rng.gauss(lam, math.sqrt(lam))))
    limit, k, p = math.exp(-lam), 0, 1.0
    while True:
        p *= rng.random()
        if p <= limit:
            return k
        k += 1


def autoscale_tick(*, now: datetime | None = None, dt: float = 1.0) -> int:
    """Advance every running service's simulated replicas by ``dt`` and run its autoscaler.
    Returns how many services were stepped. One query when none runs."""
    services = list(running_services())
    alive = {s.pk for s in services}
    for stale in set(_RUNTIME) - alive:
        del _RUNTIME[stale]
    if not services:
        return 0
    now = now or timezone.now()
    for service in services:
        _step_service(service, now, dt)
    return len(services)


def prometheus_traffic(service: InferenceService) -> RuntimeTraffic | None:
    """The runtime's own metrics (vLLM names) through Prometheus, when the platform reads a
    Prometheus; None otherwise: a real Deployment is never scaled on made-up load."""
    if settings.TELEMETRY_SOURCE != "prometheus":
        return None
    from apps.telemetry.sources.prometheus import PrometheusSource

    try:
        return read_traffic(
            PrometheusSource(settings.PROMETHEUS_URL), service.job_id, service.job.tenant.slug
        )
    except Exception:
        log.warning("no traffic reading for inference service %s", service.pk, exc_info=True)
        return None


# How services on a Kubernetes cluster are observed; tests replace it.
kube_traffic: Callable[[InferenceService], RuntimeTraffic | None] = prometheus_traffic


def _step_kubernetes_service(service: InferenceService, now: datetime) -> None:
    """A service on Kubernetes: observe its runtime's metrics, decide, record, and leave the
    count for a worker to apply (the tick never calls the cluster). No reading: no decision."""
    t = now.timestamp()
    rt = _RUNTIME.get(service.pk)
    if rt is None:
        rt = _Runtime(
            ServiceSim(ReplicaModel(cold_start_s=float(service.cold_start_s))),
            Autoscaler(scaler_config(service)),
            random.Random(service.pk),
            [],
            t,
        )
        _RUNTIME[service.pk] = rt
    if _rolling(service):
        # Surge room is held here, not by reading traffic: a rollout goes on without it.
        with transaction.atomic():
            rt.surge_asked = rollouts.step_kubernetes(service, now, rt.surge_asked)
    traffic = kube_traffic(service)
    if traffic is None:
        return
    cfg = rt.scaler.config
    value = {
        "concurrency": traffic.concurrency,
        "qps": traffic.qps,
        "latency": traffic.p95_s or 0.0,
    }
    rt.scaler.observe(t, value[cfg.metric])
    loading = max(0, service.desired_replicas - traffic.pods)
    decision = rt.scaler.decide(t, traffic.pods, loading)
    with transaction.atomic():
        applied, short = _admitted(service, rt, decision.desired, now)
        if applied != service.desired_replicas or decision.panic != service.panic:
            _record_decision(service, now, cfg.metric, decision, applied, short)
        changes = {
            "desired_replicas": applied,
            "ready_replicas": traffic.pods,
            "loading_replicas": loading,
            "panic": decision.panic,
        }
        if any(getattr(service, k) != v for k, v in changes.items()):
            InferenceService.objects.filter(pk=service.pk).update(**changes)
        if applied != service.desired_replicas:
            request_scale(service.job)  # the relay releases extras once the cluster shrank
        if not rt.readings:
            rt.sampled_from = t
        rt.readings.append(traffic)
        if t - rt.sampled_from >= SAMPLE_PERIOD_S:
            _record_reading_sample(service, rt.readings, now, round(t - rt.sampled_from))
            rt.readings = []


def _admitted(
    service: InferenceService, rt: _Runtime, want: int, now: datetime
) -> tuple[int, Said]:
    """How many of the ``want`` replicas the service may run: those the scheduler admitted
    (the base ones, plus extras admitted against quota and free room here) and why not more.
    A refused scale-up is asked again after ``ADMIT_RETRY_S`` or when the wish grows."""
    t = now.timestamp()
    if rt.refused and want <= rt.refused[0] and t - rt.refused[1] < ADMIT_RETRY_S:
        held = held_replicas(service.job)
        return min(want, held), rt.refused[2] if want > held else Said("")
    admitted = admit_replicas(service.job, want, now)
    rt.refused = (want, t, admitted.short) if admitted.replicas < want else None
    return min(want, admitted.replicas), admitted.short


def _record_decision(
    service: InferenceService,
    now: datetime,
    metric: str,
    decision: Any,
    applied: int,
    short: Said,
) -> None:
    ScalingDecision.objects.create(
        service=service,
        at=now,
        metric=metric,
        observed_stable=round(decision.observed_stable, 3),
        observed_panic=round(decision.observed_panic, 3),
        current=decision.current,
        desired=applied,
        panic=decision.panic,
        reason=decision.reason,
        wanted=decision.desired if applied < decision.desired else None,
        limited_by=short.english[:300] if applied < decision.desired else "",
        limited_detail=short.detail if applied < decision.desired else [],
    )


def _rolling(service: InferenceService) -> bool:
    return service.rollout_state in (RolloutState.ROLLING, RolloutState.WAITING)


def _step_service(service: InferenceService, now: datetime, dt: float) -> None:
    if service.rollout_state == RolloutState.IDLE and service.revision != service.serving_revision:
        with transaction.atomic():
            # The revision was made while the service was not running: it started on it.
            rollouts.finish(service, service.job, now)
    if on_kubernetes(service.job):
        _step_kubernetes_service(service, now)
        return
    t = now.timestamp()
    rt = _runtime_for(service, t)
    peak = service.max_replicas * service.target_value * 0.6
    rate = simulated_rate(
        service.pk,
        t - rt.started,
        peak
        if service.target_metric == "qps"
        else peak / rt.sim.model.service_s(service.target_value),
    )
    metrics = rt.sim.step(float(_poisson(rt.rng, rate * dt)), dt)
    cfg = rt.scaler.config
    value = {"concurrency": metrics.concurrency, "qps": metrics.qps, "latency": metrics.p95_s}
    rt.scaler.observe(t, value[cfg.metric])
    decision = rt.scaler.decide(t, rt.sim.ready, len(rt.sim.loading))
    rt.window.append(metrics)
    changes: dict[str, Any] = {}
    with transaction.atomic():
        applied, short = _admitted(service, rt, decision.desired, now)
        if applied != service.desired_replicas or decision.panic != service.panic:
            _record_decision(service, now, cfg.metric, decision, applied, short)
        if _rolling(service):
            if rt.revision != service.revision:
                rt.sim.begin_rollout()
                rt.revision = service.revision
            # The rollout step starts and stops replicas towards ``applied`` (plus surge).
            rt.surge_asked = rollouts.step_simulated(service, rt.sim, applied, now, rt.surge_asked)
            if applied < service.desired_replicas:
                release_replicas(service.job, applied, now)
        elif applied != rt.sim.replicas:
            shrink = applied < rt.sim.replicas
            rt.sim.set_desired(applied)
            if shrink:
                release_replicas(service.job, applied, now)  # simulated replicas stop at once
        changes = {
            "desired_replicas": applied,
            "ready_replicas": rt.sim.ready,
            "loading_replicas": len(rt.sim.loading),
            "panic": decision.panic,
        }
        if any(getattr(service, k) != v for k, v in changes.items()):
            InferenceService.objects.filter(pk=service.pk).update(**changes)
        if len(rt.window) * dt >= SAMPLE_PERIOD_S:
            _record_sample(service, rt.window, now)
            rt.window = []


def _record_reading_sample(
    service: InferenceService, readings: list[RuntimeTraffic], now: datetime, period_s: int
) -> None:
    """One sample from the runtime's own metrics over ``period_s``: rates and gauges averaged
    over the readings, latency the worst reading (as for simulated replicas; 0 when no
    request finished), errors the 5xx responses counted over the period."""
    n = len(readings)

    def worst(values: list[float | None]) -> float:
        seen = [v for v in values if v is not None]
        return round(1000 * max(seen), 1) if seen else 0.0

    by_pod: dict[str, list[float]] = {}
    for reading in readings:
        for pod, use in reading.gpu_by_pod.items():
            by_pod.setdefault(pod, []).append(use)
    last = readings[-1]
    # Pods that still report at the end of the period; their use averaged over it.
    per_replica = {
        pod: round(sum(v) / len(v), 4) for pod, v in by_pod.items() if pod in last.gpu_by_pod
    }
    _save_sample(
        service,
        now,
        period_s=period_s,
        qps=round(sum(r.qps for r in readings) / n, 3),
        concurrency=round(sum(r.concurrency for r in readings) / n, 3),
        p50_ms=worst([r.p50_s for r in readings]),
        p95_ms=worst([r.p95_s for r in readings]),
        p99_ms=worst([r.p99_s for r in readings]),
        errors=round(sum(r.errors_per_s for r in readings) / n * period_s),
        gpu_util=round(sum(per_replica.values()) / len(per_replica), 4) if per_replica else 0.0,
        gpu_by_replica=per_replica,
        ready_replicas=last.pods,
        loading_replicas=max(0, service.desired_replicas - last.pods),
    )


def _record_sample(service: InferenceService, window: list[TickMetrics], now: datetime) -> None:
    n = len(window)
    gpu = round(sum(m.gpu_util for m in window) / n, 4)
    _save_sample(
        service,
        now,
        period_s=SAMPLE_PERIOD_S,
        qps=round(sum(m.qps for m in window) / n, 3),
        concurrency=round(sum(m.concurrency for m in window) / n, 3),
        p50_ms=round(1000 * max(m.p50_s for m in window), 1),
        p95_ms=round(1000 * max(m.p95_s for m in window), 1),
        p99_ms=round(1000 * max(m.p99_s for m in window), 1),
        errors=round(sum(m.errors for m in window)),
        gpu_util=gpu,
        # The simulated replicas share the load equally (ServiceSim), so each shows the mean.
        gpu_by_replica={f"simulated-{i}": gpu for i in range(window[-1].ready)},
        ready_replicas=window[-1].ready,
        loading_replicas=window[-1].loading,
    )


def _save_sample(service: InferenceService, now: datetime, **fields: Any) -> None:
    """Store one sample and drop the service's samples older than ``KEEP_SAMPLES``."""
    TrafficSample.objects.create(service=service, at=now, **fields)
    TrafficSample.objects.filter(service=service, at__lt=now - KEEP_SAMPLES).delete()
