"""What survives a rerun and what the URL says: every control's state and its query parameter.

Every control takes its starting value from ``st.session_state`` (key
``prefix + name``), seeded from the URL's query parameter of the same name,
and the page writes its non-default values back to the URL, so a link
reproduces the configuration. Each session has its own state: nothing here
is shared between visitors.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Container, Mapping

import streamlit as st

from engine.settings import SEED_MAX, Spec, specs  # noqa: F401  (SEED_MAX: the pages import it from here)
from engine.validation import parse_number

MAX_TEXT = 2000     # characters of a text parameter read from a link


@dataclass(frozen=True)
class Param:
    """One control's value: its default, its type, and what a link may set it to.

    ``kind`` is one of ``bool``, ``int``, ``float``, ``str`` or ``list`` (a list
    of strings, written to the URL joined by commas). ``optional`` allows
    ``None`` (an empty field), written to the URL as an empty value.
    ``choices`` lists the allowed values of a choice; ``low`` and ``high``
    bound a number (inclusive). A query parameter is parsed with these limits
    before anything uses it (a number in ASCII digits, finite, in range, whole
    where whole, at most :data:`MAX_TEXT` characters); one that does not fit is
    ignored, and the page says what the link may hold (:meth:`allowed`).
    """

    default: Any
    kind: type
    choices: tuple | None = None
    optional: bool = False
    low: float | None = None
    high: float | None = None

    def decode(self, text: str):
        """Parse a query-parameter string; raises ValueError when it does not fit."""
        text = str(text)
        if len(text) > MAX_TEXT:
            raise ValueError("too long")
        text = text.strip()
        if self.optional and text in ("", "none", "None"):
            return None
        if self.kind is bool:
            lowered = text.lower()
            if lowered in ("1", "true", "yes", "on"):
                return True
            if lowered in ("0", "false", "no", "off"):
                return False
            raise ValueError(text)
        if self.kind in (int, float):
            return self._number(text)
        if self.kind is list:
            items = [item.strip() for item in text.split(",") if item.strip()]
            if self.choices is not None and any(item not in self.choices for item in items):
                raise ValueError(text)
            return items
        if self.choices is not None and text not in self.choices:
            raise ValueError(text)
        return text

    def _number(self, text: str):
        number = parse_number(text, self.kind)   # ValueError for anything but ASCII digits of a finite number
        if (self.low is not None and number < self.low) or (self.high is not None and number > self.high):
            raise ValueError(text)
        return number

    def allowed(self, name: str) -> str:
        """What a link may set ``name`` to, as the end of a sentence: "agents is a whole number from 2 to 100,000"."""
        if self.kind is bool:
            what = "true or false"
        elif self.kind in (int, float):
            what = "a whole number" if self.kind is int else "a number"
            low, high = (None if b is None else _number_text(b, self.kind) for b in (self.low, self.high))
            if low is not None and high is not None:
                what += f" from {low} to {high}"
            elif low is not None:
                what += f" of at least {low}"
            elif high is not None:
                what += f" of at most {high}"
        elif self.choices is not None:
            listed = ", ".join(map(str, self.choices))
            what = f"a comma-separated list of {listed}" if self.kind is list else f"one of {listed}"
        else:
            what = f"text of at most {MAX_TEXT:,} characters"
        return f"{name} is {what}" + (" or empty" if self.optional else "")

    def encode(self, value) -> str:
        if value is None:
            return ""
        if self.kind is bool:
            return "true" if value else "false"
        if self.kind is list:
            return ",".join(str(v) for v in value)
        if self.kind is float:
            return f"{float(value):g}"
        return str(value)


def param_of(spec: Spec, default, *, optional: bool | None = None, choices=None) -> "Param":
    """The link parameter of a configuration field: its kind, choices and link bounds from the engine's
    declaration (:mod:`engine.settings`), with the page's own starting value."""
    low, high = spec.link_bounds()
    kind = spec.kind if spec.choices is None else str
    return Param(default, kind, choices if choices is not None else spec.choices,
                 optional=default is None if optional is None else optional, low=low, high=high)


