"""Tables as the dashboard shows them: numbers with a sensible number of digits, a dash where a value is missing.

Streamlit prints a missing cell as the word "None"; a reference line has no q,
a failed setting no utility, and the reader should see "—" there.
"""

from __future__ import annotations

import math

import pandas as pd

MISSING = "—"


def _cell(value, digits: int):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return MISSING
    if isinstance(value, float):
        return f"{value:.{digits}g}"
    return value


def readable(table: pd.DataFrame, digits: int = 4, formats: dict[str, str] | None = None):
    """``table`` styled for ``st.dataframe``: floats to ``digits`` significant digits (or ``formats[column]``),
    missing values as a dash; the data underneath stay numbers (sorting, downloads)."""
    formats = formats or {}
    return table.style.format(
        {column: (lambda v, f=formats.get(column): MISSING if pd.isna(v) else f.format(v)) if column in formats
         else (lambda v: _cell(v, digits)) for column in table.columns})
