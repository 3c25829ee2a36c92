"""Where a restarted job resumes: its newest complete checkpoint (C8), when the checkpoint
registry is installed. Until it is, the answer is "no checkpoint": the resume point is the
start of the attempt and lost time is counted from there (stated in docs/health.md)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.apps import apps
from django.core.exceptions import FieldError

from apps.jobs.models import Job


@dataclass(frozen=True)
class CheckpointRef:
    step: int | None
    created_at: datetime
    location: str


def latest_checkpoint(job: Job) -> CheckpointRef | None:
    """The newest complete checkpoint of ``job`` from a ``checkpoints.Checkpoint`` model with
    ``job``, ``created_at`` and optionally ``step``, ``complete`` and ``uri`` fields."""
    try:
        model = apps.get_model("checkpoints", "Checkpoint")
    except LookupError:
        return None
    names = {f.name for f in model._meta.get_fields()}
    try:
        rows = model.objects.filter(job=job)
        if "complete" in names:
            rows = rows.filter(complete=True)
        row = rows.order_by("-created_at").first()
    except FieldError:
        return None
    if row is None:
        return None
    return CheckpointRef(
        step=getattr(row, "step", None),
        created_at=row.created_at,
        location=str(getattr(row, "uri", "") or getattr(row, "path", "")),
    )
