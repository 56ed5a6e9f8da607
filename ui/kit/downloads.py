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


def config_json(lines, command_line, **extra) -> bytes:
    """The configuration JSON a page exports: per line its label, every setting and the command line that runs it.

    ``lines`` are (label, config) pairs; ``command_line(config)`` is the tool's (``engine.cli.<tool>``).
    ``python -m engine <tool> --config FILE`` reads the file back when it holds one line.
    """
    import json

    payload = dict(extra, lines=[{"label": label, "config": config.to_dict(), "command_line": command_line(config)}
                                 for label, config in lines])
    return json.dumps(payload, indent=2, default=float).encode()


def config_download(lines, command_line, *, file_name: str, key: str, where=None) -> None:
    """A "Configuration (JSON)" button for :func:`config_json`."""
    import streamlit as st

    (where or st).download_button(
        "Configuration (JSON)", config_json(lines, command_line), file_name=file_name, mime="application/json",
        help="Every setting with the command line that runs it; `python -m engine ... --config FILE` reads it back.",
        icon=":material/download:", on_click="ignore", key=key)
