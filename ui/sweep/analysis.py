"""A sweep table's analysis (summary, varied parameters, direction, ties), computed once per table.

The Trade-off explorer redraws on every rerun (a toggle, a click on a point);
the table behind it does not change, so its summary and pairwise comparison
are kept with the result (one session) and, for an uploaded file, in a cache
keyed by the hash of its bytes (every session that opens the same file).

An uploaded table's analysis is work whose size a visitor decides: when heavy
runs compute in walled workers, it computes in one too (:func:`ui.kit.compute.compute`),
so a table the price misjudges ends at the wall with one sentence, not in the server.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass

import pandas as pd

from engine.sweep import summarise, varied_parameters
from engine.sweep.analysis import ALL_PAIRS_MAX_SETTINGS, lower_is_better, pair_differences, ties, with_metric

KEPT_TABLES = 8                 # analyses of uploaded files kept for every session (by the hash of the file)
_KEPT: OrderedDict[str, "TableAnalysis"] = OrderedDict()
_KEPT_LOCK = threading.Lock()


@dataclass(frozen=True)
class TableAnalysis:
    summary: pd.DataFrame
    varied: list
    lower: bool
    tied: object


def digest(data: bytes) -> str:
    """The key of an uploaded file's analysis: the SHA-256 of its bytes."""
    return hashlib.sha256(data).hexdigest()


def analyse(table: pd.DataFrame, max_settings: int = ALL_PAIRS_MAX_SETTINGS) -> TableAnalysis:
    """Summary, varied parameters, direction and ties (every pair up to ``max_settings`` settings, else
    neighbours). Imports no Streamlit: it is what a walled worker computes."""
    return TableAnalysis(summary=summarise(table), varied=varied_parameters(table), lower=lower_is_better(table),
                         tied=ties(pair_differences(table, max_settings)))


def _analysed(key: str, table: pd.DataFrame) -> TableAnalysis:
    """An uploaded table's analysis, shared by the sessions that open the same file; computed walled."""
    from ui.kit.compute import compute

    with _KEPT_LOCK:
        kept = _KEPT.get(key)
        if kept is not None:
            _KEPT.move_to_end(key)
            return kept
    kept = compute(analyse, table, walled="upload")
    with _KEPT_LOCK:
        _KEPT[key] = kept
        while len(_KEPT) > KEPT_TABLES:
            _KEPT.popitem(last=False)
    return kept


def table_analysis(result: dict, metric: str = "utility") -> TableAnalysis:
    """The analysis of ``result["table"]`` read with ``metric`` (engine.sweep.analysis.with_metric): kept in
    ``result`` after the first rerun that needs it.

    Raises ConfigError (the wall's sentence) or :class:`engine.cancel.Cancelled` (the time limit) for an
    uploaded table whose analysis crossed a limit.
    """
    from ui.kit.compute import compute

    name = "analysis" if metric == "utility" else f"analysis:{metric}"
    kept = result.get(name)
    if kept is None:
        key = result.get("digest")
        table = with_metric(result["table"], metric)
        kept = (_analysed(key if metric == "utility" else f"{key}:{metric}", table) if key
                else compute(analyse, table))
        result[name] = kept
    return kept
