"""Projects: who may rename and delete them, and a delete that would rewrite cost history."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db.models import RestrictedError

from apps.accounting.models import UsageSegment
from apps.audit.models import AuditEntry
from apps.jobs.models import Job, JobKind
from apps.tenancy.models import Project, Role
from tests.conftest import World
from tests.factories import make_pool, make_project

pytestmark = pytest.mark.django_db
URL = "/api/v1/tenants/tenant-a/projects/"
T0 = datetime(2026, 1, 5, tzinfo=UTC)


def _job(world: World, project: Project) -> Job:
    return Job.objects.create(
        tenant=world.tenant_a, project=project, owner=world.user("a", Role.MEMBER),
        name="sft", kind=JobKind.TRAINING, pool=make_pool(), spec={}, state="succeeded",
    )  # fmt: skip


def test_a_member_renames_and_deletes_only_the_projects_they_created(world, client_for) -> None:
    alice = world.user("a", Role.TENANT_ADMIN)
    bob = client_for(world.user("a", Role.MEMBER))
    hers = make_project(tenant=world.tenant_a, name="alice-work", created_by=alice)
    default = make_project(tenant=world.tenant_a, name="default")  # no creator recorded
    for project in (hers, default):
        renamed = bob.patch(f"{URL}{project.pk}/", {"name": "bobs"}, format="json")
        assert renamed.status_code == 403
        assert "tenant admin or the project's creator" in renamed.json()["detail"]
        assert bob.delete(f"{URL}{project.pk}/").status_code == 403
    assert set(Project.objects.values_list("name", flat=True)) == {"alice-work", "default"}
    assert not AuditEntry.objects.exists()
    # His own project is his to rename and delete; reading any is fine.
    created = bob.post(URL, {"name": "bob-work"}, format="json")
    assert created.status_code == 201
    own = f"{URL}{created.json()['id']}/"
    assert bob.patch(own, {"name": "bob-work-2"}, format="json").status_code == 200
    assert bob.get(f"{URL}{hers.pk}/").status_code == 200
    assert bob.delete(own).status_code == 204
    # A tenant admin manages every project.
    admin = client_for(alice)
    assert admin.patch(f"{URL}{default.pk}/", {"name": "main"}, format="json").status_code == 200
    assert admin.delete(f"{URL}{default.pk}/").status_code == 204


def test_a_project_with_jobs_or_usage_cannot_be_deleted(world, client_for) -> None:
    project = make_project(tenant=world.tenant_a, name="llm")
    job = _job(world, project)
    UsageSegment.objects.create(
        job=job, tenant=world.tenant_a, project=project, owner=job.owner, pool=job.pool,
        device_milli=8000, started_at=T0, ended_at=T0 + timedelta(hours=1), reason="succeeded",
    )  # fmt: skip
    admin = client_for(world.user("a", Role.TENANT_ADMIN))
    response = admin.delete(f"{URL}{project.pk}/")
    assert response.status_code == 409
    detail = response.json()["detail"]
    assert "1 job" in detail and "1 usage segment" in detail and "Rename it" in detail
    assert UsageSegment.objects.get().project == project
    assert Job.objects.get(pk=job.pk).project == project
    # Renaming keeps the history attributed, under the new name.
    assert admin.patch(f"{URL}{project.pk}/", {"name": "llm-v2"}, format="json").status_code == 200
    assert UsageSegment.objects.values_list("project__name", flat=True).get() == "llm-v2"


def test_the_database_refuses_to_orphan_usage_too(world) -> None:
    """Defence in depth below the API: a usage segment keeps its project (RESTRICT)."""
    project = make_project(tenant=world.tenant_a, name="llm")
    job = _job(world, project)
    UsageSegment.objects.create(
        job=job, tenant=world.tenant_a, project=project, owner=job.owner, pool=job.pool,
        device_milli=1000, started_at=T0, ended_at=T0 + timedelta(hours=1), reason="succeeded",
    )  # fmt: skip
    Job.objects.filter(pk=job.pk).update(project=None)
    with pytest.raises(RestrictedError):
        project.delete()
    # Deleting the tenant still takes its projects and usage with it.
    world.tenant_a.delete()
    assert not UsageSegment.objects.exists() and not Project.objects.exists()


def test_a_duplicate_name_on_rename_is_a_field_error(world, client_for) -> None:
    make_project(tenant=world.tenant_a, name="taken")
    other = make_project(tenant=world.tenant_a, name="free")
    admin = client_for(world.user("a", Role.TENANT_ADMIN))
    response = admin.patch(f"{URL}{other.pk}/", {"name": "taken"}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"] == {"name": ["A project with this name already exists."]}
