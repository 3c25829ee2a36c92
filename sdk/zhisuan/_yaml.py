"""Job files for ``zs submit``: JSON, full YAML when PyYAML is installed, else a YAML subset.

The subset covers what job files use: nested block mappings and sequences (``- name: x``
items included), flow lists and maps (``[a, b]``, ``{k: v}``), quoted and plain scalars,
numbers, booleans, null and comments. Anchors, tags and multi-line strings (``|``, ``>``)
need PyYAML (``pip install zhisuan-sdk[yaml]``).
"""

from __future__ import annotations

import json
import re
from typing import Any


class YamlError(ValueError):
    pass


def load_job_file(text: str, name: str = "") -> Any:
    if name.endswith(".json") or text.lstrip().startswith("{"):
        try:
            return json.loads(text)
        except ValueError as exc:
            raise YamlError(f"{name or 'input'}: {exc}") from exc
    try:
        import yaml
    except ImportError:
        return parse(text)
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise YamlError(f"{name or 'input'}: {exc}") from exc


_INT = re.compile(r"^[-+]?(0|[1-9][0-9_]*)$")
_FLOAT = re.compile(r"^[-+]?(\d[\d_]*)?\.?\d*([eE][-+]?\d+)?$")


def _strip_comment(line: str) -> str:
    quote = ""
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i].rstrip()
    return line.rstrip()


def _scalar(text: str, lineno: int) -> Any:
    t = text.strip()
    if not t:
        return None
    if t[0] in "[{":
        value, rest = _flow(t, 0, lineno)
        if t[rest:].strip():
            raise YamlError(f"line {lineno}: unexpected {t[rest:].strip()!r}")
        return value
    if t[0] in "'\"":
        if len(t) < 2 or t[-1] != t[0]:
            raise YamlError(f"line {lineno}: unterminated string")
        return _unquote(t, lineno)
    if t in ("|", ">") or t[0] in "|>&*!":
        raise YamlError(f"line {lineno}: {t[0]!r} needs PyYAML (pip install PyYAML)")
    low = t.lower()
    if low in ("null", "~"):
        return None
    if low in ("true", "false"):
        return low == "true"
    if _INT.match(t):
        return int(t.replace("_", ""))
    if any(c.isdigit() for c in t) and _FLOAT.match(t):
        return float(t.replace("_", ""))
    return t


def _unquote(t: str, lineno: int) -> str:
    if t[0] == "'":
        return t[1:-1].replace("''", "'")
    try:
        value = json.loads(t)
    except ValueError as exc:
        raise YamlError(f"line {lineno}: bad string {t}") from exc
    return str(value)


def _flow(t: str, i: int, lineno: int) -> tuple[Any, int]:
    """Parse a flow list/map starting at t[i]; returns (value, index after it)."""
    open_, close = t[i], "]" if t[i] == "[" else "}"
    items: list[Any] = []
    mapping: dict[str, Any] = {}
    i += 1
    while True:
        while i < len(t) and t[i] in " \t,":
            i += 1
        if i >= len(t):
            raise YamlError(f"line {lineno}: unclosed {open_}")
        if t[i] == close:
            return (items if open_ == "[" else mapping), i + 1
        if t[i] in "[{":
            value, i = _flow(t, i, lineno)
            items.append(value)
            continue
        j, quote = i, ""
        while j < len(t):
            ch = t[j]
            if quote:
                quote = "" if ch == quote else quote
            elif ch in "'\"":
                quote = ch
            elif ch in ",]}" or (open_ == "{" and ch == ":" and t[j + 1 : j + 2] in (" ", "")):
                break
            j += 1
        token = t[i:j]
        if open_ == "{" and j < len(t) and t[j] == ":":
            key = str(_scalar(token, lineno))
            j += 1
            while j < len(t) and t[j] == " ":
                j += 1
            if j < len(t) and t[j] in "[{":
                value, j = _flow(t, j, lineno)
            else:
                k = j
                while k < len(t) and t[k] not in ",}":
                    k += 1
                value, j = _scalar(t[j:k], lineno), k
            mapping[key] = value
            i = j
        else:
            items.append(_scalar(token, lineno))
            i = j


def _split_key(text: str) -> tuple[str, str] | None:
    quote = ""
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == ":" and (i + 1 == len(text) or text[i + 1] == " "):
            key = text[:i].strip()
            if key and key[0] in "'\"":
                key = _unquote(key, 0)
            return key, text[i + 1 :].strip()
        elif ch in "[{" and i == 0:
            return None
    return None


def parse(text: str) -> Any:
    lines: list[tuple[int, str, int]] = []
    for n, raw in enumerate(text.splitlines(), 1):
        if "\t" in raw[: len(raw) - len(raw.lstrip())]:
            raise YamlError(f"line {n}: tabs are not allowed for indentation")
        body = _strip_comment(raw)
        if body.strip() and body.strip() not in ("---", "..."):
            lines.append((len(body) - len(body.lstrip()), body.strip(), n))
    if not lines:
        return None
    value, i = _block(lines, 0, lines[0][0])
    if i != len(lines):
        raise YamlError(f"line {lines[i][2]}: unexpected indentation")
    return value


def _block(lines: list[tuple[int, str, int]], i: int, indent: int) -> tuple[Any, int]:
    if lines[i][1].startswith("- ") or lines[i][1] == "-":
        return _sequence(lines, i, indent)
    if _split_key(lines[i][1]) is None:
        return _scalar(lines[i][1], lines[i][2]), i + 1
    return _mapping(lines, i, indent)


def _sequence(lines: list[tuple[int, str, int]], i: int, indent: int) -> tuple[list[Any], int]:
    out: list[Any] = []
    while (
        i < len(lines)
        and lines[i][0] == indent
        and (lines[i][1].startswith("- ") or lines[i][1] == "-")
    ):
        _, text, n = lines[i]
        rest = text[1:].strip()
        if not rest:
            if i + 1 < len(lines) and lines[i + 1][0] > indent:
                value, i = _block(lines, i + 1, lines[i + 1][0])
            else:
                value, i = None, i + 1
        else:
            # "- key: v" opens a mapping whose keys sit where "key" starts.
            inner = indent + 1 + (len(text) - 1 - len(text[1:].lstrip()))
            lines[i] = (inner, rest, n)
            value, i = _block(lines, i, inner)
        out.append(value)
    return out, i


def _mapping(lines: list[tuple[int, str, int]], i: int, indent: int) -> tuple[dict[str, Any], int]:
    out: dict[str, Any] = {}
    while i < len(lines) and lines[i][0] == indent:
        _, text, n = lines[i]
        kv = _split_key(text)
        if kv is None:
            raise YamlError(f"line {n}: expected 'key: value'")
        key, rest = kv
        if key in out:
            raise YamlError(f"line {n}: duplicate key {key!r}")
        i += 1
        if rest:
            out[key] = _scalar(rest, n)
        elif i < len(lines) and lines[i][0] > indent:
            out[key], i = _block(lines, i, lines[i][0])
        elif i < len(lines) and lines[i][0] == indent and lines[i][1].startswith("-"):
            out[key], i = _sequence(lines, i, indent)
        else:
            out[key] = None
    if i < len(lines) and lines[i][0] > indent:
        raise YamlError(f"line {lines[i][2]}: unexpected indentation")
    return out, i
