"""Hyperparameter sweeps: one job template run as many training jobs (trials), each with its
own parameter values, at most ``parallel`` at a time, ranked by a metric their runs report."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class SweepMethod(models.TextChoices):
    GRID = "grid", "grid"
    RANDOM = "random", "random"
    TPE = "tpe", "tpe"


class SweepGoal(models.TextChoices):
    MIN = "min", "min"
    MAX = "max", "max"


class RankBy(models.TextChoices):
    LAST = "last", "last"
    BEST = "best", "best"


class EarlyStop(models.TextChoices):
    NONE = "none", "none"
    MEDIAN = "median", "median"
    ASHA = "asha", "asha"


class SweepState(models.TextChoices):
    RUNNING = "running", "running"
    FINISHED = "finished", "finished"
    CANCELLED = "cancelled", "cancelled"
    STOPPED = "stopped", "stopped"


ENDED = frozenset({SweepState.FINISHED, SweepState.CANCELLED, SweepState.STOPPED})


class Sweep(models.Model):
    tenant = models.ForeignKey("tenancy.Tenant", on_delete=models.CASCADE, related_name="sweeps")
    project = models.ForeignKey(
        "tenancy.Project", on_delete=models.SET_NULL, null=True, blank=True, related_name="sweeps"
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="sweeps"
    )
    name = models.CharField(max_length=34)
    method = models.CharField(max_length=8, choices=SweepMethod.choices)
    parameters = models.JSONField(help_text="The search space as submitted.")
    template = models.JSONField(
        help_text="The job body each trial is made from (no name or kind: the sweep sets "
        "them), `{{name}}` standing for a parameter's value."
    )
    parallel = models.PositiveSmallIntegerField(
        help_text="Most trials queued or running at once; the next starts when one ends."
    )
    metric = models.CharField(max_length=100, blank=True)
    goal = models.CharField(max_length=3, choices=SweepGoal.choices, default=SweepGoal.MIN)
    rank_by = models.CharField(
        max_length=4,
        choices=RankBy.choices,
        default=RankBy.LAST,
        help_text="Which of a trial's values of the metric ranks it: last, its newest; best, "
        "its best over all its steps (lowest for min, highest for max).",
    )
    seed = models.BigIntegerField()
    early_stop = models.CharField(
        max_length=8,
        choices=EarlyStop.choices,
        default=EarlyStop.NONE,
        help_text="median: stop a running trial whose metric is worse than the median of the "
        "other trials' at the same step; asha: at each rung, stop a trial outside the best "
        "1/reduction_factor of the trials there (apps/sweeps/stopping.py).",
    )
    stop_after_step = models.PositiveIntegerField(
        default=0,
        help_text="No trial is stopped early before it reports this step; for asha, the first "
        "rung.",
    )
    reduction_factor = models.PositiveSmallIntegerField(
        default=3,
        help_text="asha: rungs at stop_after_step times its powers, and the best 1/it of the "
        "trials at a rung go on.",
    )
    brackets = models.PositiveSmallIntegerField(
        default=1,
        help_text="asha: halving brackets run side by side (Hyperband); the trials are split "
        "between them as Hyperband splits its budget (more in the brackets that stop early), "
        "bracket k's first rung is the k-th rung, and its trials are judged against its own.",
    )
    stop_min_trials = models.PositiveSmallIntegerField(
        default=3, help_text="Other trials that must have reached the step to judge a trial."
    )
    startup_trials = models.PositiveSmallIntegerField(
        default=10,
        help_text="tpe: the first trials are drawn at random; each later one is chosen when it "
        "starts, from the results so far (apps/sweeps/adaptive.py).",
    )
    state = models.CharField(max_length=10, choices=SweepState.choices, default=SweepState.RUNNING)
    note = models.CharField(max_length=500, blank=True, help_text="Why a stopped sweep stopped.")
    created_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["tenant", "-id"]), models.Index(fields=["state"])]

    def __str__(self) -> str:
        return self.name


class Trial(models.Model):
    sweep = models.ForeignKey(Sweep, on_delete=models.CASCADE, related_name="trials")
    index = models.PositiveSmallIntegerField(help_text="1, 2, ...: the order trials start in.")
    params = models.JSONField(
        help_text="This trial's value of each parameter; empty for a tpe trial until it starts."
    )
    job = models.OneToOneField(
        "jobs.Job", on_delete=models.SET_NULL, null=True, blank=True, related_name="trial"
    )
    bracket = models.PositiveSmallIntegerField(
        default=1,
        help_text="Its halving bracket, 1..brackets, set when the sweep is made "
        "(rules.assign_brackets).",
    )
    launched_at = models.DateTimeField(null=True, blank=True)
    checked_step = models.BigIntegerField(
        null=True, blank=True, help_text="The step the early-stopping rule last judged."
    )
    stopped_step = models.BigIntegerField(
        null=True, blank=True, help_text="Set when the trial was stopped early: at this step."
    )

    class Meta:
        ordering = ["sweep", "index"]
        constraints = [models.UniqueConstraint(fields=["sweep", "index"], name="uniq_trial_index")]

    def __str__(self) -> str:
        return f"{self.sweep.name}#{self.index}"
