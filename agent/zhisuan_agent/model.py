"""What a check returns. Absent hardware is a state (``absent``), never an exception."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any


class Status(StrEnum):
    OK = "ok"
    WARN = "warn"
    FAIL = "fail"
    ABSENT = "absent"  # the hardware or software this check looks at is not on this node


@dataclass(frozen=True)
class Result:
    """One check's outcome. ``faults`` are catalogue codes (e.g. ``xid:79``) the platform maps
    to a severity and an action; a check may report several (two XIDs in one round)."""

    check: str
    status: Status
    detail: str = ""
    faults: tuple[str, ...] = ()
    data: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["status"] = str(self.status)
        out["faults"] = list(self.faults)
        return out


def ok(check: str, detail: str = "", **data: Any) -> Result:
    return Result(check, Status.OK, detail, (), data)


def absent(check: str, detail: str) -> Result:
    return Result(check, Status.ABSENT, detail)


def bad(check: str, status: Status, detail: str, faults: list[str], **data: Any) -> Result:
    return Result(check, status, detail, tuple(dict.fromkeys(faults)), data)
