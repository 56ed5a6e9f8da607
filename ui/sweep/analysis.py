"""A sweep table's analysis (summary, varied parameters, direction, ties) and facts, computed once per table.

The Trade-off explorer redraws on every rerun (a toggle, a click on a point);
the table behind it does not change, so its summary and pairwise comparison
are kept with the result (one session) and, for an uploaded file, in a cache
keyed by the hash of its bytes (every session that opens the same file).

An uploaded table's reading and analysis are work whose size a visitor decides:
:func:`open_upload` reads, prices and analyses the file in one call of
:func:`ui.kit.compute.compute` (a walled worker when heavy runs compute in
workers), so the request has one deadline across its phases, and a table the
price misjudges ends at the wall with one sentence, not in the server. The
visitor's table never reaches the server: the worker sends back what the page
shows of it (:class:`TableFacts`: counts, each setting's parameters, a preview
of :data:`PREVIEW_ROWS` rows) and its analysis; an
analysis by another metric reads the file again in its worker
(:func:`analyse_upload`).
"""

from __future__ import annotations

import hashlib
import io
import threading
from collections import OrderedDict
from dataclasses import dataclass, replace

import pandas as pd

from engine.sweep import read_upload, summarise, varied_parameters
from engine.sweep.upload import PREVIEW_ROWS, short_cells
from engine.sweep.analysis import (ALL_PAIRS_MAX_SETTINGS, every_setting_params, lower_is_better, metric_choices,
                                   pair_differences, ties, with_metric)
from engine.validation import ConfigError

KEPT_TABLES = 8                 # analyses of uploaded files kept for every session (by the hash of the file)
KEPT_MB = 64.0                  # and at most this much of them in all (the sizing rule of docs/hosting.md counts it)
_KEPT: OrderedDict[str, tuple["TableAnalysis", float]] = OrderedDict()
_KEPT_LOCK = threading.Lock()


@dataclass(frozen=True)
class TableAnalysis:
    summary: pd.DataFrame
    varied: list
    lower: bool
    tied: object


@dataclass(frozen=True)
class TableFacts:
    """What the results view shows of a sweep table besides its analysis (for an upload, all the server holds)."""

    rows: int
    failed_cells: int
    compute_seconds: float | None      # the cells' wall time summed (None: the table does not record it)
    tool: str
    choices: dict                      # metric column -> its label (engine.sweep.analysis.metric_choices)
    failures: list                     # one dict (setting, error) per failed setting
    settings: dict                     # (role, setting) -> its parameters (engine.sweep.analysis.setting_params)
    preview: pd.DataFrame              # the first rows, as many as the page shows
    preview_note: str | None           # the sentence saying that rows were left out
    csv: bytes | None                  # the downloads (None for an upload: the visitor has the file)
    parquet: bytes | None
    shortened: int = 0                 # texts of an upload longer than engine.limits.TEXT_CHARS, shown shortened


def table_facts(table: pd.DataFrame, preview_rows: int | None = None, *, downloads: bool = True) -> TableFacts:
    """The :class:`TableFacts` of ``table``; ``preview_rows`` bounds the preview (default: what a styled table
    shows); ``downloads``: with the CSV and Parquet bytes. Imports no Streamlit: for an upload it is computed in
    the walled worker that read the file (without downloads: written out, a table of 200,000 rows and 24 numbers
    is 87 MB of CSV text and 215 MB while it is written, for a file the visitor already holds)."""
    from ui.kit.downloads import csv_bytes
    from ui.kit.tables import within_style_limit

    error = table["error"].notna() if "error" in table else pd.Series(False, index=table.index)
    failures = table.loc[error, ["setting", "error"]].drop_duplicates() if "error" in table else pd.DataFrame()
    shown = table if preview_rows is None else table.head(preview_rows)
    rows, note = within_style_limit(shown)
    if len(rows) < len(table) and not downloads:
        note = f"Showing the first {len(rows):,} of the {len(table):,} rows of the uploaded table; your file holds all."
    buffer = io.BytesIO()
    if downloads:
        table.to_parquet(buffer, index=False)
    return TableFacts(rows=len(table), failed_cells=int(table.loc[error, "cell"].nunique()) if "cell" in table else 0,
                      compute_seconds=float(table["wall_seconds"].sum()) if "wall_seconds" in table else None,
                      tool=str(table["tool"].iloc[0]) if "tool" in table and len(table) else "fbo",
                      choices=metric_choices(table) if len(table) else {"utility": "utility"},
                      failures=[dict(setting=s, error=e) for s, e in failures.to_numpy()],
                      settings=every_setting_params(table),
                      preview=rows.reset_index(drop=True), preview_note=note,
                      csv=csv_bytes(table) if downloads else None, parquet=buffer.getvalue() if downloads else None)


