"""The API's JSON parser: standard JSON, minus the NUL character.

PostgreSQL cannot store U+0000 in text or jsonb, so a body carrying one anywhere (a value or a
key, however deep) would pass validation and fail at the database with a 500. It is refused
here, once for every endpoint, with a 400.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser


def _has_nul(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return True
        elif isinstance(item, Mapping):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


class StrictJSONParser(JSONParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        data = super().parse(stream, media_type, parser_context)
        if _has_nul(data):
            raise ParseError("JSON strings must not contain the NUL character (\\u0000).")
        return data
