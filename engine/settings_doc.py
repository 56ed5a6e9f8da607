"""A configuration's docstring, generated from its fields' declarations (:func:`engine.settings.setting`).

``help(dpbo.FboConfig)`` then lists every field with its type, default, allowed values and meaning, from the
same ``help`` and ``label`` the command line's ``--help`` and the pages show: one declaration, no copy.
"""

from __future__ import annotations

import dataclasses
import inspect
import textwrap

from engine.settings import flag_of, spec
from engine.validation import shown

INDENT = "    "


def _kind(s, optional: bool) -> str:
    name = s.kind.__name__
    return f"{name} or None" if optional else name


def _allowed(s) -> str:
    """The values a field takes, as its check states them ("" when any value of its kind is fine)."""
    if s.choices is not None:
        return "one of " + ", ".join(str(c) for c in s.choices)
    if s.kind is bool or (s.low is None and s.high is None):
        return ""
    if s.low is not None and s.high is not None:
        return (f"in {'(' if s.low_open else '['}{shown(s.low)}, {shown(s.high)}{')' if s.high_open else ']'}")
    if s.low is not None:
        return f"{'>' if s.low_open else '>='} {shown(s.low)}"
    return f"{'<' if s.high_open else '<='} {shown(s.high)}"


def meaning(name: str, s, default=None) -> str:
    """One field's meaning: its help (else its label), then the values it takes. A flag that is on by default is
    described by its label, its help being the command line's ``--no-...`` option's."""
    if s.kind is bool and default is True and s.label:
        return f"{s.label} (False: {s.help or 'off'})."
    text = (s.help or s.label or name).strip()
    allowed = _allowed(s)
    return f"{text.rstrip('.')}{f'; {allowed}' if allowed else ''}."


def fields_section(cls) -> str:
    """The numpydoc "Parameters" section of a configuration dataclass: every declared field."""
    lines = ["Parameters", "----------"]
    for field in dataclasses.fields(cls):
        s = spec(field)
        if s is None:
            continue
        default = field.default
        head = f"{field.name} : {_kind(s, s.optional)}, default {default!r}"
        lines.append(head)
        body = meaning(field.name, s, default)
        if s.internal is None:
            body += f" Command line: {flag_of(field.name, s, default)}."
        lines += textwrap.wrap(body, 100, initial_indent=INDENT, subsequent_indent=INDENT)
    return "\n".join(lines)


def documented(cls):
    """Class decorator (above ``@dataclass``): append :func:`fields_section` to the class's docstring."""
    summary = inspect.cleandoc(cls.__doc__ or "")
    cls.__doc__ = f"{summary}\n\n{fields_section(cls)}\n"
    return cls
