"""Every GET of the committed OpenAPI schema, aimed at real objects, answers in the shape its
schema declares: a page (``results``), a list or an object.

The fuzzing test checks conformance too, but its random ids mostly reach 404s; here every path
gets tenant B's real ids (the cross-tenant matrix's fixture) and a platform admin, so a view
that returns a bare list where the schema (and so the typed dashboard client) promises a page
is caught even when the list is empty."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from rest_framework.test import APIClient

from tests.conftest import World

from .conftest import Foreign
from .test_cross_tenant_matrix import FOREIGN_QUERIES, SCHEMA, fill

pytestmark = pytest.mark.django_db


def _shape(schema: dict[str, Any], components: dict[str, Any]) -> str:
    """'page', 'list' or 'object': what a 200 answer of this response schema looks like."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        if name.startswith("Paginated"):
            return "page"
        schema = components[name]
    return "list" if schema.get("type") == "array" else "object"


def _get_operations() -> list[tuple[str, str]]:
    """(path, expected shape) of every GET whose 200 answer is JSON."""
    spec = yaml.safe_load(SCHEMA.read_text())
    components = spec["components"]["schemas"]
    found = []
    for path, ops in spec["paths"].items():
        content = ops.get("get", {}).get("responses", {}).get("200", {}).get("content", {})
        if "application/json" in content:
            found.append((path, _shape(content["application/json"]["schema"], components)))
    return found


def test_every_get_answers_in_the_shape_its_schema_declares(world: World, foreign: Foreign) -> None:
    client = APIClient()
    client.force_authenticate(world.platform_admin)
    checked, wrong = 0, []
    for path, shape in _get_operations():
        url = fill(path, foreign, "tenant-b")
        query = FOREIGN_QUERIES.get(path, [""])[0]
        if query:
            url += "?" + query.format(job=foreign.ids["job"])
        response = client.get(url)
        if response.status_code != 200:
            continue  # refused or absent for this object: nothing to compare
        body = response.json()
        got = (
            "page"
            if isinstance(body, dict) and isinstance(body.get("results"), list)
            else "list"
            if isinstance(body, list)
            else "object"
        )
        checked += 1
        if got != shape:
            wrong.append(f"GET {url}: schema says {shape}, answered {got}")
    assert wrong == [], "\n".join(wrong)
    assert checked >= 40, checked  # most of the API's reads, not a handful
