"""Each configuration field declared once: its default, bounds, choices, label and help.

A tool's configuration dataclass declares every field with :func:`setting`;
everything else is derived from that one declaration:

- validation (:func:`validate`, called from the config's ``__post_init__``),
  with the sentences of :mod:`engine.validation`;
- the command-line option, its help and the args -> config mapping
  (:func:`add_config_arguments`, :func:`values_from_args`), and the command
  line that reproduces a configuration (:func:`command_line`);
- the pages' link parameters (``ui.kit.state.params_of`` reads :func:`spec`);
- the sweep's known settings (the dataclass fields themselves).

Rules that tie two fields together stay as code in the config's
``__post_init__``. A field deliberately absent from the pages or the command
line says why with ``internal="reason"``.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import numbers
import re
import shlex
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from engine.validation import ConfigError, check_choice, check_int, check_range, shown

KEY = "dpbo_setting"
SEED_MAX = 2**31 - 2  # seeds are numpy seeds below 2^31 - 1 (the sweep derives them the same way)
KINDS = (bool, int, float, str)
WHOLE_MAX = 2**53     # whole numbers beyond this are not exact as floats: no setting needs one
CONFIG_MAX_BYTES = 1 << 20   # a configuration file (the pages' exports are a few kB)
CONFIG_MAX_DEPTH = 8         # nesting of a configuration file ({"lines": [{"config": {...}}]} is 4)


class _Unset:
    def __repr__(self):
        return "UNSET"


UNSET = _Unset()   # cli_default not given: the field's own default


@dataclass(frozen=True)
class Spec:
    """What one field is: see :func:`setting` for the meaning of each attribute."""

    kind: type
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple | None = None
    optional: bool = False
    label: str = ""
    help: str = ""
    noun: str | None = None
    flag: str | None = None
    cli_type: type | None = None
    cli_default: Any = UNSET
    link: tuple | None = None
    when: Callable | None = None
    check: Callable | None = None
    internal: str | None = None
    not_on_page: str | None = None
    page_param: str | None = None

    def link_bounds(self) -> tuple:
        """(low, high) a page link may set: ``link`` when given, else the validator's (inclusive) bounds."""
        if self.link is not None:
            return self.link
        return self.low, self.high


def setting(default, *, kind: type | None = None, low=None, high=None, low_open: bool = False,
            high_open: bool = False, choices=None, optional: bool | None = None, label: str = "", help: str = "",
            noun: str | None = None, flag: str | None = None, cli_type: type | None = None,
            cli_default=UNSET, link: tuple | None = None, when: Callable | None = None,
            check: Callable | None = None, internal: str | None = None, not_on_page: str | None = None,
            page_param: str | None = None):
    """A dataclass field whose metadata says how to check, show and parse it.

    ``kind`` (bool, int, float, str; default: the default's type) and ``low``/``high`` bound a number
    (``low_open``/``high_open`` exclude the bound); ``choices`` lists a string's values; ``optional`` allows None
    (default: when the default is None). ``label`` and ``help`` describe it on pages and the command line; ``noun``
    is the name error sentences use (default: the field's name). ``flag`` is the CLI option (default
    ``--field-name``; a bool flag that defaults to True is ``--no-field-name``); ``cli_type`` parses the option
    (default ``kind``) and ``cli_default`` is the value when the option is absent (default: the field's default).
    ``link`` = (low, high) bounds a page's link parameter when they differ from the validator's. ``when(config)``
    limits the check to the configs it concerns; ``check(config, value)`` replaces the generic check (a rule of its
    own wording). ``internal="reason"``: deliberately on no page or CLI; ``not_on_page="reason"``: on the command
    line (and in sweeps) but on no page; ``page_param``: the page's link parameter that sets this field when it is
    not the field's own name (e.g. FboConfig's ``algorithm`` is one of the comparison's ``algorithms``).
    """
    if kind is None:
        kind = type(default)
        if kind not in KINDS:
            raise TypeError(f"setting({default!r}): give kind=")
    spec = Spec(kind=kind, low=low, high=high, low_open=low_open, high_open=high_open,
                choices=None if choices is None else tuple(choices),
                optional=default is None if optional is None else optional, label=label, help=help, noun=noun,
                flag=flag, cli_type=cli_type, cli_default=cli_default, link=link, when=when, check=check,
                internal=internal, not_on_page=not_on_page, page_param=page_param)
    return dataclasses.field(default=default, metadata={KEY: spec})


