"""CSV cells a spreadsheet will not run: the OWASP rule against formula injection.

A cell starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is read as a formula
by Excel, LibreOffice and Google Sheets (``=cmd|' /c calc'!A1`` runs a program), so such a cell
gets a leading single quote, which the spreadsheet shows as plain text. Every CSV the product
writes passes its user-controlled cells (names, keys) through :func:`safe_cell`; numbers the
server formats itself are written as they are, so a negative amount stays a number.
"""

from __future__ import annotations

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: str) -> str:
    """``value`` as text a spreadsheet will not evaluate."""
    return f"'{value}" if value.startswith(FORMULA_STARTS) else value
