"""The currency prices and costs are in: configured once, named by the session and checked at
start-up."""

from __future__ import annotations

import pytest

from apps.tenancy.models import Role
from config.env import ConfigError, get_currency
from tests.conftest import World

pytestmark = pytest.mark.django_db


def test_session_names_the_configured_currency(world: World, client_for, settings) -> None:
    user = client_for(world.user("a", Role.VIEWER))
    assert user.get("/api/v1/auth/session/").json()["currency"] == "CNY"
    settings.CURRENCY = "USD"  # ZS_CURRENCY=USD
    assert user.get("/api/v1/auth/session/").json()["currency"] == "USD"


@pytest.mark.parametrize("raw", ["euro", "12$", "€", "US"])
def test_a_malformed_currency_stops_start_up(raw: str, monkeypatch) -> None:
    monkeypatch.setenv("ZS_CURRENCY", raw)
    with pytest.raises(ConfigError, match="ZS_CURRENCY must be a three-letter ISO 4217 code"):
        get_currency("ZS_CURRENCY", "CNY")


def test_currency_is_upper_cased_and_defaults(monkeypatch) -> None:
    monkeypatch.setenv("ZS_CURRENCY", " eur ")
    assert get_currency("ZS_CURRENCY", "CNY") == "EUR"
    monkeypatch.delenv("ZS_CURRENCY")
    assert get_currency("ZS_CURRENCY", "CNY") == "CNY"
