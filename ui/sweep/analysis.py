"""A sweep table's analysis (summary, varied parameters, direction, ties), computed once per table.

The Trade-off explorer redraws on every rerun (a toggle, a click on a point);
the table behind it does not change, so its summary and pairwise comparison
are kept with the result (one session) and, for an uploaded file, in a cache
keyed by the hash of its bytes (every session that opens the same file).

An uploaded table's reading and analysis are work whose size a visitor decides:
:func:`open_upload` reads, prices and analyses the file in one call of
:func:`ui.kit.compute.compute` (a walled worker when heavy runs compute in
workers), so the request has one deadline across its phases, and a table the
price misjudges ends at the wall with one sentence, not in the server. The
server sends the worker the file's bytes, never a table: an analysis by another
metric reads the file again in its worker (:func:`analyse_upload`).
"""

from __future__ import annotations

import hashlib
import io
import threading
from collections import OrderedDict
from dataclasses import dataclass

import pandas as pd

from engine.sweep import read_upload, summarise, varied_parameters
from engine.validation import ConfigError
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


def read_and_analyse(data: bytes, name: str, max_bytes: int | None, metric: str = "utility",
                     analyser=None) -> tuple[pd.DataFrame, TableAnalysis]:
    """In one worker: an uploaded file read (refused or priced first, :func:`engine.sweep.read_upload`) and its
    analysis by ``metric`` (``analyser``, default :func:`analyse`, travels with the call). Imports no Streamlit."""
    table = read_upload(io.BytesIO(data), name, max_bytes=max_bytes)
    return table, (analyser or analyse)(with_metric(table, metric))


def analyse_upload(data: bytes, name: str, max_bytes: int | None, metric: str, analyser=None) -> TableAnalysis:
    """In a worker: the analysis of an uploaded file by another ``metric`` (the file read again there)."""
    return read_and_analyse(data, name, max_bytes, metric, analyser)[1]


def open_upload(data: bytes, name: str, max_bytes: int | None) -> tuple[pd.DataFrame, dict]:
    """An uploaded file's table and what its result keeps (its digest, analysis and bytes), read and analysed
    in one walled call: one deadline for the request. Raises ConfigError with the visitor's sentence (the time
    limit's and an unexpected failure's too, so the page shows it where it shows a refusal)."""
    from engine.cancel import TIME_LIMIT, Cancelled
    from engine.walls import TIME
    from ui.kit.compute import compute
    from ui.kit.run_worker import wall_sentence

    key = digest(data)
    try:
        table, analysis = compute(read_and_analyse, data, name, max_bytes, "utility", analyse, walled="upload")
    except Cancelled as err:
        if err.reason != TIME_LIMIT:
            raise                   # Stop, another click, a closed tab: the script ends as it would
        raise ConfigError(wall_sentence(TIME, "upload"), "upload") from None
    except RuntimeError as err:     # a failure in the worker: its visitor's sentence (nothing internal when hosted)
        raise ConfigError(f"Could not open {name}: {err}.", "upload") from None
    _keep(key, analysis)
    return table, {"digest": key, "analysis": analysis, "upload": (data, name, max_bytes)}


def _keep(key: str, analysis: TableAnalysis) -> None:
    with _KEPT_LOCK:
        _KEPT[key] = analysis
        while len(_KEPT) > KEPT_TABLES:
            _KEPT.popitem(last=False)


def _analysed(key: str, result: dict, metric: str) -> TableAnalysis:
    """An uploaded table's analysis, shared by the sessions that open the same file; computed walled, from the
    file's bytes when the result holds them (no table is sent from the server)."""
    from ui.kit.compute import compute

    with _KEPT_LOCK:
        kept = _KEPT.get(key)
        if kept is not None:
            _KEPT.move_to_end(key)
            return kept
    if result.get("upload") is not None:
        kept = compute(analyse_upload, *result["upload"], metric, analyse, walled="upload")
    else:
        kept = compute(analyse, with_metric(result["table"], metric), walled="upload")
    _keep(key, kept)
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
        kept = (_analysed(key if metric == "utility" else f"{key}:{metric}", result, metric) if key
                else compute(analyse, with_metric(result["table"], metric)))
        result[name] = kept
    return kept
