"""Serializer fields shared by the API's query parameters."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from rest_framework import serializers

EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
LATEST = datetime(9000, 1, 1, tzinfo=UTC)


class WindowTimeField(serializers.DateTimeField):
    """The start or end of a queried time window. Reports work out a default bound from the
    other one (an hour, 30 days before it), so a time near the calendar's ends (year 1)
    would overflow that arithmetic: such times are a 400 here instead."""

    def to_internal_value(self, value: Any) -> datetime:
        parsed = super().to_internal_value(value)
        if not EARLIEST <= parsed <= LATEST:
            raise serializers.ValidationError(
                f"Must be between {EARLIEST:%Y-%m-%d} and {LATEST:%Y-%m-%d}."
            )
        return parsed
