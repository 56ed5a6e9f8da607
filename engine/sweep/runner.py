"""Run a sweep: skip the cells already on disk, run the rest, stream progress, write the table."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Iterator

import pandas as pd

from engine.cache import enforce_limit, in_cache
from engine.hosting import is_hosted
from engine.limits import Cost, check_workers, format_seconds, sweep_cost
from engine.sweep.adapters import get_adapter
from engine.sweep.cell import TIMING_COLUMNS, cell_rows, public_error
from engine.sweep.executors import default_workers, execute
from engine.sweep.spec import Cell, SweepSpec
from engine.sweep.store import PartStore, write_table
from engine.validation import ConfigError


@dataclass(frozen=True)
class Progress:
    """Where a sweep stands: a page draws it as a bar, the CLI prints it as a line."""

    done: int                  # cells finished (including those found on disk)
    total: int
    failed: int                # finished cells that recorded an error
    reused: int                # cells found on disk from an earlier run
    elapsed: float             # seconds since this run started
    remaining: float | None    # estimate from this run's pace; None before the first cell finishes
    last: str | None = None    # label of the cell that just finished

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 1.0

    def line(self) -> str:
        parts = [f"{self.done}/{self.total} cells"]
        if self.failed:
            parts.append(f"{self.failed} failed")
        if self.reused:
            parts.append(f"{self.reused} from disk")
        text = f"sweep: {', '.join(parts)}; {self.elapsed:.1f} s elapsed"
        if self.remaining is not None and self.done < self.total:
            text += f", about {format_seconds(self.remaining)} left"
        return text + (f" (last: {self.last})" if self.last else "")


@dataclass
class SweepSummary:
    """What a finished (or interrupted) sweep did."""

    tool: str
    out: str
    executor: str
    cells: int
    cells_run: int
    cells_reused: int
    rows: int
    seconds: float
    failed: list = field(default_factory=list)   # [{"cell", "setting", "error"}]
    complete: bool = True
    table: pd.DataFrame | None = field(default=None, repr=False)

    def to_json(self) -> dict:
        return {"tool": self.tool, "out": self.out, "executor": self.executor, "cells": self.cells,
                "cells_run": self.cells_run, "cells_reused": self.cells_reused, "rows": self.rows,
                "rows_written": self.rows, "failed_cells": len(self.failed), "failures": self.failed,
                "seconds": round(self.seconds, 3), "complete": self.complete}


def _relabel(rows: pd.DataFrame, cell: Cell) -> pd.DataFrame:
    """Rows of a part found on disk, with this sweep's position and label of the cell."""
    rows = rows.copy()
    rows["cell"] = cell.index
    rows["role"] = cell.role
    rows["setting"] = cell.setting
    rows["replicate"] = cell.replicate
    return rows


