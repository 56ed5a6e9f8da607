"""Parameter sweeps: a grid (or list) of configurations x seeds of any tool, run
in this process, in joblib worker processes or on a Dask cluster, appended cell
by cell to a resumable tidy table (one row per cell x run).

>>> from engine.sweep import SweepSpec, run_sweep
>>> spec = SweepSpec("fbo", base={"agents": 20, "iterations": 10},
...                  axes=(("q", (0.15, 0.25, 0.5)), ("z", (1.0, 1.5))), runs=5)
>>> summary = run_sweep(spec, "sweep.parquet", executor="joblib")   # doctest: +SKIP
"""

from engine.sweep.adapters import ADAPTERS, TOOLS, Adapter, Metric, RunOutcome, get_adapter, register
from engine.sweep.analysis import pareto_mask, summarise, varied_parameters
from engine.sweep.cell import META_COLUMNS, TIMING_COLUMNS, CellOutcome, run_cell
from engine.sweep.executors import EXECUTOR_LABELS, EXECUTORS, SweepAborted
from engine.sweep.presets import SWEEP_PRESETS, preset_spec
from engine.sweep.runner import Progress, SweepSummary, comparable, iter_sweep, run_sweep, spec_cost
from engine.sweep.spec import COMBINE, Cell, SweepSpec
from engine.sweep.values import parse_assignment, parse_setting, parse_value
from engine.sweep.store import PartStore, read_table, write_table

__all__ = [
    "ADAPTERS", "Adapter", "COMBINE", "Cell", "CellOutcome", "EXECUTORS", "EXECUTOR_LABELS", "META_COLUMNS", "Metric",
    "PartStore", "Progress", "RunOutcome", "SWEEP_PRESETS", "SweepAborted", "SweepSpec", "SweepSummary",
    "TIMING_COLUMNS", "TOOLS", "comparable", "get_adapter", "iter_sweep", "pareto_mask", "parse_assignment",
    "parse_setting", "parse_value", "preset_spec", "read_table", "register", "run_cell", "run_sweep", "spec_cost",
    "summarise", "varied_parameters", "write_table",
]
