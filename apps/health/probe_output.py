"""Reading nccl-tests output (``sendrecv_perf``, ``all_reduce_perf``, ...).

Every nccl-tests binary ends its run with a summary written by rank 0::

    # Out of bounds values : 0 OK
    # Avg bus bandwidth    : 185.62

A probe counts only when the data was also correct: a run that reports wrong values (the
``#wrong`` columns or ``Out of bounds values : N FAILED``) measured a broken link, not a fast
one, so it yields no bandwidth at all.
"""

from __future__ import annotations

import math
import re

_AVG_BUSBW = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*([0-9.eE+-]+|nan|inf)\s*$", re.MULTILINE)
_OUT_OF_BOUNDS = re.compile(r"^#\s*Out of bounds values\s*:\s*(\d+)\s+(\w+)", re.MULTILINE)
# A result row: size, count, type, redop, root, then (time algbw busbw #wrong) twice.
_ROW = re.compile(r"^\s+\d+\s+\d+\s+\w+\s+\S+\s+-?\d+\s+(.*)$", re.MULTILINE)


def _wrong_counts(row_tail: str) -> list[int]:
    fields = row_tail.split()
    counts: list[int] = []
    for index in (3, 7):  # "#wrong" of out-of-place and in-place
        if index < len(fields) and fields[index].isdigit():
            counts.append(int(fields[index]))
    return counts


def parse_bus_bandwidth(log: str) -> float | None:
    """The "Avg bus bandwidth" (GB/s) of one nccl-tests run; None when the run did not finish,
    found wrong data, or printed no usable number."""
    averages = _AVG_BUSBW.findall(log)
    if not averages:
        return None
    try:
        value = float(averages[-1])
    except ValueError:
        return None
    if not math.isfinite(value) or value <= 0:
        return None
    for count, verdict in _OUT_OF_BOUNDS.findall(log):
        if int(count) != 0 or verdict.upper() != "OK":
            return None
    for tail in _ROW.findall(log):
        if any(_wrong_counts(tail)):
            return None
    return value
