"""The usage report: totals that do not depend on the grouping, and a CSV export that a
spreadsheet cannot be made to run and that names empty groups as the page does."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from apps.accounting.csvsafe import safe_cell
from apps.accounting.models import UsageSegment
from apps.accounting.selectors import GROUPS, to_cents, usage_report
from apps.jobs.models import Job, JobKind
from apps.tenancy.models import Project, Role
from tests.conftest import World
from tests.factories import make_pool, make_project

pytestmark = pytest.mark.django_db
T0 = datetime(2026, 3, 2, tzinfo=UTC)
REPORT = "/api/v1/tenants/tenant-a/usage/"
WINDOW = "start=2026-03-01T00:00:00Z&end=2026-03-04T00:00:00Z"


def _segment(world: World, project: Project | None, minutes: int, name: str = "j") -> Job:
    pool = make_pool()
    pool.price_per_device_hour = Decimal("1.00")
    pool.save()
    owner = world.user("a", Role.MEMBER)
    job = Job.objects.create(
        tenant=world.tenant_a, project=project, owner=owner, name=name,
        kind=JobKind.TRAINING, pool=pool, spec={}, state="succeeded",
    )  # fmt: skip
    UsageSegment.objects.create(
        job=job, tenant=world.tenant_a, project=project, owner=owner, pool=pool,
        device_milli=1000, started_at=T0, ended_at=T0 + timedelta(minutes=minutes),
        reason="succeeded",
    )  # fmt: skip
    return job


def _csv(client, group_by: str) -> list[list[str]]:
    response = client.get(f"{REPORT}?group_by={group_by}&export=csv&{WINDOW}")
    assert response.status_code == 200
    return list(csv.reader(io.StringIO(response.content.decode())))


@pytest.mark.parametrize(
    ("cell", "written"),
    [
        ("=cmd|' /c calc'!A1", "'=cmd|' /c calc'!A1"),
        ("+1+1", "'+1+1"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("llm-pretrain", "llm-pretrain"),
        ("a=b", "a=b"),
    ],
)
def test_cells_that_start_a_formula_are_quoted(cell: str, written: str) -> None:
    assert safe_cell(cell) == written


def test_export_neutralises_formulas_and_names_empty_groups_as_the_page(world, client_for):
    _segment(world, make_project(tenant=world.tenant_a, name="=cmd|calc!A1"), 60)
    _segment(world, None, 30)
    admin = client_for(world.user("a", Role.TENANT_ADMIN))
    rows = _csv(admin, "project")
    assert rows[0] == ["project", "device_hours", "cost", "currency"]
    assert sorted(r[0] for r in rows[1:]) == ["'=cmd|calc!A1", "(none)"]
    # The JSON keeps the raw key ("" for none): the page shows it as text, translated.
    keys = {r["key"] for r in admin.get(f"{REPORT}?group_by=project&{WINDOW}").json()}
    assert keys == {"=cmd|calc!A1", ""}


def test_totals_are_the_same_whatever_the_grouping(world, client_for) -> None:
    """Three 20-minute jobs at 1.00 an hour: 0.333... each. Rounded one by one they made
    0.99 by job and 1.00 by project; now every grouping adds up to 1.00."""
    project = make_project(tenant=world.tenant_a, name="llm")
    for i in range(3):
        _segment(world, project, 20, name=f"j{i}")
    admin = client_for(world.user("a", Role.TENANT_ADMIN))
    for group_by in GROUPS:
        if group_by == "tenant":
            continue
        rows = admin.get(f"{REPORT}?group_by={group_by}&{WINDOW}").json()
        assert sum(Decimal(r["cost"]) for r in rows) == Decimal("1.00"), group_by
    by_job = sorted(Decimal(r["cost"]) for r in admin.get(f"{REPORT}?group_by=job&{WINDOW}").json())
    assert by_job == [Decimal("0.33"), Decimal("0.33"), Decimal("0.34")]
    exported = _csv(admin, "job")[1:]
    assert sum(Decimal(r[2]) for r in exported) == Decimal("1.00")


def test_to_cents_hands_missing_cents_to_the_largest_remainders() -> None:
    exact = {"a": Decimal("1.005"), "b": Decimal("2.004"), "c": Decimal("3.3333")}
    cents = to_cents(exact)
    assert cents == {"a": Decimal("1.01"), "b": Decimal("2.00"), "c": Decimal("3.33")}
    assert sum(cents.values()) == Decimal("6.34")  # 6.3423 to the cent
    assert all(abs(cents[k] - exact[k]) < Decimal("0.01") for k in exact)
    assert to_cents({}) == {}


def test_report_rows_keep_their_order_and_hours(world) -> None:
    project = make_project(tenant=world.tenant_a, name="llm")
    _segment(world, project, 90)
    _segment(world, None, 30)
    rows = usage_report(group_by="project", start=T0 - timedelta(days=1),
                        end=T0 + timedelta(days=1), now=T0 + timedelta(days=1))  # fmt: skip
    assert [(r.key, r.device_hours, r.cost) for r in rows] == [
        ("llm", 1.5, Decimal("1.50")), ("", 0.5, Decimal("0.50")),
    ]  # fmt: skip
