"""Job tokens: how the SDK inside a training job authenticates, scoped to that job's run.

A job token reads ``zsj_<job id>_<hmac>``. It is derived from the server secret and the job
id (like notebook tokens), so nothing is stored and the relay can put it into the workload's
environment (``ZS_TOKEN``) at dispatch. It acts as the job's owner, but only:

- on the runs API (``/api/v1/tenants/{tenant}/runs/...``): any other path is a 401;
- on its own job's run: the runs viewset narrows its queryset to it;
- while the job is live, and for ``GRACE`` after it ended (so a final flush still lands).

Rotating ``ZS_SECRET_KEY`` invalidates every job token, as it does notebook tokens.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.utils import timezone
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from apps.accounts.models import User
from apps.jobs.models import TERMINAL, Job

JOB_TOKEN_PREFIX = "zsj_"  # noqa: S105 - a public marker, not a secret
GRACE = timedelta(hours=1)
RUNS_PATH = re.compile(r"^/api/v1/tenants/[a-z0-9-]+/runs/")


@dataclass(frozen=True)
class JobCredential:
    """``request.auth`` of a request made with a job token."""

    job_id: int
    tenant_id: int


def _signature(job_id: int) -> str:
    msg = f"zhisuan:job-token:{job_id}".encode()
    return hmac.new(settings.SECRET_KEY.encode(), msg, hashlib.sha256).hexdigest()


def job_token(job: Job) -> str:
    return f"{JOB_TOKEN_PREFIX}{job.pk}_{_signature(job.pk)}"


def job_for_token(plaintext: str) -> Job | None:
    """The live job a well-formed, correctly signed job token names, else None."""
    if not plaintext.startswith(JOB_TOKEN_PREFIX):
        return None
    ident, sep, sig = plaintext[len(JOB_TOKEN_PREFIX) :].partition("_")
    if not sep or not ident.isdigit() or len(ident) > 19:
        return None
    if not hmac.compare_digest(_signature(int(ident)), sig):
        return None
    job = Job.objects.select_related("owner").filter(pk=int(ident)).first()
    if job is None or job.owner is None or not job.owner.is_active:
        return None
    if job.state in TERMINAL and job.finished_at and timezone.now() - job.finished_at > GRACE:
        return None
    return job


class JobTokenAuthentication(authentication.BaseAuthentication):
    """``Authorization: Bearer zsj_...``; other credentials are left to the next class."""

    def authenticate(self, request: Request) -> tuple[User, JobCredential] | None:
        header = authentication.get_authorization_header(request).decode("latin-1")
        keyword, _, credential = header.partition(" ")
        credential = credential.strip()
        if keyword != "Bearer" or not credential.startswith(JOB_TOKEN_PREFIX):
            return None
        job = job_for_token(credential)
        if job is None or job.owner is None:
            raise exceptions.AuthenticationFailed("Invalid or expired job token.")
        if not RUNS_PATH.match(request.path):
            raise exceptions.AuthenticationFailed(
                "A job token only reaches the runs API of its own job."
            )
        return job.owner, JobCredential(job_id=job.pk, tenant_id=job.tenant_id)

    def authenticate_header(self, request: Request) -> str:
        return "Bearer"
