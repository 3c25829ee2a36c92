"""A deeper schemathesis run, on demand: ``make fuzz-api`` (skipped in ``make test``).

The suite's passes (``test_schemathesis_api.py``) draw a few hundred cases over the whole
schema, the same ones every run. This one draws ``FUZZ_EXAMPLES`` random cases per operation
and mode, as each kind of caller, naming the cross-tenant fixture's real objects by id, so it
reaches the code behind validation that a handful of cases per operation rarely does. Its
first runs (2026-12-03) found ten server errors and broken answers (docs/reliability.md).
A failure prints the case to replay (``curl``).
"""

from __future__ import annotations

import os
from collections import Counter

import pytest
from hypothesis import strategies as st
from schemathesis.generation.modes import GenerationMode

from apps.accounts.services import create_token
from apps.tenancy.models import Role
from tests.conftest import World

from .conftest import Foreign
from .test_schemathesis_api import SCHEMA, fuzz_cases, on_real_objects, real_ids

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "0"))
pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("keep_connection"),
    pytest.mark.skipif(EXAMPLES <= 0, reason="on demand: make fuzz-api (FUZZ_EXAMPLES=n)"),
]


@pytest.mark.parametrize("caller", ["platform-admin", "tenant-admin", "member"])
def test_no_operation_breaks_under_random_cases(
    world: World, foreign: Foreign, caller: str
) -> None:
    user = {
        "platform-admin": world.platform_admin,
        "tenant-admin": world.user("b", Role.TENANT_ADMIN),
        "member": world.user("b", Role.MEMBER),
    }[caller]
    ids = real_ids(foreign)
    failures: list[str] = []
    counts: Counter[str] = Counter()
    for result in SCHEMA.get_all_operations():
        operation = result.ok()  # type: ignore[union-attr]  # the schema is valid
        # A fresh token per operation: a case may revoke the one it was sent with (DELETE
        # /tokens/{id}/ with its id), which would leave every later operation at 401.
        tokens = {caller: create_token(user=user, name="fuzz")[1]}
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            strategy = st.tuples(st.just(caller), on_real_objects(operation, mode, ids))
            fuzz_cases(strategy, EXAMPLES, mode.value, tokens, failures, counts, derandomize=False)
    print(f"{caller}: {sum(counts.values())} requests, {len(failures)} failures")
    assert sum(counts.values()) > 0
    assert failures == [], "\n\n".join(failures[:10])