def merge_parts(cells: list[Cell], parts: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """The table of every finished cell, ordered by cell then run whatever order they finished in."""
    frames = [_relabel(parts[c.key], c) for c in cells if c.key in parts]
    if not frames:
        return pd.DataFrame()
    # Parts of cells that failed hold NaN results; concat keeps one column set for all.
    frame = pd.concat(frames, ignore_index=True)
    return frame.sort_values(["cell", "run"], kind="stable").reset_index(drop=True)


def finished_table(spec: SweepSpec, out: str | Path) -> pd.DataFrame:
    """The rows of ``spec``'s cells finished so far (their parts next to ``out``), as :func:`merge_parts` orders
    them: what a stopped sweep drew, whatever stopped it (a worker ended at a time limit writes no table)."""
    cells = spec.cells(get_adapter(spec.tool))
    store = PartStore(out)
    on_disk = store.keys()
    parts = {c.key: rows for c in cells if c.key in on_disk and (rows := store.load(c.key)) is not None}
    return merge_parts(cells, parts)


def _prepare(adapter, cells: list[Cell]) -> None:
    """Let the tool build shared inputs (objective tables) once, before workers start."""
    seen = set()
    for cell in cells:
        marker = json.dumps({k: v for k, v in cell.params.items() if k not in ("seed", "runs")},
                            sort_keys=True, default=str)
        if marker in seen:
            continue
        seen.add(marker)
        try:
            adapter.prepare(cell.params)
        except ConfigError:
            raise
        except Exception:  # noqa: BLE001 - the cells themselves will record what goes wrong
            pass


def iter_sweep(spec: SweepSpec, out: str | Path, *, executor: str = "joblib", workers: int | None = None,
               scheduler: str | None = None, client=None, retry_failed: bool = True,
               prepare: bool | None = None) -> Iterator[Progress | SweepSummary]:
    """Run ``spec``, yielding a :class:`Progress` after every cell and the :class:`SweepSummary` last.

    Parameters
    ----------
    spec
        The sweep.
    out
        The table to write (``.parquet`` or ``.csv``); finished cells live in
        ``<out>.parts/`` and are reused by a rerun with the same ``out``.
    executor
        ``"local"``, ``"joblib"`` (default) or ``"dask"`` (with ``scheduler``
        or ``client``, else a new loopback LocalCluster of ``workers`` processes).
    retry_failed
        Run again the cells a previous run recorded as failed.
    prepare
        Build shared inputs (e.g. cached objective tables) in this process
        first; default: yes unless cells run on a remote scheduler.

    In hosting mode (:func:`engine.hosting.is_hosted`) a failed cell records
    one sentence (what failed, what to lower), never the exception's text.

    Stopping the generator early (or an interrupt) keeps every finished cell on
    disk and writes the table of the cells finished so far.
    """
    start = time.perf_counter()
    hosted = is_hosted()
    adapter = get_adapter(spec.tool)
    cells = spec.cells(adapter)
    store = PartStore(out)
    on_disk = store.keys()
    parts: dict[str, pd.DataFrame] = {}
    for cell in cells:
        if cell.key in on_disk:
            rows = store.load(cell.key)
            if rows is not None and not (retry_failed and rows["error"].notna().any()):
                parts[cell.key] = rows
    reused = len(parts)
    pending = [c for c in cells if c.key not in parts]
    if prepare is None:
        prepare = not scheduler and client is None
    if prepare and pending:
        _prepare(adapter, pending)

    failed = {c.key for c in cells if c.key in parts and parts[c.key]["error"].notna().any()}
    ran = 0
    complete = False
    stream = None

    first_done = None

    def progress(last=None) -> Progress:
        now = time.perf_counter()
        elapsed = now - start
        # The pace between completions, once there are two, leaves out the start-up (worker processes,
        # a Dask cluster) that the first cell alone pays.
        if ran >= 2:
            remaining = (now - first_done) / (ran - 1) * (len(cells) - len(parts))
        else:
            remaining = elapsed / ran * (len(cells) - len(parts)) if ran else None
        return Progress(len(parts), len(cells), len(failed), reused, elapsed, remaining, last)

    try:
        yield progress()
        stream = execute(pending, spec.tool, executor, workers=workers, scheduler=scheduler, client=client)
        for cell, outcome in stream:
            if hosted and outcome.error is not None:
                # Visitors see what failed and what to lower, never an exception's text.
                outcome = replace(outcome, error=public_error(spec.tool, outcome))
            rows = cell_rows(spec.tool, cell, outcome, adapter.metric)
            store.write(cell.key, rows)           # on disk before anyone hears of it
            parts[cell.key] = rows
            ran += 1
            if first_done is None:
                first_done = time.perf_counter()
            if outcome.error is not None:
                failed.add(cell.key)
            elif cell.key in failed:
                failed.discard(cell.key)
            yield progress(cell.label)
        complete = True
    finally:
        if stream is not None and hasattr(stream, "close"):
            stream.close()          # stop workers and release a Dask cluster at once
        table = merge_parts(cells, parts)
        if len(table):
            write_table(table, out)
        if in_cache(out):
            enforce_limit(Path(out))        # the dashboard keeps its sweeps in the cache
    failures = []
    for cell in cells:
        if cell.key in failed:
            failures.append({"cell": cell.index, "setting": cell.label,
                             "error": str(parts[cell.key]["error"].dropna().iloc[0])})
    yield SweepSummary(tool=spec.tool, out=str(out), executor=executor, cells=len(cells), cells_run=ran,
                       cells_reused=reused, rows=len(table), seconds=time.perf_counter() - start,
                       failed=failures, complete=complete, table=table)


def run_sweep(spec: SweepSpec, out: str | Path, *, executor: str = "joblib", workers: int | None = None,
              scheduler: str | None = None, client=None, retry_failed: bool = True, prepare: bool | None = None,
              on_progress: Callable[[Progress], None] | None = None) -> SweepSummary:
    """Run ``spec`` to the end (see :func:`iter_sweep`), calling ``on_progress`` after every cell."""
    summary = None
    for event in iter_sweep(spec, out, executor=executor, workers=workers, scheduler=scheduler, client=client,
                            retry_failed=retry_failed, prepare=prepare):
        if isinstance(event, SweepSummary):
            summary = event
        elif on_progress is not None:
            on_progress(event)
    return summary


def spec_cost(spec: SweepSpec, *, executor: str = "joblib", workers: int | None = None,
              cells: list[Cell] | None = None) -> Cost:
    """The estimated cost of running every cell of ``spec`` (for :func:`engine.limits.check`).

    Work the cells share (a real task's table, built once by the driver when it
    is not cached) is counted once; ``workers`` above the host's
    DPBO_MAX_WORKERS is refused.
    """
    adapter = get_adapter(spec.tool)
    cells = spec.cells(adapter) if cells is None else cells
    workers = 1 if executor == "local" else (check_workers(workers) or default_workers())
    shared = adapter.shared_costs([c.params for c in cells])
    return sweep_cost([adapter.cost(c.params, c.runs) for c in cells], workers, processes=executor != "local",
                      shared=shared)


def comparable(table: pd.DataFrame) -> pd.DataFrame:
    """The table without timing columns: what must be identical whichever executor ran the cells."""
    return table.drop(columns=[c for c in TIMING_COLUMNS if c in table.columns]).reset_index(drop=True)


__all__ = ["Progress", "SweepSummary", "comparable", "format_seconds", "iter_sweep", "merge_parts", "run_sweep",
           "spec_cost"]
