"""A sweep table's analysis (summary, varied parameters, direction, ties), computed once per table.

The Trade-off explorer redraws on every rerun (a toggle, a click on a point);
the table behind it does not change, so its summary and pairwise comparison
are kept with the result (one session) and, for an uploaded file, in a cache
keyed by the hash of its bytes (every session that opens the same file).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from engine.sweep import summarise, varied_parameters
from engine.sweep.analysis import lower_is_better, pair_differences, ties, with_metric


@dataclass(frozen=True)
class TableAnalysis:
    summary: pd.DataFrame
    varied: list
    lower: bool
    tied: object


def digest(data: bytes) -> str:
    """The key of an uploaded file's analysis: the SHA-256 of its bytes."""
    return hashlib.sha256(data).hexdigest()


def analyse(table: pd.DataFrame) -> TableAnalysis:
    return TableAnalysis(summary=summarise(table), varied=varied_parameters(table), lower=lower_is_better(table),
                         tied=ties(pair_differences(table)))


@st.cache_data(show_spinner=False, max_entries=8)
def _analysed(key: str, _table: pd.DataFrame) -> TableAnalysis:
    return analyse(_table)


def table_analysis(result: dict, metric: str = "utility") -> TableAnalysis:
    """The analysis of ``result["table"]`` read with ``metric`` (engine.sweep.analysis.with_metric): kept in
    ``result`` after the first rerun that needs it."""
    name = "analysis" if metric == "utility" else f"analysis:{metric}"
    kept = result.get(name)
    if kept is None:
        key = result.get("digest")
        table = with_metric(result["table"], metric)
        kept = _analysed(key if metric == "utility" else f"{key}:{metric}", table) if key else analyse(table)
        result[name] = kept
    return kept
