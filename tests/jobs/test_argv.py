"""A job's command and args reach the container exactly as the user quoted them."""

from __future__ import annotations

from typing import Any

import pytest

from apps.jobs import workload
from apps.jobs.models import Job
from apps.tenancy.models import Role
from tests.conftest import World
from tests.jobs.conftest import Cluster, training_body

pytestmark = pytest.mark.django_db
URL = "/api/v1/tenants/tenant-a/jobs/"


def test_empty_and_space_padded_arguments_are_kept(
    world: World, client_for: Any, cluster: Cluster
) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    command = ["python", "train.py", "--sep", "", "--prefix", "  two spaces "]
    body = {**training_body(cluster.pool), "command": command, "args": ["", " x"]}
    response = client.post(URL, body, format="json")
    assert response.status_code == 201, response.json()
    job = Job.objects.get(pk=response.json()["id"])
    built = workload.build(job).replica_groups[0]
    assert list(built.command) == command and list(built.args) == ["", " x"]


def test_an_argument_over_the_limit_is_a_field_error(
    world: World, client_for: Any, cluster: Cluster
) -> None:
    client = client_for(world.user("a", Role.MEMBER))
    body = {**training_body(cluster.pool), "command": ["python", "x" * 1001]}
    response = client.post(URL, body, format="json")
    assert response.status_code == 400 and "command" in response.json()["errors"]
    assert not Job.objects.exists()
