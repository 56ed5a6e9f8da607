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

import functools
import inspect
import math
import numbers
import re
import reprlib
from typing import Callable, Iterable, TypeVar

# A number as a person types it: ASCII digits, an optional point and exponent (no other scripts' digits, no
# underscores, no inf or nan). Links, command-line options and typed lists are read with this one form.
NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)
NUMBER_FORM = "a number written with the digits 0-9 (e.g. 10, 0.25 or 1e-3)"
_SHOWN = reprlib.Repr()
_SHOWN.maxstring = _SHOWN.maxother = _SHOWN.maxlong = 40
_SHOWN.maxlevel, _SHOWN.maxlist, _SHOWN.maxdict = 2, 4, 4


class ConfigError(ValueError):
    """A user-supplied setting is invalid; ``str(err)`` is the sentence to show.

    ``field`` is the configuration field the sentence is about (``None`` when
    it concerns no single field).
    """

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


F = TypeVar("F", bound=Callable)


def api_boundary(function: F) -> F:
    """``function`` as a public entry point: a ConfigError from anywhere inside it reaches the caller raised
    here, with none of the engine's frames below (one frame, this boundary's, then the caller's own), so
    what a user sees is their own code and the sentence. Any other exception (an objective's own error, a
    KeyboardInterrupt) passes through untouched."""
    @functools.wraps(function)
    def public(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except ConfigError as error:
            raise error.with_traceback(None) from None     # bad input: the sentence below says which setting
    # The one frame shown is named after the function the caller called.
    public.__code__ = public.__code__.replace(co_name=function.__name__, co_qualname=function.__qualname__)
    return public  # type: ignore[return-value]


class Checked(type):
    """The metaclass of the public configurations: a bad setting raises its ConfigError from the constructor
    the caller called, without the validation's frames (as :func:`api_boundary` does for functions)."""

    def __call__(cls, *args, **kwargs):
        try:
            return super().__call__(*args, **kwargs)
        except ConfigError as error:
            raise error.with_traceback(None) from None     # bad input: the sentence below says which setting

    @property
    def __signature__(cls) -> inspect.Signature:
        """The class's own constructor's signature (``help`` and ``inspect`` would otherwise show __call__'s)."""
        signature = inspect.signature(cls.__init__)
        return signature.replace(parameters=list(signature.parameters.values())[1:], return_annotation=None)


def shown(value) -> str:
    """A value as a sentence shows it, in at most about 40 characters however long or deep it is: a number whole
    numbers in full (1000000000, not 1e+09), others as ``:g``; anything else as its (shortened) ``repr``."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 128:
        return f"a number of about {int(value.bit_length() * 0.30103) + 1:,} digits"
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return str(int(value))
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        number = float(value)
        if math.isfinite(number) and number.is_integer() and abs(number) < 1e16:
            return str(int(number))
        return f"{number:g}"
    try:
        return _SHOWN.repr(value)
    except Exception:  # noqa: BLE001 - a value whose repr fails is still named
        return f"a {type(value).__name__}"


def parse_number(text: str, kind: type = float):
    """``text`` as a number of ``kind`` (int: whole) in the one form :data:`NUMBER`; ValueError otherwise.

    Python's own ``float()`` also reads other scripts' digits, underscores, ``inf`` and ``nan``: none of those
    is what a page or the command line says it accepts.
    """
    text = str(text).strip()
    if not NUMBER.fullmatch(text):
        raise ValueError(text)
    if kind is int and re.fullmatch(r"[+-]?[0-9]+", text):
        return int(text)
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(text)
    if kind is int:
        if not number.is_integer():
            raise ValueError(text)
        return int(number)
    return number


def _is_number(value) -> bool:
    if isinstance(value, str):
        return NUMBER.fullmatch(value.strip()) is not None
    try:
        return not math.isnan(float(value))
    except OverflowError:
        return True           # a whole number too large for a float: a number, refused as not finite
    except (TypeError, ValueError):
        return False


def check_number(field: str, value, *, name: str | None = None) -> float:
    name = name or field
    if isinstance(value, bool) or not _is_number(value):
        raise ConfigError(f"{name} must be a number, got {shown(value)}.", field)
    try:
        value = float(value)
    except OverflowError:
        value = math.inf
    if math.isinf(value):
        raise ConfigError(f"{name} must be finite, got {shown(value)}.", field)
    return value


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
        raise ConfigError(f"{name or field} must be a whole number, got {shown(value)}.", field)
    check_range(field, int(number), low, high, name=name)
    return int(number)


def check_probability_open(field: str, value, *, name: str | None = None) -> float:
    """A value in the open interval (0, 1), e.g. delta."""
    return check_range(field, value, 0, 1, low_open=True, high_open=True, name=name)


def check_choice(field: str, value, choices: Iterable[str], *, name: str | None = None) -> str:
    choices = list(choices)
    if not isinstance(value, str) or value not in choices:
        raise ConfigError(f"{name or field} must be one of {', '.join(choices)}, got {shown(value)}.", field)
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
            number = parse_number(item)
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
