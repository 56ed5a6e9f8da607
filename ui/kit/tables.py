"""Tables as the dashboard shows them: numbers with a sensible number of digits, a dash where a value is missing.

Streamlit prints a missing cell as the word "None"; a reference line has no q,
a failed setting no utility, and the reader should see "—" there.
"""

from __future__ import annotations

import math

import pandas as pd

MISSING = "—"
MAX_STYLED_CELLS = 262_144   # pandas' Styler refuses more cells (styler.render.max_elements)


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


def within_style_limit(table: pd.DataFrame, max_cells: int = MAX_STYLED_CELLS) -> tuple[pd.DataFrame, str | None]:
    """The first rows of ``table`` that :func:`readable` can style, and a sentence when rows were left out."""
    columns = max(1, len(table.columns))
    keep = max(1, max_cells // columns)
    if len(table) <= keep:
        return table, None
    return table.head(keep), (f"Showing the first {keep:,} of the {len(table):,} rows (a table shows at most "
                              f"{max_cells:,} cells here); download the table for all of them.")
