"""Who may watch which telemetry view. Every subscribe and every REST read goes through here.

* ``cluster``: any signed-in user (capacity is platform-wide, as on the overview page).
* ``heatmap`` (every GPU) and ``node:<name>``: platform admins only; nodes are shared.
* ``heatmap:<tenant>``: members of that tenant (their own GPUs + cluster aggregate).
* ``job:<id>``: members of the job's tenant. Unknown and foreign look the same (None).
"""

from __future__ import annotations

from apps.accounts.models import User
from apps.clusters.models import Node
from apps.jobs.models import Job
from apps.telemetry.frames import View
from apps.tenancy.models import Tenant
from apps.tenancy.selectors import role_in


def authorize_view(user: User, topic: str) -> View | None:
    kind, _, key = topic.partition(":")
    if kind == "cluster" and not key:
        return View(topic=topic, kind="cluster")
    if kind == "heatmap" and not key:
        return View(topic=topic, kind="heatmap") if user.is_platform_admin else None
    if kind == "heatmap":
        tenant = Tenant.objects.filter(slug=key).first()
        if tenant is None or role_in(user, tenant) is None:
            return None
        return View(topic=topic, kind="tenant_heatmap", tenant_id=tenant.id)
    if kind == "node" and key:
        if not user.is_platform_admin or not Node.objects.filter(name=key).exists():
            return None
        return View(topic=topic, kind="node", hostname=key)
    if kind == "job" and key.isdigit():
        job = Job.objects.filter(id=int(key)).select_related("tenant").first()
        if job is None or role_in(user, job.tenant) is None:
            return None
        return View(topic=topic, kind="job", job_id=job.id, tenant_id=job.tenant_id)
    return None