def params_of(config_class, defaults: Mapping[str, Any], **extra: "Param") -> dict[str, "Param"]:
    """``Param`` of every name in ``defaults``: a field of ``config_class`` is derived from its declaration;
    ``extra`` holds the page-only controls (and overrides)."""
    declared = {}
    for cls in config_class if isinstance(config_class, tuple) else (config_class,):
        declared = specs(cls) | declared          # the first class's declaration wins
    out = {}
    for name, default in defaults.items():
        if name in extra:
            out[name] = extra[name]
        elif name in declared:
            out[name] = param_of(declared[name], default)
        else:
            raise KeyError(f"{name} is neither a configuration field nor a page control")
    return out



def _number_text(number: float, kind: type) -> str:
    if kind is int or float(number).is_integer() and abs(number) < 1e15:
        return f"{int(number):,}"
    return f"{number:g}"


SHOWN_TEXT = 40     # characters of an ignored link value repeated in the note


@dataclass(frozen=True)
class Ignored:
    """A query parameter a page left out: its name, the text the link gave, and what it may be."""

    name: str
    text: str
    allowed: str

    def sentence(self) -> str:
        text = self.text if len(self.text) <= SHOWN_TEXT else self.text[:SHOWN_TEXT] + "..."
        return f"Ignored {self.name}={text} from the link: {self.allowed}."


def init_state(params: Mapping[str, Param], prefix: str, *, read_query: bool = True) -> list[Ignored]:
    """Seed ``st.session_state[prefix + name]`` for every control not yet on screen.

    A control that already has a value keeps it; a new one takes the URL's
    query parameter of the same name when it fits (parses, in range), else its
    default. Returns the query parameters that were ignored, each with what it
    may be.
    """
    ignored = []
    for name, param in params.items():
        key = prefix + name
        if key in st.session_state:
            continue
        value = param.default
        if read_query and name in st.query_params:
            try:
                value = param.decode(st.query_params[name])
            except ValueError:
                ignored.append(Ignored(name, str(st.query_params[name]), param.allowed(name)))
        st.session_state[key] = list(value) if isinstance(value, list) else value
    return ignored


def set_state(values: Mapping[str, Any], prefix: str) -> None:
    """Write values into the controls (call from a callback or before the controls are drawn)."""
    for name, value in values.items():
        st.session_state[prefix + name] = list(value) if isinstance(value, list) else value


def state_values(params: Mapping[str, Param], prefix: str) -> dict:
    """The current value of every control (defaults for those not seeded yet)."""
    return {name: st.session_state.get(prefix + name, param.default) for name, param in params.items()}


def query_dict(values: Mapping[str, Any], params: Mapping[str, Param]) -> dict[str, str]:
    """The query parameters for ``values``: only those that differ from their default."""
    out = {}
    for name, param in params.items():
        if name in values and not _same(values[name], param.default):
            out[name] = param.encode(values[name])
    return out


def mirror_to_query(values: Mapping[str, Any], params: Mapping[str, Param]) -> None:
    """Make the URL show exactly the non-default values (no rerun is triggered)."""
    wanted = query_dict(values, params)
    if st.query_params.to_dict() != wanted:
        st.query_params.from_dict(wanted)


def _same(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        try:
            return a is not None and b is not None and float(a) == float(b)
        except (TypeError, ValueError):
            return False
    return a == b


def decode_query(params: Mapping[str, Param]) -> dict:
    """The values the URL gives for ``params`` (those that parse; the others are left out)."""
    out = {}
    for name, param in params.items():
        if name in st.query_params:
            try:
                out[name] = param.decode(st.query_params[name])
            except ValueError:
                pass
    return out


def seed_controls(params: Mapping[str, Param], prefix: str, *, presets: Container[str] = (),
                  preset_values: Callable[[str], Mapping[str, Any]] | None = None,
                  choice_key: str | None = None) -> list[Ignored]:
    """Seed a page's controls: a ``?preset=NAME`` link first, then the URL's own values.

    A preset fills the controls with ``preset_values(NAME)`` and leaves the
    URL (the page mirrors its values instead); the preset box (``choice_key``)
    then shows the preset it loaded. Returns the query parameters
    that were ignored (:func:`init_state`).
    """
    name = st.query_params.get("preset")
    if preset_values is not None and name in presets:
        set_state(preset_values(name), prefix)
        if choice_key is not None:
            st.session_state[choice_key] = name
        del st.query_params["preset"]
    return init_state(params, prefix)


def current_values(params: Mapping[str, Param], prefix: str) -> dict:
    """Every control's value now, mirrored into the URL (only the non-default ones appear)."""
    values = state_values(params, prefix)
    mirror_to_query(values, params)
    return values
