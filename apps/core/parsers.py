"""The API's parsers: standard JSON, form and multipart bodies, minus the NUL character.

PostgreSQL cannot store U+0000 in text or jsonb, nor compare a text column with a value that
holds it, so a body carrying one anywhere (a value or a key, however deep) would pass
validation and fail at the database with a 500 (a form's ``tenant=a%00b`` did, looked up by
slug). It is refused here, once for every endpoint, with a 400.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.http import QueryDict
from rest_framework.exceptions import ParseError
from rest_framework.parsers import DataAndFiles, FormParser, JSONParser, MultiPartParser


def _has_nul(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return True
        elif isinstance(item, DataAndFiles):
            stack.append(item.data)
            stack.extend(str(getattr(f, "name", "")) for _k, fs in item.files.lists() for f in fs)
        elif isinstance(item, QueryDict):
            stack.extend(item.keys())
            stack.extend(v for values in item.lists() for v in values[1])
        elif isinstance(item, Mapping):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


class _RefusesNul:
    """Parses as its parser does, then refuses a result holding NUL anywhere: keys, values
    or (multipart) file names."""

    what = "Fields"

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        parsed = super().parse(stream, media_type, parser_context)  # type: ignore[misc]
        if _has_nul(parsed):
            raise ParseError(f"{self.what} must not contain the NUL character (\\u0000).")
        return parsed


class StrictJSONParser(_RefusesNul, JSONParser):
    what = "JSON strings"


class StrictFormParser(_RefusesNul, FormParser):
    what = "Form fields"


class StrictMultiPartParser(_RefusesNul, MultiPartParser):
    what = "Form fields"