def result_facts(result: dict) -> TableFacts:
    """The facts of a result (an upload's came from its worker; a run's are computed once and kept)."""
    if result.get("facts") is None:
        result["facts"] = table_facts(result["table"])
    return result["facts"]


def digest(data: bytes) -> str:
    """The key of an uploaded file's analysis: the SHA-256 of its bytes."""
    return hashlib.sha256(data).hexdigest()


def analyse(table: pd.DataFrame, max_settings: int = ALL_PAIRS_MAX_SETTINGS) -> TableAnalysis:
    """Summary, varied parameters, direction and ties (every pair up to ``max_settings`` settings, else
    neighbours). Imports no Streamlit: it is what a walled worker computes."""
    return TableAnalysis(summary=summarise(table), varied=varied_parameters(table), lower=lower_is_better(table),
                         tied=ties(pair_differences(table, max_settings)))


def read_and_analyse(data: bytes, name: str, max_bytes: int | None, metric: str = "utility",
                     analyser=None) -> tuple[TableFacts, TableAnalysis]:
    """In one worker: an uploaded file read (refused or priced first, :func:`engine.sweep.read_upload`), its facts
    and its analysis by ``metric`` (``analyser``, default :func:`analyse`, travels with the call); the table
    itself stays in the worker. Imports no Streamlit."""
    table, shortened = short_cells(read_upload(io.BytesIO(data), name, max_bytes=max_bytes))   # bounded answers
    facts = replace(table_facts(table, PREVIEW_ROWS, downloads=False), shortened=shortened)
    return facts, (analyser or analyse)(with_metric(table, metric))


def analyse_upload(data: bytes, name: str, max_bytes: int | None, metric: str, analyser=None) -> TableAnalysis:
    """In a worker: the analysis of an uploaded file by another ``metric`` (the file read again there)."""
    table, _ = short_cells(read_upload(io.BytesIO(data), name, max_bytes=max_bytes))
    return (analyser or analyse)(with_metric(table, metric))


def open_upload(data: bytes, name: str, max_bytes: int | None) -> tuple[TableFacts, dict]:
    """An uploaded file's facts and what its result keeps (its digest, analysis and bytes), read and analysed
    in one walled call: one deadline for the request, and the table never in the server. Raises ConfigError with
    the visitor's sentence (the time limit's and an unexpected failure's too, so the page shows it where it shows
    a refusal)."""
    from engine.cancel import TIME_LIMIT, Cancelled
    from engine.walls import TIME
    from ui.kit.compute import compute
    from ui.kit.run_worker import wall_sentence

    key = digest(data)
    try:
        facts, analysis = compute(read_and_analyse, data, name, max_bytes, "utility", analyse, walled="upload")
    except Cancelled as err:
        if err.reason != TIME_LIMIT:
            raise                   # Stop, another click, a closed tab: the script ends as it would
        raise ConfigError(wall_sentence(TIME, "upload"), "upload") from None
    except RuntimeError as err:     # a failure in the worker: its visitor's sentence (nothing internal when hosted)
        raise ConfigError(f"Could not open {name}: {err}.", "upload") from None
    _keep(key, analysis)
    return facts, {"digest": key, "analysis": analysis, "upload": (data, name, max_bytes), "facts": facts}


def analysis_mb(analysis: TableAnalysis) -> float:
    """What an analysis holds in memory (its summary's cells, text included, and its ties), in MB."""
    tied = sum(len(others) + 1 for others in dict(analysis.tied or {}).values()) * 64
    return (int(analysis.summary.memory_usage(deep=True).sum()) + tied) / 1e6


def _keep(key: str, analysis: TableAnalysis) -> None:
    """Keep ``analysis`` for the next session that opens the same file: at most :data:`KEPT_TABLES` analyses and
    :data:`KEPT_MB` in all, the least recently used dropped first (one larger than all of it is not kept)."""
    size = analysis_mb(analysis)
    with _KEPT_LOCK:
        _KEPT.pop(key, None)
        if size > KEPT_MB:
            return
        _KEPT[key] = (analysis, size)
        while len(_KEPT) > KEPT_TABLES or sum(mb for _, mb in _KEPT.values()) > KEPT_MB:
            _KEPT.popitem(last=False)


def _analysed(key: str, result: dict, metric: str) -> TableAnalysis:
    """An uploaded table's analysis, shared by the sessions that open the same file; computed walled, from the
    file's bytes when the result holds them (no table is sent from the server)."""
    from ui.kit.compute import compute

    with _KEPT_LOCK:
        kept = _KEPT.get(key)
        if kept is not None:
            _KEPT.move_to_end(key)
            return kept[0]
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
