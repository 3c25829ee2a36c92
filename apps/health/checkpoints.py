"""Where a restarted job resumes: its newest complete checkpoint (C8) from the run registry
(``apps.runs``), the one the restarted attempt gets as ``ZS_RESUME_FROM``. Without one the
resume point is the start of the attempt and lost time is counted from there."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from apps.jobs.models import Job
from apps.runs.selectors import newest_complete_checkpoint


@dataclass(frozen=True)
class CheckpointRef:
    step: int
    # When the checkpoint was first registered: work after it is lost on a restart.
    created_at: datetime
    location: str


def latest_checkpoint(job: Job) -> CheckpointRef | None:
    """The newest checkpoint of ``job`` that every rank finished, or None."""
    row = newest_complete_checkpoint(job)
    if row is None:
        return None
    return CheckpointRef(step=row.step, created_at=row.created_at, location=row.path)
