"""The host's limits and the one check every request passes: :class:`Cost`, :class:`HostLimits`, :func:`check`.

The estimators that turn a tool's configuration into a :class:`Cost` live
beside this module, one per tool (see :mod:`engine.limits`).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, replace
from typing import Iterable, Mapping, Sequence

from engine.validation import ConfigError

SECONDS_ENV = "DPBO_MAX_SECONDS"
MEMORY_ENV = "DPBO_MAX_MEMORY_MB"
WORKERS_ENV = "DPBO_MAX_WORKERS"
RUNS_ENV = "DPBO_MAX_RUNS"
UPLOAD_ROWS_ENV = "DPBO_MAX_UPLOAD_ROWS"
# Two minutes of one core per request: the largest paper preset (the landmine
# Fig. 3a sweep, 12 cells x 10 runs) is estimated at 35 s, 93 s with its table build.
DEFAULT_MAX_SECONDS = 120.0
# Two gigabytes per request: the largest preset (DP-HYPE data mode, n = 500) needs about 900 MB;
# with DPBO_MAX_RUNS runs at once a host needs about that many times this, plus the server.
DEFAULT_MAX_MEMORY_MB = 2048.0
DEFAULT_MAX_UPLOAD_ROWS = 200_000
# A running heavy request is stopped after this many times DPBO_MAX_SECONDS of wall-clock time: estimates are
# CPU seconds and conservative, so only a run slowed by a crowded machine (or mispriced) gets there.
RUN_TIME_FACTOR = 2.0
# Estimated CPU seconds a page may compute inline, without the queue of heavy runs (a curve after a run):
# more is done with fewer repetitions, or refused.
LIGHT_SECONDS = 5.0
NO_LIMIT = ("none", "off", "unlimited")

# Every price is its tool's model times the tool's margin below. A model's constants are CPU seconds measured on the
# reference machine (the 2-core development machine, an AMD EPYC; OpenBLAS's Haswell kernel, as its environment
# pins) and rounded up; the margin lifts every price to at least 1.1 times the most any of the tool's benchmark cases
# took under every condition measured: repeated runs, two busy loops beside them, and OpenBLAS's Haswell, SkylakeX
# and SandyBridge kernels (benchmarks/bench_price_spread.py; docs/hosting.md, "Prices and their margins", has the
# measurements). 1.0 where the model's own rounding already covers that.
MARGINS = {"fbo": 1.0, "table": 1.0, "accountant": 1.0, "hype": 1.6, "pogpucb": 1.0, "upload": 1.0, "audit": 1.0}


def with_margin(tool: str, seconds: float) -> float:
    """``seconds`` (a tool's model) times the tool's margin (:data:`MARGINS`)."""
    return float(seconds) * MARGINS[tool]

# How the sentence names a knob (config field -> words).
KNOB_NAMES = {
    "agents": "agents", "iterations": "iterations", "runs": "runs", "features": "random features M",
    "n_init": "initial points", "t": "iteration t", "repetitions": "repetitions", "clients": "clients",
    "candidates": "candidates", "workers": "workers", "values": "compared values", "replicates": "seeds per setting",
    "lines": "lines", "steps": "releases T", "domain": "domain (use the table)", "rows": "rows of the table",
    "upload": "size of the file", "accountant": "accountant (RDP is the fastest)", "trials": "number of trials",
    "dataset": "data set", "r": "projection dimension r", "synthetic_runs": "synthetic runs",
    "parts": "parts (--parts)", "P": "sub-regions P", "effort": "search effort",
}


def cores() -> int:
    return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class Cost:
    """The estimated price of a request.

    ``seconds`` is CPU time, ``memory_mb`` the peak memory the work adds.
    ``field`` is the configuration field to lower first (the knob furthest
    above its usual value); ``knobs`` lists every field that drives the cost,
    ``field`` first; ``memory_field`` is the one to lower when memory is the
    problem (default: ``field``). ``transient_mb`` is the part of ``memory_mb``
    needed only while the work computes (temporaries, a table build's workers).

    Work that is not heavy is not "unpriced": it is :meth:`free`, which says why (``free_because``).
    """

    seconds: float
    memory_mb: float
    field: str
    knobs: tuple[str, ...] = ()
    memory_field: str | None = None
    transient_mb: float = 0.0
    free_because: str = ""

    @classmethod
    def free(cls, because: str) -> "Cost":
        """The price of work that is not heavy whatever its inputs, and why (e.g. "writes a few small files")."""
        if not str(because).strip():
            raise ValueError("Cost.free needs the reason the work is light")
        return cls(seconds=0.0, memory_mb=0.0, field="", free_because=str(because))

    @property
    def is_free(self) -> bool:
        return bool(self.free_because)

    def __add__(self, other: "Cost") -> "Cost":
        """Two pieces of work held in memory together, computed in turn (e.g. the lines of one comparison):
        what each keeps adds up, the temporaries of only one are alive at a time."""
        first = self if self.seconds >= other.seconds else other
        transient = max(self.transient_mb, other.transient_mb)
        kept = (self.memory_mb - self.transient_mb) + (other.memory_mb - other.transient_mb)
        return replace(first, seconds=self.seconds + other.seconds, memory_mb=kept + transient,
                       transient_mb=transient)


@dataclass(frozen=True)
class HostLimits:
    """What one request may ask of this host (``None``: no limit)."""

    max_seconds: float | None = DEFAULT_MAX_SECONDS
    max_memory_mb: float | None = DEFAULT_MAX_MEMORY_MB
    max_workers: int | None = None          # None here means: the number of cores (see ``workers_cap``)
    max_runs: int | None = None             # heavy runs at once on the server; None: the number of cores
    max_upload_rows: int | None = DEFAULT_MAX_UPLOAD_ROWS

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, *,
                 default_seconds: float | None = DEFAULT_MAX_SECONDS) -> "HostLimits":
        """The limits the host set (the ``DPBO_MAX_*`` variables of the module docstring).

        A value that is not a positive number falls back to the default;
        ``none`` lifts the limit. The CLI passes ``default_seconds=None``.
        """
        environ = os.environ if environ is None else environ
        workers = _read(environ.get(WORKERS_ENV), None)
        runs = _read(environ.get(RUNS_ENV), None)
        rows = _read(environ.get(UPLOAD_ROWS_ENV), DEFAULT_MAX_UPLOAD_ROWS)
        return cls(max_seconds=_read(environ.get(SECONDS_ENV), default_seconds),
                   max_memory_mb=_read(environ.get(MEMORY_ENV), DEFAULT_MAX_MEMORY_MB),
                   max_workers=None if workers is None else max(1, int(workers)),
                   max_runs=None if runs is None else max(1, int(runs)),
                   max_upload_rows=None if rows is None else max(1, int(rows)))

    @property
    def workers_cap(self) -> int:
        """Worker processes one request may start (DPBO_MAX_WORKERS, default the number of cores)."""
        return self.max_workers or cores()

    @property
    def runs_cap(self) -> int:
        """Heavy runs computing at once on the server (DPBO_MAX_RUNS, default the number of cores)."""
        return self.max_runs or cores()

    @property
    def run_seconds(self) -> float | None:
        """Wall-clock seconds after which a running request is stopped (None: never)."""
        return None if self.max_seconds is None else RUN_TIME_FACTOR * self.max_seconds


def _read(raw: str | None, default: float | None) -> float | None:
    text = (raw or "").strip().lower()
    if text in NO_LIMIT:
        return None
    try:
        value = float(text)
    except ValueError:
        return default
    return value if math.isfinite(value) and value > 0 else default


def check(cost: Cost, limits: HostLimits | None = None, *, what: str = "This run", fewer: str | None = None) -> Cost:
    """Refuse ``cost`` when it is above the host's limits; return it otherwise.

    ``what`` is the sentence's subject ("This run", "These 3 lines", "This
    sweep"); ``fewer`` names something the visitor can have fewer of
    ("lines", "compared values"). Raises ConfigError with the knob to lower as
    its field.
    """
    limits = HostLimits.from_env() if limits is None else limits
    verb = "need" if what.split()[0].lower() in ("these", "they") else "needs"
    if limits.max_memory_mb is not None and cost.memory_mb > limits.max_memory_mb:
        field = cost.memory_field or cost.field
        raise ConfigError(f"{what} {verb} {format_memory(cost.memory_mb, about=True)} of memory (estimated); the "
                          f"limit here is {format_memory(limits.max_memory_mb)}. {_advice(cost, field, fewer)}", field)
    if limits.max_seconds is not None and cost.seconds > limits.max_seconds:
        raise ConfigError(f"{what} {verb} about {format_seconds(cost.seconds)} of computing (estimated); the limit "
                          f"here is {format_seconds(limits.max_seconds)}. {_advice(cost, cost.field, fewer)}",
                          cost.field)
    return cost


def format_seconds(seconds: float) -> str:
    """A duration for a sentence: ``0.16 s``, ``42 s``, ``2.0 min``, ``1.5 h``."""
    if seconds < 10:
        return f"{seconds:.2g} s"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


TERABYTE_MB = 1e6


def format_memory(megabytes: float, *, about: bool = False) -> str:
    """An amount of memory for a sentence: ``1,234 MB`` (``about 1,234 MB``), above a terabyte ``more than 1 TB``."""
    if megabytes > TERABYTE_MB:
        return "more than 1 TB"
    return f"about {megabytes:,.0f} MB" if about else f"{megabytes:,.0f} MB"


def knob_words(cost: Cost, first: str) -> str:
    """The knobs to lower in words, ``first`` first, at most three: "the runs, the agents or the iterations"."""
    names = ([first] + [k for k in cost.knobs if k != first])[:3]
    words = [f"the {KNOB_NAMES.get(name, name)}" for name in names]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def _advice(cost: Cost, first: str, fewer: str | None) -> str:
    lower = knob_words(cost, first)
    return (f"Compare fewer {fewer} or lower {lower}." if fewer else f"Lower {lower}.")


def knob_ranking(knobs: Iterable[tuple[str, float, float, float]]) -> tuple[str, ...]:
    """Fields ordered by how far each is above its usual value: (field, value, usual, power).

    Knobs at or below their usual value keep the given order (the most
    natural ones to lower come first).
    """
    knobs = list(knobs)
    factor = {name: max(1.0, (max(float(value), 1e-12) / usual) ** power) for name, value, usual, power in knobs}
    return tuple(sorted(factor, key=lambda name: -factor[name]))


def priced(seconds: float, memory_mb: float, knobs: Sequence[tuple[str, float, float, float]], **extra) -> Cost:
    """A :class:`Cost` whose knobs are ranked by :func:`knob_ranking` (the first is the field to lower)."""
    ranked = knob_ranking(knobs)
    return Cost(seconds=float(seconds), memory_mb=float(memory_mb), field=ranked[0], knobs=ranked, **extra)


def check_workers(workers: int | None, limits: HostLimits | None = None, *, field: str = "workers") -> int | None:
    """``workers`` if this host allows that many worker processes; raises ConfigError (``field``) otherwise."""
    if workers is None:
        return None
    limits = HostLimits.from_env() if limits is None else limits
    cap = limits.workers_cap
    if int(workers) > cap:
        raise ConfigError(f"This server starts at most {cap} worker processes per request, got {int(workers)}. "
                          "Lower the workers.", field)
    return int(workers)


def check_rows(rows: int, limits: HostLimits | None = None, *, what: str = "The table") -> int:
    """``rows`` if an uploaded table may have that many rows here; raises ConfigError ("rows") otherwise."""
    limits = HostLimits.from_env() if limits is None else limits
    if limits.max_upload_rows is not None and int(rows) > limits.max_upload_rows:
        raise ConfigError(f"{what} has more than {limits.max_upload_rows:,} rows, the most this server reads; "
                          "upload a smaller table.", "rows")
    return int(rows)

