"""Schemathesis over the whole API, in-process through WSGI, with both tenants' tokens.

Positive and negative cases from the committed OpenAPI schema. Pass: no server error, every
response matches its schema, and no operation answers a request without credentials with
success (except the ones that are public on purpose)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.core.failures import FailureGroup
from schemathesis.generation.modes import GenerationMode
from schemathesis.specs.openapi.checks import response_schema_conformance

from apps.accounts.services import create_token
from apps.tenancy.models import Role
from tests.conftest import World

from .conftest import Foreign

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("keep_connection")]

SCHEMA = schemathesis.openapi.from_path(
    Path(__file__).resolve().parents[2] / "openapi" / "schema.yaml"
)
APP = get_wsgi_application()
CHECKS = [not_a_server_error, response_schema_conformance]
# Public on purpose: login itself, "who am I" (answers anonymous), logout (a no-op without a
# session). The node agent's report takes a node token, not a user: refused here all the same.
# The login page's own calls, before anyone has signed in (providers: which SSO it offers).
PUBLIC = {("POST", "/api/v1/auth/login/"), ("GET", "/api/v1/auth/session/"),
          ("POST", "/api/v1/auth/logout/"), ("GET", "/api/v1/auth/providers/")}  # fmt: skip
EXAMPLES = {GenerationMode.POSITIVE: 240, GenerationMode.NEGATIVE: 160}
# The platform admin's pass: it may write platform objects (clusters, pools, quotas, health
# rules, tenants), so its cases also name real objects by id, to reach past the 404.
ADMIN_EXAMPLES = {GenerationMode.POSITIVE: 300, GenerationMode.NEGATIVE: 150}


def _settings(examples: int, derandomize: bool = True) -> Callable[[Any], Any]:
    return settings(
        max_examples=examples,
        deadline=None,
        database=None,
        # the same cases every run, so a red run can be replayed (make fuzz-api draws anew)
        derandomize=derandomize,
        suppress_health_check=list(HealthCheck),
    )


def on_real_objects(target: Any, mode: GenerationMode, ids: list[int]) -> st.SearchStrategy[Any]:
    """Cases of ``target`` (the schema or one operation) with random path parameters, and
    as many again naming tenant B and each real object id (most ids are another kind's
    object: a 404 too, but some reach past it)."""
    named = {"tenant": "tenant-b", "slug": "tenant-b"}
    return st.one_of(
        target.as_strategy(mode),
        *(target.as_strategy(mode, path_parameters={**named, "id": i}) for i in ids),
    )


def real_ids(foreign: Foreign) -> list[int]:
    return sorted({v for v in foreign.ids.values() if isinstance(v, int)})


def fuzz_cases(
    strategy: st.SearchStrategy[tuple[str, Any]],
    examples: int,
    mode: str,
    tokens: dict[str, str],
    failures: list[str],
    counts: Counter[str],
    derandomize: bool = True,
) -> None:
    @_settings(examples, derandomize)
    @given(drawn=strategy)
    def run(drawn: tuple[str, Any]) -> None:
        label, case = drawn
        case.headers = {**(case.headers or {}), "Authorization": f"Bearer {tokens[label]}"}
        response = case.call(app=APP)
        counts[f"{mode} {response.status_code // 100}xx"] += 1
        try:
            case.validate_response(response, checks=CHECKS)
        except (FailureGroup, AssertionError) as exc:
            failures.append(f"{mode} {case.method} {case.formatted_path}: {exc}")

    run()


def test_schemathesis_finds_no_server_error_and_no_schema_break(
    world: World, foreign: Foreign
) -> None:
    tokens = {
        label: create_token(user=world.user(label, Role.TENANT_ADMIN), name="fuzz")[1]
        for label in ("a", "b")
    }
    failures: list[str] = []
    counts: Counter[str] = Counter()

    for mode, examples in EXAMPLES.items():
        # Half the cases name the caller's own tenant, so they get past the tenant lookup and
        # exercise validation, serializers and the database, not only the 404 path.
        strategy = st.one_of(
            st.tuples(st.sampled_from(sorted(tokens)), SCHEMA.as_strategy(mode)),
            *(
                st.tuples(st.just(label), SCHEMA.as_strategy(mode, path_parameters={"tenant": s}))
                for label, s in (("a", "tenant-a"), ("b", "tenant-b"))
            ),
        )

        fuzz_cases(strategy, examples, mode.value, tokens, failures, counts)
    print(dict(sorted(counts.items())))  # the counts reported in docs/reliability.md
    assert failures == [], "\n\n".join(failures[:10])
    assert sum(counts.values()) == sum(EXAMPLES.values())


def test_schemathesis_as_a_platform_admin_on_real_objects(world: World, foreign: Foreign) -> None:
    """Writes to platform objects answer what their reads answer (a created cluster with its
    counts, an edited quota with its use) and deletes that would take other objects with
    them are a 409, not a 500: this pass found both."""
    tokens = {"root": create_token(user=world.platform_admin, name="fuzz")[1]}
    failures: list[str] = []
    counts: Counter[str] = Counter()
    for mode, examples in ADMIN_EXAMPLES.items():
        strategy = st.tuples(st.just("root"), on_real_objects(SCHEMA, mode, real_ids(foreign)))
        fuzz_cases(strategy, examples, f"admin {mode.value}", tokens, failures, counts)
    print(dict(sorted(counts.items())))
    assert failures == [], "\n\n".join(failures[:10])
    assert sum(counts.values()) == sum(ADMIN_EXAMPLES.values())
    assert counts["admin positive 2xx"] > 0


def test_no_operation_accepts_a_request_without_credentials(world: World) -> None:
    """One positive case per operation, sent with no credentials at all."""
    accepted: list[str] = []
    seen = 0
    for result in SCHEMA.get_all_operations():
        operation = result.ok()  # type: ignore[union-attr]  # the schema is valid (see above)
        if (operation.method.upper(), operation.path) in PUBLIC:
            continue

        @_settings(1)
        @given(case=operation.as_strategy(GenerationMode.POSITIVE))
        def send(case: Any) -> None:
            case.headers = {
                k: v for k, v in (case.headers or {}).items() if k.lower() != "authorization"
            }
            response = case.call(app=APP)
            if response.status_code not in (401, 403):
                accepted.append(f"{case.method} {case.formatted_path} -> {response.status_code}")

        send()
        seen += 1
    assert seen >= 100
    assert accepted == [], "\n".join(accepted)