def spec(field: dataclasses.Field) -> Spec | None:
    return field.metadata.get(KEY)


def specs(cls) -> dict[str, Spec]:
    """Every declared field of a configuration class (or instance) -> its :class:`Spec`."""
    return {f.name: spec(f) for f in dataclasses.fields(cls) if spec(f) is not None}


_declared = functools.lru_cache(maxsize=None)(lambda cls: tuple(specs(cls).items()))   # validate's, per class


def defaults(cls) -> dict:
    return {f.name: f.default for f in dataclasses.fields(cls) if f.default is not dataclasses.MISSING}


# ------------------------------------------------------------------ validation

def typed(name: str, value, s: Spec):
    """``value`` as its field's declared kind, before any bound is checked (raises ConfigError naming the field).

    A flag takes true or false; a number takes a number (a whole one for an int field: 2.0 becomes 2, 2.5 is
    refused), never text such as ``"10"``; a choice or a text takes text. Only the text of a link or a command
    line is read as a number (:func:`engine.validation.parse_number`), by the page or the parser, before here.
    """
    noun = s.noun or name
    if s.kind is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{noun} must be true or false, got {shown(value)}.", name)
        return value
    if s.kind in (int, float):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise ConfigError(f"{noun} must be a number, got {shown(value)}.", name)
        if isinstance(value, numbers.Integral):
            value = int(value)
            if s.kind is int and abs(value) > WHOLE_MAX:
                bound = s.high if s.high is not None else WHOLE_MAX
                raise ConfigError(f"{noun} must be at most {bound:,.0f}, got {shown(value)}.", name)
            return value
        value = float(value)
        if s.kind is int and math.isfinite(value) and value.is_integer():
            if abs(value) > WHOLE_MAX:
                bound = s.high if s.high is not None else WHOLE_MAX
                raise ConfigError(f"{noun} must be at most {bound:,.0f}, got {value:g}.", name)
            return int(value)
        return value
    if not isinstance(value, str):
        raise ConfigError(f"{noun} must be text, got {shown(value)}.", name)
    return value


def check_value(name: str, value, s: Spec, *, kind_given: bool = False):
    """The generic check of one value against its spec; returns the value as its kind (``kind_given``: it is
    already, from :func:`typed`)."""
    value = value if kind_given else typed(name, value, s)
    if s.kind is bool:
        return value
    if s.kind is int:
        return check_int(name, value, s.low, s.high, name=s.noun)
    if s.kind is float:
        return check_range(name, value, s.low, s.high, low_open=s.low_open, high_open=s.high_open, name=s.noun)
    if s.choices is not None:
        return check_choice(name, value, s.choices, name=s.noun)
    return value


def validate(config, *, normalize: bool = False) -> None:
    """Check every declared field of ``config`` (raises ConfigError naming the field).

    Every value is first given its declared kind (:func:`typed`; a whole number of an int field is stored as
    an int, so 2.0 iterations are 2); ``normalize`` also stores the checked value of the other fields (e.g.
    a float field's 1 as 1.0) on the frozen config.
    """
    for name, s in _declared(type(config)):
        value = getattr(config, name)
        if value is None and s.optional:
            continue
        value = typed(name, value, s)
        if s.kind is int:
            object.__setattr__(config, name, value)
        if s.when is not None and not s.when(config):
            continue
        checked = s.check(config, value) if s.check is not None else check_value(name, value, s, kind_given=True)
        if normalize:
            object.__setattr__(config, name, checked)


