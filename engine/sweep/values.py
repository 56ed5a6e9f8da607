"""The small vocabulary every part of a sweep shares: values, their text form, hashes and seeds.

- Parsing what a person writes (``q=0.15,0.25``, ``algorithm=fts``, one
  ``name = value`` per line) and writing it back.
- :func:`coerce`: giving a parsed value the type of the tool's field, so a
  table column never mixes 1 and 1.0.
- :func:`stable_hash` and :func:`derive_seed`: identities and seeds that do not
  depend on the process, the machine or the order cells run in.

Nothing here knows any tool: the spec and the adapters both build on it.
"""

from __future__ import annotations

import hashlib
import json
import re
import typing
from typing import Any, Mapping, Sequence

import numpy as np

from engine.validation import NUMBER, ConfigError, shown

MAX_DIGITS = 100        # characters of a number a person writes; Python refuses integers of over 4,300 digits


def plain(value):
    """A JSON-friendly scalar (numpy scalars to Python, floats kept exact)."""
    if isinstance(value, np.generic):
        return value.item()
    return value


def format_value(value) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def format_values(values: Sequence) -> str:
    return ", ".join(format_value(v) for v in values)


def setting_label(overrides: Mapping[str, Any]) -> str:
    """A short human label of what a setting changes, e.g. ``"q=0.35, z=1.6"``."""
    if not overrides:
        return "base"
    return ", ".join(f"{k}={format_value(v)}" for k, v in overrides.items())


def stable_hash(payload) -> str:
    """A short sha256 of a JSON description (sorted keys), stable across processes and machines."""
    text = json.dumps(payload, sort_keys=True, default=str, allow_nan=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def derive_seed(sweep_seed: int, replicate: int, params: Mapping[str, Any] | None = None) -> int:
    """The engine seed of one cell: a function of the sweep seed, the replicate and optionally the setting."""
    entropy = [int(sweep_seed), int(replicate)]
    if params is not None:
        entropy.append(int(stable_hash(params), 16))
    return int(np.random.SeedSequence(entropy).generate_state(1, dtype=np.uint32)[0] % (2**31 - 1))


def parse_value(text: str):
    """A command-line value: int, float (ASCII digits, :func:`engine.validation.parse_number`), true/false,
    none, else the string itself."""
    text = text.strip()
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    if low in ("nan", "+nan", "-nan"):
        raise ConfigError(f"{text!r} is not a usable number.")
    if low.lstrip("+-") in ("inf", "infinity"):
        return float(low)               # refused by the setting's check as not finite
    if not NUMBER.fullmatch(text):
        return text
    if len(text) > MAX_DIGITS:
        raise ConfigError(f"{shown(text)} is a number of {len(text):,} characters; write a number in at most "
                          f"{MAX_DIGITS} (e.g. 1e30).")
    if re.fullmatch(r"[+-]?[0-9]+", text):
        return int(text)
    return float(text)


def parse_assignment(text: str, *, many: bool) -> tuple[str, Any]:
    """``"name=value"`` (or ``"name=v1,v2,..."`` with ``many``) -> ``(name, value(s))``."""
    name, sep, rest = text.partition("=")
    name = name.strip()
    if not sep or not name or not rest.strip():
        form = "name=v1,v2,..." if many else "name=value"
        raise ConfigError(f"Write {text!r} as {form}.")
    if many:
        values = [parse_value(v) for v in rest.split(",") if v.strip()]
        if any(isinstance(v, float) for v in values):
            values = [float(v) if isinstance(v, int) and not isinstance(v, bool) else v for v in values]
        return name, tuple(values)
    return name, parse_value(rest)


def parse_setting(text: str) -> dict:
    """``"algorithm=fts,fts_variant=concurrent"`` -> ``{"algorithm": "fts", "fts_variant": "concurrent"}``."""
    out = {}
    for part in text.split(","):
        if part.strip():
            name, value = parse_assignment(part, many=False)
            out[name] = value
    if not out:
        raise ConfigError(f"Write the setting {text!r} as name=value,name=value.")
    return out


def parse_lines(text: str) -> dict:
    """Fixed settings written one ``name = value`` per line (blank lines and ``#`` comments ignored)."""
    out = {}
    for line in text.replace(";", "\n").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, value = parse_assignment(line, many=False)
            out[name] = value
    return out


def format_lines(values: Mapping[str, Any]) -> str:
    """The inverse of :func:`parse_lines`."""
    return "\n".join(f"{k} = {'none' if v is None else format_value(v)}" for k, v in values.items())


def annotation_kinds(annotation) -> set[str]:
    """The scalar kinds a dataclass field annotation allows ('float', 'int', 'bool', 'str', 'None')."""
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", str(annotation))
    if not isinstance(annotation, str):
        args = typing.get_args(annotation)
        if args:
            text = " | ".join(getattr(a, "__name__", str(a)) for a in args)
    kinds = set()
    for part in text.replace("Optional[", "").replace("]", "").split("|"):
        part = part.strip()
        kinds.add("None" if part in ("None", "NoneType") else part)
    return kinds


def coerce(value, kinds: set[str]):
    """Give a parsed value the field's type, so a column never mixes 1 and 1.0.

    Strings from a page or a CSV (``"0.25"``, ``"true"``) become numbers or
    booleans when the field asks for one.
    """
    if value is None:
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, str) and kinds & {"float", "int", "bool", "None"} and "str" not in kinds:
        value = parse_value(value)
        if value is None:
            return None
    if "bool" in kinds and isinstance(value, (int, float)) and not isinstance(value, bool) and value in (0, 1):
        return bool(value)
    if "float" in kinds and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if "int" in kinds and "float" not in kinds and isinstance(value, float) and value.is_integer():
        return int(value)
    return value
