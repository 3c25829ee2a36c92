"""A deeper schemathesis run, on demand: ``make fuzz-api`` (skipped in ``make test``).

The suite's passes (``test_schemathesis_api.py``) draw a few hundred cases over the whole
schema, the same ones every run. This one draws ``FUZZ_EXAMPLES`` random cases per operation
and mode, as each kind of caller, naming the cross-tenant fixture's real objects by id, so it
reaches the code behind validation that a handful of cases per operation rarely does. Its
first runs (2026-12-03) found ten server errors and broken answers (docs/reliability.md).
A failure prints the case to replay (``curl``) and the seed to rerun it with.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.core.failures import FailureGroup
from schemathesis.generation.modes import GenerationMode

from apps.accounts.services import create_token
from apps.tenancy.models import Role
from tests.conftest import World

from .conftest import Foreign
from .test_schemathesis_api import APP, CHECKS, SCHEMA

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "0"))
pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("keep_connection"),
    pytest.mark.skipif(EXAMPLES <= 0, reason="on demand: make fuzz-api (FUZZ_EXAMPLES=n)"),
]


def _fuzz(
    strategy: st.SearchStrategy[Any], label: str, auth: dict[str, str]
) -> tuple[int, list[str]]:
    """Send ``EXAMPLES`` random cases of one operation and mode; (requests, failures)."""
    failures: list[str] = []
    sent = 0

    @settings(
        max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    @given(case=strategy)
    def run(case: Any) -> None:
        nonlocal sent
        case.headers = {**(case.headers or {}), **auth}
        response = case.call(app=APP)
        sent += 1
        try:
            case.validate_response(response, checks=CHECKS)
        except (FailureGroup, AssertionError) as exc:
            failures.append(f"{label} {case.method} {case.formatted_path}: {exc}")

    run()
    return sent, failures


@pytest.mark.parametrize("caller", ["platform-admin", "tenant-admin", "member"])
def test_no_operation_breaks_under_random_cases(
    world: World, foreign: Foreign, caller: str
) -> None:
    user = {
        "platform-admin": world.platform_admin,
        "tenant-admin": world.user("b", Role.TENANT_ADMIN),
        "member": world.user("b", Role.MEMBER),
    }[caller]
    ids = sorted({v for v in foreign.ids.values() if isinstance(v, int)})
    named = {"tenant": "tenant-b", "slug": "tenant-b"}
    failures: list[str] = []
    requests = 0
    for result in SCHEMA.get_all_operations():
        operation = result.ok()  # type: ignore[union-attr]  # the schema is valid
        # A fresh token per operation: a case may revoke the one it was sent with (DELETE
        # /tokens/{id}/ with its id), which would leave every later operation at 401.
        auth = {"Authorization": f"Bearer {create_token(user=user, name='fuzz')[1]}"}
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            strategy = st.one_of(
                operation.as_strategy(mode),
                *(operation.as_strategy(mode, path_parameters={**named, "id": i}) for i in ids),
            )
            sent, found = _fuzz(strategy, mode.value, auth)
            requests += sent
            failures += found
    print(f"{caller}: {requests} requests, {len(failures)} failures")
    assert requests > 0
    assert failures == [], "\n\n".join(failures[:10])
