"""A sweep's search space: parameters, the trials drawn from them, and their use in a job.

A parameter is one of

- a list of values (or ``{"values": [...]}``): strings, numbers or booleans;
- ``{"uniform": [low, high]}``: a float drawn evenly between the two;
- ``{"log_uniform": [low, high]}``: a float drawn evenly in log space (learning rates);
- ``{"int": [low, high]}``: an integer between the two, both included.

``grid`` takes every combination of lists (ranges have no grid); ``random`` draws ``trials``
combinations from a seeded generator, so the same seed gives the same trials. A job template
names a parameter as ``{{name}}`` in its command, args and env values; the trial's value is
written there as text. A replica group's resource field (``replicas``, ``accelerators``, ...)
given as ``"{{name}}"`` alone takes the trial's value itself, so one sweep can run the same
job at several sizes (a scaling study); the job checks then judge each trial's size.
"""

from __future__ import annotations

import itertools
import math
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext as _

Value = str | int | float | bool

MAX_PARAMETERS = 16
MAX_VALUES = 64
MAX_TRIALS = 256
PARAM_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,39}\Z")
# A replica group's fields that a parameter may set, as ``"{{name}}"`` alone.
RESOURCE_FIELDS = (
    "replicas", "accelerators", "accelerator_milli", "cpu_milli", "memory_mib", "rdma_nics",
)  # fmt: skip
WHOLE_PLACEHOLDER = re.compile(r"^\s*\{\{\s*([^{}]*?)\s*\}\}\s*\Z")
PLACEHOLDER = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")
RANGES = ("uniform", "log_uniform", "int")
SIGNIFICANT = 4
"""Digits a drawn float keeps: 0.0003127, not 0.00031268842217: readable in a job's command
and a table, and finer than any search needs."""


class SpaceError(ValueError):
    """Problems found, by the field they belong to (``parameters.lr``, ``trials``...)."""

    def __init__(self, errors: dict[str, list[str]]) -> None:
        super().__init__(errors)
        self.errors = errors


@dataclass(frozen=True)
class Parameter:
    name: str
    values: tuple[Value, ...] = ()
    kind: str = "values"  # or one of RANGES
    low: float = 0.0
    high: float = 0.0

    def draw(self, rng: random.Random) -> Value:
        if self.kind == "values":
            return self.values[rng.randrange(len(self.values))]
        if self.kind == "int":
            return rng.randint(int(self.low), int(self.high))
        if self.kind == "log_uniform":
            x = math.exp(rng.uniform(math.log(self.low), math.log(self.high)))
        else:
            x = rng.uniform(self.low, self.high)
        return float(f"{x:.{SIGNIFICANT}g}")


def _scalar(value: Any) -> bool:
    return isinstance(value, (str, int, float, bool)) and not (
        isinstance(value, float) and not math.isfinite(value)
    )


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def parse_parameter(name: str, spec: Any) -> tuple[Parameter | None, list[str]]:
    """One parameter from its spec, or the problems with it."""
    if not PARAM_NAME.match(name):
        return None, [
            _("A parameter name is a letter or '_' then letters, digits or '_' (at most 40).")
        ]
    if isinstance(spec, list):
        spec = {"values": spec}
    if not isinstance(spec, dict) or len(spec) != 1:
        return None, [
            _(
                "Give a list of values, or one of values, uniform, log_uniform, int with its "
                "[low, high]."
            )
        ]
    ((kind, body),) = spec.items()
    if kind == "values":
        if not isinstance(body, list) or not 1 <= len(body) <= MAX_VALUES:
            return None, [_("Give 1 to {most} values.").format(most=MAX_VALUES)]
        if not all(_scalar(v) and (not isinstance(v, str) or len(v) <= 200) for v in body):
            return None, [_("Each value is a string (at most 200 characters), number or boolean.")]
        return Parameter(name, values=tuple(body)), []
    if kind not in RANGES:
        return None, [
            _("Unknown kind '{kind}': use values, uniform, log_uniform or int.").format(kind=kind)
        ]
    if not isinstance(body, list) or len(body) != 2 or not all(_number(v) for v in body):
        return None, [_("{kind} takes [low, high], two numbers.").format(kind=kind)]
    low, high = body
    if kind == "int" and not all(isinstance(v, int) for v in body):
        return None, [_("int takes two whole numbers.")]
    if low >= high:
        return None, [_("low must be below high.")]
    if kind == "log_uniform" and low <= 0:
        return None, [_("log_uniform needs low above 0.")]
    return Parameter(name, kind=kind, low=float(low), high=float(high)), []


