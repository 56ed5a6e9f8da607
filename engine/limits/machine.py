"""The limits of a call from Python (``dpbo``): this machine's free memory, and a time the caller may set.

The command line and the pages check a request against the host's limits (:class:`~engine.limits.core.HostLimits`,
from ``DPBO_MAX_*``); a researcher's own Python session is its own host, so the API checks the same price
(:class:`~engine.limits.core.Cost`) against :class:`Limits`: by default the memory free on this machine when the
call starts and no time limit. :func:`refuse_above` says no in one sentence that names the knob to lower and how
to lift the limit, before anything heavy is allocated or accounted.
"""

from __future__ import annotations

import ctypes
import math
import numbers
import os
import sys
from dataclasses import dataclass

from engine.limits.core import Cost, format_memory, format_seconds, knob_words
from engine.validation import ConfigError, shown

FREE = "free"


def free_memory_mb() -> float | None:
    """The memory this machine can give a new computation now, in MB (Linux: MemAvailable; elsewhere the
    operating system's free or total physical memory); None when it cannot be read."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) / 1024.0
    except (OSError, ValueError, IndexError):
        pass
    if sys.platform == "win32":
        return _windows_free_mb()
    for pages in ("SC_AVPHYS_PAGES", "SC_PHYS_PAGES"):
        try:
            return os.sysconf(pages) * os.sysconf("SC_PAGE_SIZE") / 2**20
        except (ValueError, OSError, AttributeError):
            continue
    return None


def _windows_free_mb() -> float | None:  # pragma: no cover - exercised on Windows only
    class Status(ctypes.Structure):
        _fields_ = [("length", ctypes.c_ulong), ("load", ctypes.c_ulong), ("total", ctypes.c_ulonglong),
                    ("available", ctypes.c_ulonglong), ("page_total", ctypes.c_ulonglong),
                    ("page_available", ctypes.c_ulonglong), ("virtual_total", ctypes.c_ulonglong),
                    ("virtual_available", ctypes.c_ulonglong), ("extended", ctypes.c_ulonglong)]
    status = Status()
    status.length = ctypes.sizeof(Status)
    if not ctypes.windll.kernel32.GlobalMemoryStatusEx(ctypes.byref(status)):
        return None
    return status.available / 2**20


def _positive(field: str, value, allowed: str) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not float(value) > 0:
        raise ConfigError(f"limits.{field} must be {allowed} (above 0), got {shown(value)}.", field)


@dataclass(frozen=True)
class Limits:
    """What one call may ask of this machine, checked against its price before it starts.

    ``seconds``: the estimated CPU seconds a call may need (its price, :func:`dpbo.price`); a run still
    computing after that many seconds stops, keeping its finished iterations. None (the default): no time
    limit. ``memory_mb``: the estimated peak memory in MB a call may add; ``"free"`` (the default): the memory
    free on this machine when the call starts; None: no memory limit. ``limits=None`` in a call lifts both.
    """

    seconds: float | None = None
    memory_mb: float | str | None = FREE

    def __post_init__(self):
        if self.seconds is not None:
            _positive("seconds", self.seconds, "a number of seconds or None")
        if self.memory_mb is not None and self.memory_mb != FREE:
            _positive("memory_mb", self.memory_mb, "a number of MB, 'free' or None")

    def memory_cap(self) -> tuple[float | None, str]:
        """(the memory limit in MB now, how a sentence names it)."""
        if self.memory_mb == FREE:
            free = free_memory_mb()
            return (free, f"the {format_memory(free)} free on this machine") if free is not None else (None, "")
        if self.memory_mb is None:
            return None, ""
        return float(self.memory_mb), f"limits.memory_mb = {format_memory(float(self.memory_mb))}"


def as_limits(limits) -> Limits | None:
    """A call's ``limits`` argument: a :class:`Limits` or None (no limit); anything else is one sentence."""
    if limits is None or isinstance(limits, Limits):
        return limits
    raise ConfigError(f"limits must be dpbo.Limits(seconds=..., memory_mb=...) or None (no limit), got "
                      f"{shown(limits)}.", "limits")


def refuse_above(cost: Cost, limits, *, what: str = "This run") -> Cost:
    """``cost`` when it fits ``limits`` (a :class:`Limits`, or None: always), else one ConfigError sentence whose
    field is the knob to lower first, naming the limit and how to lift it."""
    limits = as_limits(limits)
    if limits is None or cost.is_free:
        return cost
    cap, named = limits.memory_cap()
    if cap is not None and cost.memory_mb > cap:
        field = cost.memory_field or cost.field
        raise ConfigError(f"{what} needs {format_memory(cost.memory_mb, about=True)} of memory (estimated), above "
                          f"{named}: lower {knob_words(cost, field)}, or pass limits=None to run it anyway.",
                          field)
    if limits.seconds is not None and cost.seconds > limits.seconds:
        raise ConfigError(f"{what} needs about {format_seconds(cost.seconds)} of computing (estimated), above "
                          f"limits.seconds = {format_seconds(limits.seconds)}: lower {knob_words(cost, cost.field)},"
                          " or raise the limit (limits=None lifts it).", cost.field)
    return cost


def deadline(limits) -> float | None:
    """The seconds after which a running call stops (None: never)."""
    limits = as_limits(limits)
    seconds = None if limits is None else limits.seconds
    return None if seconds is None or not math.isfinite(seconds) else float(seconds)
