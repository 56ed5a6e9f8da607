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
    missing values as a dash.

    Streamlit draws a missing number as "None" whatever the style says, so a
    column with a missing value is shown as text; complete columns stay
    numbers (they sort as numbers).
    """
    formats = formats or {}

    def text(column: str):
        form = formats.get(column)
        return (lambda v: MISSING if pd.isna(v) else form.format(v)) if form else (lambda v: _cell(v, digits))

    shown = table.copy()
    for column in shown.columns:
        if shown[column].isna().any():
            shown[column] = shown[column].map(text(column)).astype(str)
    return shown.style.format({column: text(column) for column in shown.columns
                               if pd.api.types.is_float_dtype(shown[column])})
