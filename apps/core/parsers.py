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
        elif isinstance(item, QueryDict):
            stack.extend(item.keys())
            stack.extend(v for values in item.lists() for v in values[1])
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


class StrictFormParser(FormParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        data = super().parse(stream, media_type, parser_context)
        if _has_nul(data):
            raise ParseError("Form fields must not contain the NUL character.")
        return data


class StrictMultiPartParser(MultiPartParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        parsed = super().parse(stream, media_type, parser_context)
        names = []
        if isinstance(parsed, DataAndFiles):
            names = [str(getattr(f, "name", "")) for _key, fs in parsed.files.lists() for f in fs]
        if _has_nul(parsed.data) or _has_nul(names):
            raise ParseError("Form fields must not contain the NUL character.")
        return parsed