def from_dict(cls, data: Mapping):
    """``cls(**data)``, refusing names that are no setting of ``cls`` with one sentence."""
    unknown = sorted(set(data) - {f.name for f in dataclasses.fields(cls)})
    if unknown:
        raise ConfigError(f"Unknown setting(s): {', '.join(unknown)}.")
    return cls(**data)


# ------------------------------------------------------------------ command line

def flag_of(name: str, s: Spec, default=None) -> str:
    if s.flag:
        return s.flag
    return ("--no-" if s.kind is bool and default is True else "--") + name.replace("_", "-")


def public(cls) -> dict[str, Spec]:
    """The declared fields a person sets (not internal)."""
    return {name: s for name, s in specs(cls).items() if s.internal is None}


def _help(name: str, s: Spec, default) -> str:
    text = (s.help or s.label or "").replace("%", "%%")     # argparse formats help with %
    if s.kind is bool:
        return text
    shown = s.cli_default if s.cli_default is not UNSET else default
    if shown is None:
        return text
    suffix = f"default {shown:g}" if isinstance(shown, float) else f"default {shown}"
    return f"{text} ({suffix})" if text else suffix


def add_config_arguments(parser, cls, *, containers: Mapping | None = None, skip=()) -> None:
    """One option per public field of ``cls``; absent options stay None (see :func:`values_from_args`)."""
    base = defaults(cls)
    for name, s in public(cls).items():
        if name in skip:
            continue
        target = (containers or {}).get(name, parser)
        default = base.get(name)
        flag = flag_of(name, s, default)
        if s.kind is bool:
            target.add_argument(flag, dest=name, action="store_const", const=not default, default=None,
                                help=_help(name, s, default))
            continue
        kwargs = dict(dest=name, default=None, help=_help(name, s, default))
        if s.choices is not None:
            kwargs["metavar"] = "{" + ",".join(map(str, s.choices)) + "}"
        else:
            kwargs["type"] = s.cli_type or s.kind
        target.add_argument(flag, **kwargs)


def add_config_file_argument(parser) -> None:
    parser.add_argument("--config", dest="config_file", metavar="FILE", default=None,
                        help="a configuration JSON (as the pages export it); options given here override it")


def _read_bounded(path: str) -> str:
    """The text of a configuration file, at most :data:`CONFIG_MAX_BYTES` (``/dev/zero`` is not read forever)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(CONFIG_MAX_BYTES + 1)
    except FileNotFoundError:
        raise ConfigError(f"The configuration file {path} does not exist.", "config") from None
    except OSError as err:
        raise ConfigError(f"The configuration file {path} cannot be read ({err.__class__.__name__}).",
                          "config") from None
    if len(data) > CONFIG_MAX_BYTES:
        raise ConfigError(f"The configuration file {path} is larger than {CONFIG_MAX_BYTES // 1024:,} kB; a "
                          "configuration is a few kB.", "config")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"The configuration file {path} is not UTF-8 text.", "config") from None


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")


def _depth(text: str) -> int:
    """How deeply the JSON ``text`` nests its arrays and objects (strings skipped), before parsing it."""
    depth = deepest = 0
    for match in _BRACKET.finditer(_STRING.sub('""', text)):
        depth += 1 if match.group() in "[{" else -1
        deepest = max(deepest, depth)
    return deepest


def _no_constant(name: str):
    raise ValueError(name)


def _parsed(path: str):
    """The JSON a configuration file holds, read within its bounds (one sentence on a bad file)."""
    text = _read_bounded(path)
    if _depth(text) > CONFIG_MAX_DEPTH:
        raise ConfigError(f"The configuration file {path} nests more than {CONFIG_MAX_DEPTH} levels; a "
                          "configuration is one object of settings.", "config")
    try:
        return json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as err:
        raise ConfigError(f"The configuration file {path} is not JSON (line {err.lineno}).", "config") from None
    except (ValueError, RecursionError):    # NaN or Infinity, a number of more than 4,300 digits
        raise ConfigError(f"The configuration file {path} is not strict JSON (a number it holds is not finite "
                          "or too long).", "config") from None


def config_line_labels(path: str) -> list[str]:
    """The labels of the lines of a page's export ``{"lines": [...]}``; [] for a file of one configuration."""
    data = _parsed(path)
    lines = data.get("lines") if isinstance(data, dict) else None
    return [str(line.get("label") or f"line {i + 1}") if isinstance(line, dict) else f"line {i + 1}"
            for i, line in enumerate(lines)] if isinstance(lines, list) else []


