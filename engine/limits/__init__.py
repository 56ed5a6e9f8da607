"""What a request will cost, and whether this host accepts it: the one resource model.

Every tool that starts work a visitor (or a command line) asked for turns its
configuration into a :class:`Cost` with its estimator, and the pages and the
CLI call :func:`check` before starting it. The limits and the check live in
:mod:`engine.limits.core`; each tool's price lives in its own module:

- :mod:`engine.limits.fbo`: ``fbo_cost``, a federated BO run (every line of a
  comparison, the teaching view's round), including building its objective
  (``objective_cost``: the synthetic GP draw, a real task's table when it is
  not cached yet, or a model trained per query on the continuous domain; the
  data sets' own figures come from :func:`engine.objectives.registry.dataset_costs`),
  each agent's own GP and accounting its privacy curve;
- :mod:`engine.limits.privacy`: ``accountant_cost``, epsilon curves, single
  epsilons and calibrations;
- :mod:`engine.limits.hype`: ``hype_cost`` (both modes) and ``hype_grid_cost``
  (its curves and Fig. 2a);
- :mod:`engine.limits.pogpucb`: ``pogpucb_cost``;
- :mod:`engine.limits.sweep`: ``sweep_cost`` (cells, workers, shared table builds);
- :mod:`engine.limits.advise`: ``advice_cost`` (the settings advisor's runs, calibrations and workers);
- :mod:`engine.limits.upload`: ``upload_cost`` (reading a table a visitor uploads);
- :mod:`engine.limits.audit`: ``audit_cost``, the privacy audit's (and the one-run audits' ``one_run_cost``,
  ``flower_one_run_cost``);
- :mod:`engine.limits.machine`: a call from Python (``dpbo``) checks the same prices against
  :class:`Limits` (this machine's free memory, a time the caller may set) with ``refuse_above``.
- :mod:`engine.limits.answer`: what heavy work sends back to the server (``ANSWER_MB``, ``short_text``);
- :mod:`engine.limits.visitors`: what one visitor may have at once (``VisitorCaps``: jobs, reruns).

Every command of ``python -m engine`` is priced in one place: each tool module
of :mod:`engine.cli` exposes ``cost(args)`` and ``engine.cli.main`` checks it.

The refusal is a :class:`~engine.validation.ConfigError` whose field is the
knob to lower, so a page shows it under that control and the CLI prints it and
exits 2.

The host's limits (:class:`HostLimits`, from the environment):

``DPBO_MAX_SECONDS`` (120)
    estimated CPU seconds one request (one press of Run, one CLI command) may
    ask for; a run still computing after twice this (wall clock, queueing
    excluded) is stopped.
``DPBO_MAX_MEMORY_MB`` (2048)
    estimated peak memory one request may add.
``DPBO_MAX_WORKERS`` (the number of cores)
    worker processes one sweep may start.
``DPBO_MAX_RUNS`` (the number of cores)
    heavy runs computing at once on the whole server (the dashboard queues the others).
``DPBO_MAX_UPLOAD_ROWS`` (200000)
    rows of an uploaded table (its size in MB is Streamlit's ``server.maxUploadSize``).

``DPBO_MAX_SECONDS``, ``DPBO_MAX_MEMORY_MB`` and ``DPBO_MAX_UPLOAD_ROWS`` may be
``none`` for no limit; a value that is not a positive number falls back to its
default. The command line applies the time limit only when the host sets it.

Each estimate is a few terms "operations in the inner loop x seconds per
operation", with constants measured on the 2-core development machine
(numpy, single-threaded BLAS) and rounded up, so estimates lie above the
measured figures (``tests/test_limits_conservative.py`` holds a spread of
configurations to that; ``python -m benchmarks.bench_limits`` sweeps wider).
They decide refusals, not progress bars.
"""

from engine.limits.advise import advice_cost
from engine.limits.answer import ANSWER_MB, SHOWN_ITEMS, TEXT_CHARS, answer_mb, answer_sentence, short_text
from engine.limits.audit import (
    AuditCost,
    audit_cost,
    flower_one_run_cost,
    one_run_cost,
    participant_audit_cost,
    strategy_audit_cost,
)
from engine.limits.core import (
    DEFAULT_MAX_MEMORY_MB,
    DEFAULT_MAX_SECONDS,
    DEFAULT_MAX_UPLOAD_ROWS,
    KNOB_NAMES,
    LIGHT_SECONDS,
    MEMORY_ENV,
    NO_LIMIT,
    RUN_TIME_FACTOR,
    RUNS_ENV,
    SECONDS_ENV,
    UPLOAD_ROWS_ENV,
    WORKERS_ENV,
    Cost,
    HostLimits,
    check,
    check_rows,
    check_workers,
    cores,
    format_memory,
    format_seconds,
    knob_ranking,
    knob_words,
    priced,
)
from engine.limits.fbo import fbo_cost, objective_cost, own_gp_cost
from engine.limits.hype import hype_cost, hype_grid_cost
from engine.limits.machine import Limits, free_memory_mb, refuse_above
from engine.limits.pogpucb import pogpucb_cost
from engine.limits.privacy import accountant_cost, pld_noise_factor
from engine.limits.sweep import sweep_cost
from engine.limits.upload import upload_cost
from engine.limits.visitors import VisitorCaps

__all__ = ["AuditCost", "advice_cost", "Cost", "DEFAULT_MAX_MEMORY_MB", "DEFAULT_MAX_SECONDS",
           "DEFAULT_MAX_UPLOAD_ROWS",
           "HostLimits", "KNOB_NAMES", "LIGHT_SECONDS", "MEMORY_ENV", "NO_LIMIT", "RUNS_ENV", "RUN_TIME_FACTOR",
           "SECONDS_ENV", "UPLOAD_ROWS_ENV", "WORKERS_ENV", "accountant_cost", "audit_cost", "check", "check_rows",
           "flower_one_run_cost", "one_run_cost", "participant_audit_cost", "strategy_audit_cost",
           "check_workers", "cores", "fbo_cost", "format_memory", "format_seconds", "hype_cost", "hype_grid_cost",
           "knob_ranking", "knob_words", "Limits", "free_memory_mb", "refuse_above", "objective_cost", "own_gp_cost",
           "pld_noise_factor", "pogpucb_cost", "priced",
           "sweep_cost", "upload_cost"]
__all__ += ["ANSWER_MB", "SHOWN_ITEMS", "TEXT_CHARS", "VisitorCaps", "answer_mb", "answer_sentence", "short_text"]
