"""Reports to the platform: ``POST /api/v1/health/report/`` with the node-scoped token.

The token (``zsn_...``) is minted by a platform admin for exactly one node and is accepted by
this one endpoint only, for that node only. The answer may name remediations to perform."""

from __future__ import annotations

import json
import urllib.request
from dataclasses import dataclass
from typing import Any

from . import __version__
from .model import Result


@dataclass(frozen=True)
class Platform:
    url: str  # e.g. https://zhisuan.example.com
    token: str
    node: str
    timeout_s: float = 10.0

    def report(self, results: list[Result], remediations: dict[str, str]) -> list[str]:
        body = {
            "node": self.node,
            "agent_version": __version__,
            "results": [r.as_dict() for r in results],
            "remediations": remediations,
        }
        request = urllib.request.Request(  # noqa: S310 - the operator configures an http(s) URL
            f"{self.url.rstrip('/')}/api/v1/health/report/",
            data=json.dumps(body).encode(),
            method="POST",
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=self.timeout_s) as response:  # noqa: S310
            answer: dict[str, Any] = json.loads(response.read() or b"{}")
        return [str(a) for a in answer.get("actions", [])]
