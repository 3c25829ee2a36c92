"""The source interface: ``collect()`` returns one :class:`Collection` under the DCGM names."""

from __future__ import annotations

from typing import Protocol

from apps.telemetry.metrics import Collection


class TelemetrySource(Protocol):
    name: str

    def collect(self) -> Collection:
        """Latest value of every metric of every GPU and node; counters stay counters."""
        ...
