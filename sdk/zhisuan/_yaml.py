"""Job files for ``zs submit``: JSON, full YAML when PyYAML is installed, else a YAML subset.

The subset covers what job files use: nested block mappings and sequences (``- name: x``
items included), flow lists and maps (``[a, b]``, ``{k: v}``), quoted and plain scalars,
numbers, booleans, null and comments. Anchors, tags and multi-line strings (``|``, ``>``)
need PyYAML (``pip install zhisuan-sdk[yaml]``).

Items of ``command`` and ``args`` and the values of ``env`` are strings by nature: in a YAML
job file they keep the text as written (``1e-3``, ``007`` and ``no`` stay ``"1e-3"``,
``"007"`` and ``"no"``) with either parser. Dates and times become ISO 8601 text.
"""

from __future__ import annotations

import datetime
import json
import math
import re
from typing import Any

# Top-level fields whose items (command, args) or values (env) keep their text as written.
TEXT_ITEMS = ("command", "args")
TEXT_VALUES = ("env",)
PIPELINE = "pipeline"  # a pipeline file: its steps are jobs, read alike
SWEEP = "sweep"  # a sweep file: its other fields are the trials' job template


class YamlError(ValueError):
    pass


def load_job_file(text: str, name: str = "") -> Any:
    """The document in ``text`` (JSON or YAML), ready to send as JSON. A YamlError's message
    starts with ``name`` (or "input") once."""
    try:
        if name.endswith(".json") or text.lstrip().startswith("{"):
            try:
                doc = json.loads(text)
            except ValueError as exc:
                raise YamlError(str(exc)) from None
        else:
            doc = _load_yaml(text)
        return _jsonable(doc, "")
    except YamlError as exc:
        raise YamlError(f"{name or 'input'}: {exc}") from None


def parse_override(key: str, value: str) -> Any:
    """The value of ``--set KEY=VALUE``, read as the same field in a YAML job file would be."""
    try:
        doc = _load_yaml(f"{key}: {value}")
    except YamlError as exc:
        raise YamlError(_LOCATION.sub("", str(exc))) from None
    if not isinstance(doc, dict) or list(doc) != [key]:
        raise YamlError("not a single value")
    return _jsonable(doc[key], key)


_LOCATION = re.compile(r"^line \d+(, column \d+)?: ")


def _load_yaml(text: str) -> Any:
    try:
        import yaml  # noqa: F401
    except ImportError:
        return _construct_job(_compose(text))
    return _load_pyyaml(text)


def _load_pyyaml(text: str) -> Any:
    """yaml.safe_load, with the scalars of TEXT_ITEMS / TEXT_VALUES kept as written."""
    import yaml

    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _keep_text(node, yaml)
        return loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        raise YamlError(_pyyaml_message(exc)) from None
    except yaml.YAMLError as exc:
        raise YamlError(str(exc).replace("\n", " ")) from None
    finally:
        loader.dispose()


def _keep_text(node: Any, yaml: Any) -> None:
    """Tag the scalars of TEXT_ITEMS / TEXT_VALUES as text, in the job and in each step of a
    pipeline file (``pipeline:``, a list of jobs)."""
    if not isinstance(node, yaml.MappingNode):
        return
    for key, value in node.value:
        if not isinstance(key, yaml.ScalarNode):
            continue
        if key.value == PIPELINE and isinstance(value, yaml.SequenceNode):
            for step in value.value:
                _keep_text(step, yaml)
            continue
        if key.value == SWEEP and isinstance(value, yaml.MappingNode):
            _numbers_as_in_yaml_12(value, yaml)
            continue
        if key.value in TEXT_ITEMS and isinstance(value, yaml.SequenceNode):
            items = list(value.value)
        elif key.value in TEXT_VALUES and isinstance(value, yaml.MappingNode):
            items = [v for _, v in value.value]
        else:
            continue
        for item in items:
            if isinstance(item, yaml.ScalarNode):
                item.tag = "tag:yaml.org,2002:str"  # its text, not a number or bool


def _pyyaml_message(exc: Any) -> str:
    """One line: ``line L, column C: <context>, <problem>`` (PyYAML's spans several)."""
    mark = exc.problem_mark or exc.context_mark
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
    what = ", ".join(str(part) for part in (exc.context, exc.problem) if part)
    return where + (what or "not valid YAML")