def parse_space(spec: Any) -> list[Parameter]:
    if not isinstance(spec, dict) or not spec:
        raise SpaceError(
            {"parameters": [_("Give at least one parameter: a name and its values or range.")]}
        )
    if len(spec) > MAX_PARAMETERS:
        raise SpaceError(
            {"parameters": [_("At most {most} parameters.").format(most=MAX_PARAMETERS)]}
        )
    params: list[Parameter] = []
    errors: dict[str, list[str]] = {}
    for name, body in spec.items():
        param, problems = parse_parameter(str(name), body)
        if problems:
            errors[f"parameters.{name}"] = problems
        elif param is not None:
            params.append(param)
    if errors:
        raise SpaceError(errors)
    return params


def trials(
    params: list[Parameter], method: str, count: int | None, seed: int
) -> list[dict[str, Value]]:
    """The trials' parameter values, in order: a grid's combinations (the last parameter
    varying fastest), or ``count`` draws."""
    if method == "grid":
        ranged = [p.name for p in params if p.kind != "values"]
        if ranged:
            raise SpaceError(
                {
                    f"parameters.{n}": [_("A grid takes lists of values, not ranges.")]
                    for n in ranged
                }
            )
        size = math.prod(len(p.values) for p in params)
        if size > MAX_TRIALS:
            raise SpaceError(
                {
                    "parameters": [
                        _("The grid has {size} combinations; at most {most}.").format(
                            size=size, most=MAX_TRIALS
                        )
                    ]
                }
            )
        if count is not None and count != size:
            raise SpaceError(
                {
                    "trials": [
                        _("A grid runs every combination ({size}); leave trials out.").format(
                            size=size
                        )
                    ]
                }
            )
        combos = itertools.product(*(p.values for p in params))
        return [dict(zip((p.name for p in params), combo, strict=True)) for combo in combos]
    if count is None:
        raise SpaceError({"trials": [_("A random search needs the number of trials.")]})
    rng = random.Random(seed)
    return [{p.name: p.draw(rng) for p in params} for _ in range(count)]


def as_text(value: Value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, float) else str(value)


def placeholders(text: str) -> list[str]:
    return PLACEHOLDER.findall(text)


def unknown_placeholders(template: Mapping[str, Any], names: set[str]) -> dict[str, list[str]]:
    """``{{x}}`` in the template's command, args or env values, or a replica group's resource
    field, that names no parameter."""
    errors: dict[str, list[str]] = {}
    for field, texts in [*_texts(template), ("replica_groups", _resource_texts(template))]:
        bad = sorted({n for t in texts for n in placeholders(t) if n not in names})
        if bad:
            errors[field] = [_("No parameter named {names}.").format(names=", ".join(bad))]
    return errors


def _texts(template: Mapping[str, Any]) -> list[tuple[str, list[str]]]:
    out: list[tuple[str, list[str]]] = []
    for field in ("command", "args"):
        items = template.get(field)
        if isinstance(items, list):
            out.append((field, [t for t in items if isinstance(t, str)]))
    env = template.get("env")
    if isinstance(env, dict):
        out.append(("env", [t for t in env.values() if isinstance(t, str)]))
    return out


def _resource_texts(template: Mapping[str, Any]) -> list[str]:
    groups = template.get("replica_groups")
    if not isinstance(groups, list):
        return []
    return [
        g[f]
        for g in groups
        if isinstance(g, dict)
        for f in RESOURCE_FIELDS
        if isinstance(g.get(f), str)
    ]


def _fill_group(group: Any, values: Mapping[str, Value]) -> Any:
    """A replica group with each resource field that is ``"{{name}}"`` alone set to the value
    itself (a number stays a number); anything else is left for the job checks to judge."""
    if not isinstance(group, dict):
        return group
    out = dict(group)
    for field in RESOURCE_FIELDS:
        text = out.get(field)
        found = WHOLE_PLACEHOLDER.match(text) if isinstance(text, str) else None
        if found is not None and found.group(1) in values:
            out[field] = values[found.group(1)]
    return out


def fill(template: Mapping[str, Any], values: Mapping[str, Value]) -> dict[str, Any]:
    """The template with each ``{{name}}`` in command, args and env values replaced by the
    trial's value, and each replica group's resource field given as ``"{{name}}"`` set to it
    (other fields as they are)."""

    def sub(text: Any) -> Any:
        if not isinstance(text, str):
            return text
        return PLACEHOLDER.sub(
            lambda m: as_text(values[m.group(1)]) if m.group(1) in values else m.group(0), text
        )

    body = dict(template)
    for field in ("command", "args"):
        if isinstance(body.get(field), list):
            body[field] = [sub(t) for t in body[field]]
    if isinstance(body.get("env"), dict):
        body["env"] = {k: sub(v) for k, v in body["env"].items()}
    if isinstance(body.get("replica_groups"), list):
        body["replica_groups"] = [_fill_group(g, values) for g in body["replica_groups"]]
    return body
