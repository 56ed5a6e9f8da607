"""Input checks shared by every public entry point of the engine.

Each check raises :class:`ConfigError` with one sentence a person can act on;
the CLI prints that sentence and exits 2, the dashboard shows it next to the
control. Keeping the wording here gives every tool the same voice.
"""

from __future__ import annotations

import math
from typing import Iterable


class ConfigError(ValueError):
    """A user-supplied setting is invalid; ``str(err)`` is the sentence to show."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


def _is_number(value) -> bool:
    try:
        return not math.isnan(float(value))
    except (TypeError, ValueError):
        return False


def check_number(name: str, value) -> float:
    if isinstance(value, bool) or not _is_number(value):
        raise ConfigError(f"{name} must be a number, got {value!r}.", name)
    value = float(value)
    if math.isinf(value):
        raise ConfigError(f"{name} must be finite, got {value}.", name)
    return value


def check_range(name: str, value, low=None, high=None, *, low_open=False, high_open=False) -> float:
    """Check ``low <(=) value <(=) high`` and return ``value`` as a float."""
    value = check_number(name, value)
    lo_ok = low is None or (value > low if low_open else value >= low)
    hi_ok = high is None or (value < high if high_open else value <= high)
    if not (lo_ok and hi_ok):
        if low is not None and high is not None:
            interval = f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
            raise ConfigError(f"{name} must be in {interval}, got {value:g}.", name)
        if low is not None:
            relation = ">" if low_open else ">="
            raise ConfigError(f"{name} must be {relation} {low:g}, got {value:g}.", name)
        relation = "<" if high_open else "<="
        raise ConfigError(f"{name} must be {relation} {high:g}, got {value:g}.", name)
    return value


def check_positive(name: str, value) -> float:
    return check_range(name, value, 0, None, low_open=True)


def check_int(name: str, value, low=None, high=None) -> int:
    number = check_number(name, value)
    if number != int(number):
        raise ConfigError(f"{name} must be a whole number, got {value!r}.", name)
    check_range(name, int(number), low, high)
    return int(number)


def check_probability_open(name: str, value) -> float:
    """A value in the open interval (0, 1), e.g. delta."""
    return check_range(name, value, 0, 1, low_open=True, high_open=True)


def check_choice(name: str, value, choices: Iterable[str]) -> str:
    choices = list(choices)
    if value not in choices:
        raise ConfigError(f"{name} must be one of {', '.join(choices)}, got {value!r}.", name)
    return value
