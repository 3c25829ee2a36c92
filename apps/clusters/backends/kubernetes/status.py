"""Map what Kubernetes reports (plain dicts in API casing) onto ``WorkloadStatus``.

Phases: ``pending`` (accepted, not all replicas up), ``running``, ``succeeded``, ``failed`` (both
terminal), ``unknown`` (transitional or unreadable: keep the current state and look again).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ..spec import (
    LABEL_JOB_ID,
    LABEL_MANAGED_BY,
    MANAGED_BY_VALUE,
    Phase,
    WorkloadKind,
    WorkloadStatus,
)
from .manifests import ANNOTATION_REVISION

_VOLCANO_PHASES: Mapping[str, Phase] = {
    "Pending": "pending",
    "Restarting": "pending",
    "Running": "running",
    "Completing": "running",
    "Completed": "succeeded",
    "Aborted": "failed",
    "Terminated": "failed",
    "Failed": "failed",
    "Aborting": "unknown",
    "Terminating": "unknown",
}


def job_id_of(obj: Mapping[str, Any]) -> int | None:
    """Our job id from the object's labels, or None when the object is not ours."""
    labels = (obj.get("metadata") or {}).get("labels") or {}
    if labels.get(LABEL_MANAGED_BY) != MANAGED_BY_VALUE:
        return None
    raw = labels.get(LABEL_JOB_ID)
    if not isinstance(raw, str) or not raw.isdigit():
        return None
    return int(raw)


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def status_from_object(kind: WorkloadKind, obj: Mapping[str, Any]) -> WorkloadStatus | None:
    """The status of one of our primary objects (Volcano Job, StatefulSet, Deployment); None
    for objects we do not manage."""
    job_id = job_id_of(obj)
    if job_id is None:
        return None
    metadata = obj.get("metadata") or {}
    common: dict[str, Any] = {
        "job_id": job_id,
        "kind": kind,
        "namespace": metadata.get("namespace") or "",
        "name": metadata.get("name") or "",
        "resource_version": str(metadata.get("resourceVersion") or ""),
    }
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    if kind == "training":
        result = _volcano_status(common, spec, status)
    elif kind == "notebook":
        result = _replicated_status(common, spec, status, failed=False, message="")
    else:
        result = _deployment_status(common, spec, status, metadata.get("generation"))
    if metadata.get("deletionTimestamp"):
        result = replace(result, message=f"being deleted; {result.message}")
    return result


def _volcano_status(
    common: dict[str, Any], spec: Mapping[str, Any], status: Mapping[str, Any]
) -> WorkloadStatus:
    desired = sum(_int(task.get("replicas")) for task in spec.get("tasks") or [])
    state = status.get("state") or {}
    raw_phase = state.get("phase")
    retries = _int(status.get("retryCount"))
    if not raw_phase:
        phase: Phase = "pending"
        message = "accepted; waiting for Volcano"
    else:
        phase = _VOLCANO_PHASES.get(str(raw_phase), "unknown")
        parts = [str(raw_phase)]
        if state.get("reason"):
            parts.append(str(state["reason"]))
        if state.get("message"):
            parts.append(str(state["message"]))
        if raw_phase == "Restarting":
            parts.append(f"retry {retries}")
        message = ": ".join(parts)
    return WorkloadStatus(
        **common,
        phase=phase,
        message=message,
        replicas_desired=desired,
        replicas_pending=_int(status.get("pending")),
        replicas_running=_int(status.get("running")),
        replicas_succeeded=_int(status.get("succeeded")),
        replicas_failed=_int(status.get("failed")),
        retry_count=retries,
    )


def _replicated_status(
    common: dict[str, Any],
    spec: Mapping[str, Any],
    status: Mapping[str, Any],
    *,
    failed: bool,
    message: str,
) -> WorkloadStatus:
    desired = _int(spec.get("replicas")) if "replicas" in spec else 1
    ready = _int(status.get("readyReplicas"))
    if failed:
        phase: Phase = "failed"
    elif ready >= 1:
        phase = "running"
    else:
        phase = "pending"
    if not message:
        message = f"{ready}/{desired} replicas ready"
    return WorkloadStatus(
        **common,
        phase=phase,
        message=message,
        replicas_desired=desired,
        replicas_pending=max(0, desired - ready),
        replicas_running=ready,
    )


def _deployment_status(
    common: dict[str, Any], spec: Mapping[str, Any], status: Mapping[str, Any], generation: Any
) -> WorkloadStatus:
    """A Deployment's phase and rollout. Past its progress deadline it is ``failed`` only when
    no replica is ready; with ready replicas (older pods still serving through a stuck rollout
    or scale-up) it stays ``running`` with ``rollout_failed``."""
    desired = _int(spec.get("replicas")) if "replicas" in spec else 1
    updated = _int(status.get("updatedReplicas"))
    # Until the controller has seen the newest template, the status (and a past deadline)
    # still describes the one before: a rollback just patched in must not read as failed.
    current = _int(status.get("observedGeneration")) >= _int(generation)
    rolled_out = (
        current
        and updated >= desired
        and _int(status.get("replicas")) <= desired
        and _int(status.get("availableReplicas")) >= desired
    )
    failed = serving = False
    message = ""
    for condition in status.get("conditions") or []:
        if (
            condition.get("type") == "Progressing"
            and condition.get("status") == "False"
            and condition.get("reason") == "ProgressDeadlineExceeded"
        ):
            message = str(condition.get("message") or "ProgressDeadlineExceeded")
            serving = _int(status.get("readyReplicas")) >= 1
            failed = not serving
            break
    result = _replicated_status(common, spec, status, failed=failed, message=message)
    return replace(
        result,
        replicas_updated=updated,
        revision=_revision(spec),
        rolled_out=rolled_out,
        rollout_failed=serving and current,
    )


def _revision(spec: Mapping[str, Any]) -> int:
    """The service revision the Deployment's pod template carries; 0 when absent or unreadable."""
    template = spec.get("template") or {}
    annotations = (template.get("metadata") or {}).get("annotations") or {}
    raw = annotations.get(ANNOTATION_REVISION)
    if not isinstance(raw, str) or not raw.isdecimal() or not raw.isascii():
        return 0
    return int(raw)