def read_config_file(path: str, cls, line: int | None = None) -> dict:
    """The settings of a configuration JSON, each as its field's kind (one sentence on a bad file).

    A JSON object of settings, ``{"config": {...}}`` or a page's export ``{"lines": [{"config": {...}}, ...]}``
    (its line ``line``, from 0, or its only line), within :func:`_parsed`'s bounds; each value typed by
    :func:`typed` (a number is a JSON number, never text; the bounds are the config's).
    """
    data = _parsed(path)
    if isinstance(data, dict) and isinstance(data.get("lines"), list):
        if line is None and len(data["lines"]) != 1:
            raise ConfigError(f"The configuration file {path} holds {len(data['lines'])} lines; name one.",
                              "config")
        data = data["lines"][0 if line is None else line]
    if isinstance(data, dict) and isinstance(data.get("config"), dict):
        data = data["config"]
    if not isinstance(data, dict):
        raise ConfigError(f"The configuration file {path} must hold a JSON object of settings.", "config")
    unknown = sorted(set(data) - {f.name for f in dataclasses.fields(cls)})
    if unknown:
        listed = ", ".join(shown(name)[1:-1] for name in unknown[:5]) + (", ..." if len(unknown) > 5 else "")
        raise ConfigError(f"Unknown setting(s) in {path}: {listed}.", unknown[0])
    declared = specs(cls)
    out = {}
    for name, value in data.items():
        s = declared.get(name)        # an internal field too: the pages' exports hold the whole configuration
        out[name] = value if s is None or (value is None and s.optional) else typed(name, value, s)
    return out


def values_from_args(args, cls) -> dict:
    """The settings the command line gives: the CLI defaults, then ``--config FILE``, then the options given."""
    values = {}
    for name, s in public(cls).items():
        if s.cli_default is not UNSET:
            values[name] = s.cli_default
    path = getattr(args, "config_file", None)
    if path:
        values.update(read_config_file(path, cls, getattr(args, "config_line", None)))
    for name in public(cls):
        given = getattr(args, name, None)
        if given is not None:
            values[name] = given
    return values


def _format(value) -> str:
    if isinstance(value, float):
        text = repr(value)
        return text[:-2] if text.endswith(".0") and "e" not in text else text
    return str(value)


def command_line(tool: str, config, *, omit=()) -> str:
    """``python -m engine TOOL --option value ...`` reproducing ``config`` (only the non-default settings).

    Fields the CLI fills differently when absent (``cli_default``) are written whenever they differ from that.
    """
    base = defaults(type(config))
    words = ["python", "-m", "engine", tool]
    for name, s in public(type(config)).items():
        if name in omit:
            continue
        value = getattr(config, name)
        absent = s.cli_default if s.cli_default is not UNSET else base.get(name)
        if _same(value, absent):
            continue
        if s.kind is bool:
            if value != base.get(name):
                words.append(flag_of(name, s, base.get(name)))
            continue
        if value is None:
            continue
        words += [flag_of(name, s, base.get(name)), _format(value)]
    return " ".join(shlex.quote(word) for word in words)


def _same(a, b) -> bool:
    """Equal values of one setting (1 and 1.0 alike; True never equals 1, None only None)."""
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    return a == b
