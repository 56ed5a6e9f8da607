"""Running one cell, and turning its outcome into table rows.

:func:`run_cell` is what a worker executes (a process of joblib, a Dask
worker, or the driver itself): it gets plain data, returns plain data, and
never raises for a failing run, so one bad cell cannot stop a sweep. The rows
are built by the driver, which alone writes to disk (Dask workers may live on
machines that do not share its file system).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import pandas as pd

from engine.sweep.adapters import EXTRA_METRICS, Metric, get_adapter
from engine.validation import ConfigError

# Columns every sweep table has, besides one column per tool parameter.
LEADING = ("tool", "cell", "role", "setting", "replicate", "run")
TRAILING = ("metric", "lower_is_better", "utility", "privacy_loss", "privacy_delta", "wall_seconds", "cpu_seconds",
            "error", "cell_key")
META_COLUMNS = frozenset(LEADING + TRAILING + tuple(EXTRA_METRICS))
# Columns that legitimately differ between two executions of the same cells.
TIMING_COLUMNS = ("wall_seconds", "cpu_seconds")


@dataclass
class CellOutcome:
    """Plain data a worker sends back: per-run results or an error."""

    utility: list = field(default_factory=list)
    privacy_loss: list = field(default_factory=list)
    privacy_delta: list = field(default_factory=list)
    error: str | None = None
    seconds: float = 0.0
    cpu_seconds: float = 0.0     # CPU time of the worker process: tells contention apart from cost
    metric: str | None = None
    kind: str | None = None      # what failed: "setting" (a ConfigError), "memory", or "computation"
    extra: dict = field(default_factory=dict)   # further metrics by column name, one value per run


def describe_error(err: BaseException) -> str:
    """One line for the table's error column: the sentence of a ConfigError, else type and message."""
    if isinstance(err, ConfigError):
        return str(err)
    message = str(err).strip().splitlines()[0] if str(err).strip() else ""
    return f"{type(err).__name__}: {message}" if message else type(err).__name__


# What a visitor may lower when a cell of a tool runs out of memory or breaks in its numerics.
SIZE_KNOBS = {
    "fbo": "the number of agents, P, the iterations or the runs",
    "hype": "the number of clients, candidates or repetitions",
    "pogpucb": "the iterations, the runs or how often the hyperparameters are refitted",
    "toy": "x or the number of runs",
}


def error_kind(err: BaseException) -> str:
    if isinstance(err, ConfigError):
        return "setting"
    return "memory" if isinstance(err, MemoryError) else "computation"


def public_error(tool: str, outcome: CellOutcome) -> str | None:
    """The one sentence a hosted page shows for a failed cell: what failed and what to lower, no exception text.

    A refused setting (a ConfigError) is already such a sentence and is kept.
    """
    if outcome.error is None:
        return None
    if outcome.kind == "setting":
        return outcome.error
    knobs = SIZE_KNOBS.get(tool, "the size of the setting")
    if outcome.kind == "memory":
        return f"This setting needed more memory than this server has; lower {knobs} and run it again."
    return f"This setting failed during the computation; lower {knobs}, or change the setting, and run it again."


def run_cell(tool: str, params: dict, runs: int) -> CellOutcome:
    """Run one cell of ``tool``; errors are caught and returned, never raised."""
    start, cpu = time.perf_counter(), time.process_time()
    try:
        outcomes = get_adapter(tool).run(dict(params), runs)
        if len(outcomes) != runs:
            raise RuntimeError(f"the engine returned {len(outcomes)} runs instead of {runs}")
    except Exception as err:  # noqa: BLE001 - a failing cell is data, not a crash
        return CellOutcome(error=describe_error(err), seconds=time.perf_counter() - start,
                           cpu_seconds=time.process_time() - cpu, kind=error_kind(err))
    return CellOutcome(utility=[o.utility for o in outcomes], privacy_loss=[o.privacy_loss for o in outcomes],
                       privacy_delta=[o.privacy_delta for o in outcomes], seconds=time.perf_counter() - start,
                       cpu_seconds=time.process_time() - cpu,
                       metric=next((o.metric for o in outcomes if o.metric), None),
                       extra={name: [(o.extra or {}).get(name, math.nan) for o in outcomes]
                              for name in EXTRA_METRICS if any(name in (o.extra or {}) for o in outcomes)})


def param_column(name: str) -> str:
    """The table column of a tool parameter (renamed only if it would clash with a result column)."""
    return f"{name}_param" if name in META_COLUMNS else name


def cell_rows(tool: str, cell, outcome: CellOutcome, metric: Metric) -> pd.DataFrame:
    """One row per run of ``cell``: sweep columns, every parameter, the results."""
    runs = cell.runs
    failed = outcome.error is not None
    data = {"tool": [tool] * runs, "cell": [cell.index] * runs, "role": [cell.role] * runs,
            "setting": [cell.setting] * runs, "replicate": [cell.replicate] * runs, "run": list(range(runs))}
    for name, value in cell.params.items():
        data[param_column(name)] = [value] * runs
    nan = [math.nan] * runs
    data.update({
        "metric": [outcome.metric or metric.label] * runs,
        "lower_is_better": [metric.lower_is_better] * runs,
        "utility": nan if failed else [float(u) for u in outcome.utility],
        "privacy_loss": nan if failed else [float(e) for e in outcome.privacy_loss],
        "privacy_delta": nan if failed else [float(d) for d in outcome.privacy_delta],
        # Runs of one cell are computed together: each row carries an equal share of the cell's time.
        "wall_seconds": [outcome.seconds / runs] * runs,
        "cpu_seconds": [outcome.cpu_seconds / runs] * runs,
        "error": [outcome.error] * runs,
        "cell_key": [cell.key] * runs,
    })
    for name, values in outcome.extra.items():
        data[name] = nan if failed else [float(v) for v in values]
    return pd.DataFrame(data)
