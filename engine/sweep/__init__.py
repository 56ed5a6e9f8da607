"""Parameter sweeps: a grid (or list) of configurations x seeds of any tool, run
in this process, in joblib worker processes or on a Dask cluster, appended cell
by cell to a resumable tidy table (one row per cell x run).

>>> from engine.sweep import SweepSpec, run_sweep
>>> spec = SweepSpec("fbo", base={"agents": 20, "iterations": 10},
...                  axes=(("q", (0.15, 0.25, 0.5)), ("z", (1.0, 1.5))), runs=5)
>>> summary = run_sweep(spec, "sweep.parquet", executor="joblib")   # doctest: +SKIP

The names below are exported lazily (PEP 562): ``import engine.sweep.spec``
loads the spec and its shared vocabulary (:mod:`engine.sweep.values`) only,
not the adapters, executors or any tool.
"""

import importlib

# name -> submodule that defines it
_EXPORTS = {
    **dict.fromkeys(("ADAPTERS", "TOOLS", "Adapter", "Metric", "RunOutcome", "get_adapter", "register"), "adapters"),
    **dict.fromkeys(("pareto_mask", "summarise", "varied_parameters"), "analysis"),
    **dict.fromkeys(("META_COLUMNS", "TIMING_COLUMNS", "CellOutcome", "run_cell"), "cell"),
    **dict.fromkeys(("EXECUTOR_LABELS", "EXECUTORS", "SweepAborted"), "executors"),
    **dict.fromkeys(("SWEEP_PRESETS", "preset_spec"), "presets"),
    **dict.fromkeys(("Progress", "SweepSummary", "comparable", "iter_sweep", "run_sweep", "spec_cost"), "runner"),
    **dict.fromkeys(("COMBINE", "Cell", "SweepSpec"), "spec"),
    **dict.fromkeys(("PartStore", "read_table", "write_table"), "store"),
    **dict.fromkeys(("read_upload", "upload_price"), "upload"),
    **dict.fromkeys(("parse_assignment", "parse_setting", "parse_value"), "values"),
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'engine.sweep' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"engine.sweep.{_EXPORTS[name]}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
