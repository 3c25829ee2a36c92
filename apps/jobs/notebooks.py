"""Who may open which notebook, and where the platform's proxy finds it.

A notebook is opened at ``/notebooks/<job id>/`` on the platform's own origin. Only the
notebook's owner and the tenant's admins (platform admins included) may open it: the page runs
code of the notebook's owner in the opener's browser, so members and viewers do not get to open
each other's notebooks. Someone outside the tenant gets the same 404 as for a missing job.
"""

from __future__ import annotations

from django.utils.translation import override

from apps.accounts.models import User
from apps.clusters.backends import BackendError, NotebookEndpoint, NotFoundError
from apps.clusters.registry import get_backend
from apps.jobs.models import Job, JobKind, JobState
from apps.jobs.notebook_pages import text
from apps.jobs.workload import build
from apps.tenancy.models import ADMIN_ROLES
from apps.tenancy.selectors import role_in, visible_tenants

PROXY_PREFIX = "/notebooks/"


def open_path(job: Job) -> str | None:
    """The platform path that opens the notebook, while it runs; else None."""
    if job.kind != JobKind.NOTEBOOK or job.state != JobState.RUNNING:
        return None
    return f"{PROXY_PREFIX}{job.pk}/"


class Refusal(Exception):  # noqa: N818  # a refusal is an outcome, not a failure
    """Why a notebook cannot be opened: an HTTP status and a message of the proxy pages'
    catalogue (``apps.jobs.notebook_pages``) with its arguments; ``message`` is the English."""

    def __init__(self, status: int, key: str, **args: str) -> None:
        self.status = status
        self.key = key
        self.args_ = args
        with override("en"):
            self.message = text(key, **args)
        super().__init__(self.message)


def notebook_for(user: User, job_id: int) -> Job:
    """The notebook ``user`` may open, or a ``Refusal`` (404 outside the tenant, 403 for a
    member who is neither its owner nor a tenant admin, 409 while it is not running)."""
    job = (
        Job.objects.filter(pk=job_id, kind=JobKind.NOTEBOOK, tenant__in=visible_tenants(user))
        .select_related("tenant", "pool", "owner")
        .first()
    )
    role = role_in(user, job.tenant) if job is not None else None
    if job is None or role is None:
        raise Refusal(404, "noSuch")
    if job.owner_id != user.pk and role not in ADMIN_ROLES:
        raise Refusal(403, "notYours")
    if job.state != JobState.RUNNING:
        raise Refusal(409, "notRunning", name=job.name, state=job.state)
    return job


def endpoint_for(job: Job) -> NotebookEndpoint:
    """Ask the cluster backend where the running notebook listens (no Kubernetes API call)."""
    try:
        return get_backend().notebook_endpoint(build(job))
    except NotFoundError as exc:
        raise Refusal(409, "notServing", name=job.name, detail=str(exc)) from exc
    except BackendError as exc:
        raise Refusal(502, "noAddress", name=job.name) from exc
