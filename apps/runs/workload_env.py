"""The environment the platform gives a training job's containers, for the SDK inside it."""

from __future__ import annotations

import json

from django.conf import settings

from apps.jobs.models import Job, JobKind
from apps.runs.authentication import job_token
from apps.runs.selectors import newest_complete_checkpoint
from apps.runs.services import ensure_run_for_job
from apps.sweeps.models import Trial


def job_env(job: Job) -> dict[str, str]:
    """``ZS_*`` variables for a training job (empty for notebooks and inference services):
    where the API is, the job's scoped token, its tenant, job and run ids, and, for a
    restarted job, ``ZS_RESUME_FROM``: the path of its newest complete checkpoint; for a
    sweep's trial, ``ZS_SWEEP_ID``, ``ZS_TRIAL`` and ``ZS_TRIAL_PARAMS`` (its values, JSON)."""
    if job.kind != JobKind.TRAINING:
        return {}
    run = ensure_run_for_job(job)
    env = {
        "ZS_API_URL": settings.PUBLIC_API_URL,
        "ZS_TOKEN": job_token(job),
        "ZS_TENANT": job.tenant.slug,
        "ZS_JOB_ID": str(job.pk),
        "ZS_RUN_ID": str(run.pk),
    }
    trial = Trial.objects.filter(job=job).select_related("sweep").first()
    if trial is not None:
        env["ZS_SWEEP_ID"] = str(trial.sweep_id)
        env["ZS_TRIAL"] = str(trial.index)
        env["ZS_TRIAL_PARAMS"] = json.dumps(trial.params, sort_keys=True)
    ckpt = newest_complete_checkpoint(job)
    if ckpt is not None:
        env["ZS_RESUME_FROM"] = ckpt.path
        env["ZS_RESUME_STEP"] = str(ckpt.step)
    return env
