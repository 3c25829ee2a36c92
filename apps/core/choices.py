"""Choice sets shared by models of several apps."""

from __future__ import annotations

from django.db import models


class RunState(models.TextChoices):
    """A run a worker carries out for a person who polls it (probe runs, what-if replays)."""

    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"
