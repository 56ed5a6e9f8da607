"""Every CSV a visitor downloads goes through :func:`csv_bytes`: cells that a spreadsheet would run are neutralised.

A text cell starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage
return is read as a formula by Excel, LibreOffice and Google Sheets (CSV
injection: ``=cmd|' /C calc'!A0`` in an uploaded table would come back in the
download). Such cells, and such column names, get a leading apostrophe, which
spreadsheets show as text. Numbers stay numbers (a negative number is not
text), so the table reads back the same with pandas except for those cells.
"""

from __future__ import annotations

import pandas as pd

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def neutralise(value):
    """``value`` with a leading apostrophe when it is text a spreadsheet would run as a formula."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def safe_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose text cells and column names cannot start a formula."""
    out = frame.copy()
    out.columns = [neutralise(str(name)) for name in out.columns]
    for column in out.columns:
        series = out[column]
        if series.dtype == object or pd.api.types.is_string_dtype(series.dtype):
            out[column] = series.map(neutralise)
    return out


def csv_bytes(frame: pd.DataFrame) -> bytes:
    """The CSV a download button offers for ``frame`` (UTF-8, no index, RFC 4180 line ends), formulas neutralised.

    With CRLF line ends the csv writer quotes any cell holding a carriage return, so a lone CR inside a cell
    cannot start a new row (and a new, unneutralised cell) in a spreadsheet.
    """
    return safe_frame(frame).to_csv(index=False, lineterminator="\r\n").encode()