def _jsonable(value: Any, path: str) -> Any:
    """``value`` with dates and times as ISO 8601 text; a YamlError for anything JSON cannot
    carry (binary data, sets, NaN), naming where it is."""
    if isinstance(value, datetime.date):  # datetime.datetime too
        return value.isoformat()
    if isinstance(value, float) and not math.isfinite(value):
        raise YamlError(f"{path or 'the document'}: {value} is not a number the API accepts")
    if value is None or isinstance(value, (str, int, float)):
        return value
    if isinstance(value, list):
        return [_jsonable(v, f"{path}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for key, v in value.items():
            if isinstance(key, datetime.date):
                key = key.isoformat()
            elif not (key is None or isinstance(key, (str, int, float))):
                kind = type(key).__name__
                raise YamlError(f"{path or 'the document'}: a {kind} key cannot be sent; "
                                "write it as text")  # fmt: skip
            out[key] = _jsonable(v, f"{path}.{key}" if path else str(key))
        return out
    raise YamlError(f"{path or 'the document'}: a value of type {type(value).__name__} cannot "
                    "be sent; write it as text")  # fmt: skip


# ------------------------------------------------------------------------ the built-in subset
class _Plain(str):
    """An unquoted scalar's text; ``_construct`` resolves it (number, boolean, null, text)."""


def _resolve(t: str) -> Any:
    low = t.lower()
    if low in ("", "null", "~"):
        return None
    if low in ("true", "false"):
        return low == "true"
    if _INT.match(t):
        return int(t.replace("_", ""))
    if any(c.isdigit() for c in t) and _FLOAT.match(t):
        return float(t.replace("_", ""))
    return t


def _construct(value: Any, keep_text: bool = False) -> Any:
    if isinstance(value, _Plain):
        return str(value) if keep_text else _resolve(value)
    if isinstance(value, list):
        return [_construct(v) for v in value]
    if isinstance(value, dict):
        return {k: _construct(v) for k, v in value.items()}
    return value


# YAML 1.2's float (the frontend's parser reads it so): 1e-5 with no dot, which PyYAML (YAML 1.1)
# leaves as text. A learning rate is mostly written that way.
_FLOAT_12 = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)[eE][-+]?[0-9]+$")


def _numbers_as_in_yaml_12(node: Any, yaml: Any) -> None:
    """Plain scalars like ``1e-5`` under ``sweep:`` (a parameter's values and ranges) are
    numbers, as with the built-in parser and the dashboard's."""
    if isinstance(node, yaml.ScalarNode):
        if node.style is None and _FLOAT_12.match(node.value):
            node.tag = "tag:yaml.org,2002:float"
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _numbers_as_in_yaml_12(item, yaml)
    elif isinstance(node, yaml.MappingNode):
        for _, item in node.value:
            _numbers_as_in_yaml_12(item, yaml)


def _construct_job(doc: Any) -> Any:
    """``_construct``, keeping the text of TEXT_ITEMS' items and TEXT_VALUES' values."""
    if not isinstance(doc, dict):
        return _construct(doc)
    out: dict[str, Any] = {}
    for key, value in doc.items():
        if key == PIPELINE and isinstance(value, list):
            out[key] = [_construct_job(step) for step in value]
        elif key in TEXT_ITEMS and isinstance(value, list):
            out[key] = [_construct(v, keep_text=True) for v in value]
        elif key in TEXT_VALUES and isinstance(value, dict):
            out[key] = {k: _construct(v, keep_text=True) for k, v in value.items()}
        else:
            out[key] = _construct(value)
    return out


def parse(text: str) -> Any:
    """The document in ``text``, read with the built-in YAML subset."""
    return _construct(_compose(text))


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
        return _Plain("")
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
    return _Plain(t)


def _unquote(t: str, lineno: int) -> str:
    if t[0] == "'":
        return t[1:-1].replace("''", "'")
    try:
        value = json.loads(t)
    except ValueError as exc:
        raise YamlError(f"line {lineno}: bad string {t}") from exc
    return str(value)


_KEY_END = (" ", "", ",", "}")


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
        if t[i] in "]}":
            raise YamlError(f"line {lineno}: {t[i]!r} does not close {open_!r}")
        if t[i] in "[{":
            if open_ == "{":
                raise YamlError(f"line {lineno}: a list or map cannot be a key")
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
            elif ch in ",]}" or (open_ == "{" and ch == ":" and t[j + 1 : j + 2] in _KEY_END):
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
        elif open_ == "{":  # a key without a value: {a, b: 1}
            mapping[str(_scalar(token, lineno))] = _Plain("")
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


def _compose(text: str) -> Any:
    """The document's tree, plain scalars left as _Plain."""
    lines: list[tuple[int, str, int]] = []
    for n, raw in enumerate(text.splitlines(), 1):
        if "\t" in raw[: len(raw) - len(raw.lstrip())]:
            raise YamlError(f"line {n}: tabs are not allowed for indentation")
        body = _strip_comment(raw)
        if body.strip() and body.strip() not in ("---", "..."):
            lines.append((len(body) - len(body.lstrip()), body.strip(), n))
    if not lines:
        return _Plain("")
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
                value, i = _Plain(""), i + 1
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
            out[key] = _Plain("")
    if i < len(lines) and lines[i][0] > indent:
        raise YamlError(f"line {lines[i][2]}: unexpected indentation")
    return out, i
