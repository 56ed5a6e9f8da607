"""Input checks shared by every public entry point of the engine.

Each check raises :class:`ConfigError` with one sentence a person can act on;
the CLI prints that sentence and exits 2, the dashboard shows it next to the
control. Keeping the wording here gives every tool the same voice.

Every check takes the configuration field first (``"agents"``, ``"P"``,
``"q"``): the error carries it as ``ConfigError.field``, so a page puts the
sentence under the control of that field without reading the sentence.
``name`` is the human name the sentence uses ("number of agents N"); it
defaults to the field.
"""

from __future__ import annotations

import math
from typing import Iterable


class ConfigError(ValueError):
    """A user-supplied setting is invalid; ``str(err)`` is the sentence to show.

    ``field`` is the configuration field the sentence is about (``None`` when
    it concerns no single field).
    """

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


def _is_number(value) -> bool:
    try:
        return not math.isnan(float(value))
    except (TypeError, ValueError):
        return False


def check_number(field: str, value, *, name: str | None = None) -> float:
    name = name or field
    if isinstance(value, bool) or not _is_number(value):
        raise ConfigError(f"{name} must be a number, got {value!r}.", field)
    value = float(value)
    if math.isinf(value):
        raise ConfigError(f"{name} must be finite, got {value}.", field)
    return value


def shown(number) -> str:
    """A number as a sentence shows it: whole numbers in full (1000000000, not 1e+09), others as ``:g``."""
    number = float(number)
    return str(int(number)) if number.is_integer() and abs(number) < 1e16 else f"{number:g}"


def check_range(field: str, value, low=None, high=None, *, low_open=False, high_open=False,
                name: str | None = None) -> float:
    """Check ``low <(=) value <(=) high`` and return ``value`` as a float."""
    name = name or field
    value = check_number(field, value, name=name)
    lo_ok = low is None or (value > low if low_open else value >= low)
    hi_ok = high is None or (value < high if high_open else value <= high)
    if not (lo_ok and hi_ok):
        if low is not None and high is not None:
            interval = f"{'(' if low_open else '['}{shown(low)}, {shown(high)}{')' if high_open else ']'}"
            raise ConfigError(f"{name} must be in {interval}, got {shown(value)}.", field)
        if low is not None:
            relation = ">" if low_open else ">="
            raise ConfigError(f"{name} must be {relation} {shown(low)}, got {shown(value)}.", field)
        relation = "<" if high_open else "<="
        raise ConfigError(f"{name} must be {relation} {shown(high)}, got {shown(value)}.", field)
    return value


def check_positive(field: str, value, *, name: str | None = None) -> float:
    return check_range(field, value, 0, None, low_open=True, name=name)


def check_int(field: str, value, low=None, high=None, *, name: str | None = None) -> int:
    number = check_number(field, value, name=name)
    if number != int(number):
        raise ConfigError(f"{name or field} must be a whole number, got {value!r}.", field)
    check_range(field, int(number), low, high, name=name)
    return int(number)


def check_probability_open(field: str, value, *, name: str | None = None) -> float:
    """A value in the open interval (0, 1), e.g. delta."""
    return check_range(field, value, 0, 1, low_open=True, high_open=True, name=name)


def check_choice(field: str, value, choices: Iterable[str], *, name: str | None = None) -> str:
    choices = list(choices)
    if value not in choices:
        raise ConfigError(f"{name or field} must be one of {', '.join(choices)}, got {value!r}.", field)
    return value


def parse_values(text: str, kind: type, name: str, *, field: str = "values", most: int = 6) -> list:
    """Numbers a person typed to compare: ``'0.15, 0.25 0.5'`` -> ``[0.15, 0.25, 0.5]``.

    Separators are commas, semicolons or spaces; repeats are dropped; ``kind``
    int asks for whole numbers. Raises ConfigError (``field``) naming ``name``.
    """
    items = [item for item in str(text).replace(";", ",").replace(" ", ",").split(",") if item]
    if not items:
        raise ConfigError(f"Give the values of {name} to compare, separated by commas (e.g. 0.15, 0.25, 0.5).",
                          field)
    out = []
    for item in items:
        try:
            number = float(item)
        except ValueError:
            number = math.nan
        if not math.isfinite(number):
            raise ConfigError(f"'{item}' is not a number; give the values of {name} separated by commas.",
                              field) from None
        if kind is int:
            if number != int(number):
                raise ConfigError(f"{name} takes whole numbers, got {item}.", field)
            number = int(number)
        if number not in out:
            out.append(number)
    if len(out) > most:
        raise ConfigError(f"Compare at most {most} values of {name} at once, got {len(out)}.", field)
    return out
