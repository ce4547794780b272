"""CSV cells that a spreadsheet will not run as formulas (CSV / formula injection).

OWASP's recommendation: a cell that begins with `=`, `+`, `-`, `@`, a tab or a carriage
return is prefixed with a single quote, so Excel, LibreOffice and Google Sheets show it
as text instead of evaluating it (`=HYPERLINK(...)`, `@SUM(...)`, DDE payloads).
Only text is neutralised: numbers, booleans and None that the app writes itself pass
through unchanged (a negative offset stays a number). Every CSV writer of the app calls
`safe_cell` on each cell; JSON exports keep the raw text.
https://owasp.org/www-community/attacks/CSV_Injection
"""

from __future__ import annotations

from typing import Any

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: Any) -> Any:
    """`value` with a leading `'` when it is text a spreadsheet would read as a formula."""
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES):
        return "'" + value
    return value
