"""Headless contract: ``dpbo <tool> [--option value ...]`` (installed), or ``python -m engine <tool> ...``.

Every tool prints one JSON object on stdout and exits 0 (``{"lines": [...]}``, one object per line with its
``label``, when ``--config`` names a page's export of several lines); a bad option prints
one sentence on stderr and exits 2, never a traceback. Each tool lives in its
own module ``engine.cli.<tool>`` exposing ``HELP`` (one line),
``add_arguments(parser)``, ``cost(args)`` and ``run(args) -> dict``.

Pricing is done here, once for every tool: ``cost(args)`` returns the
:class:`~engine.limits.Cost` of what ``run(args)`` would compute, or
``Cost.free("why")`` for work that is light whatever its inputs (never None:
:func:`price` refuses a tool that forgets its price); :func:`main` checks it with :func:`engine.limits.check` under
:func:`host_limits` and refuses above the host's limits with one sentence
(exit 2) before anything heavy starts. The tool then runs under a cancel
token (:mod:`engine.cancel`) whose deadline is ``RUN_TIME_FACTOR`` times
``DPBO_MAX_SECONDS``, so a mispriced command stops with one sentence (exit 2)
instead of running on.

A tool that needs an optional dependency the engine-only install leaves out
(Dask, pyarrow, Flower) says which extra installs it (:data:`EXTRAS`), in one
sentence.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import math
import os
import sys

from engine.cancel import TIME_LIMIT, Cancelled, CancelToken, cancellable
from engine.limits import RUN_TIME_FACTOR, SECONDS_ENV, Cost, HostLimits, check, format_seconds
from engine.settings import config_line_labels
from engine.validation import ConfigError, parse_number

# Optional dependencies (import name -> the extra of pyproject.toml that installs them).
EXTRAS = {"dask": "dask", "distributed": "dask", "pyarrow": "dask", "flwr": "flower", "plotly": "plots",
          "streamlit": "dashboard"}

TOOLS = ("fbo", "privacy", "hype", "pogpucb", "data", "sweep", "audit", "reproduce", "export", "advise")


def host_limits() -> HostLimits:
    """The command line's limits: memory always, CPU time only when the host sets DPBO_MAX_SECONDS."""
    return HostLimits.from_env(default_seconds=None)


# Options that name a folder set the environment variable of the same meaning for this process only
# (the command's own user chose them). The engine reads paths from the environment alone, so no
# configuration, sweep setting or page can name one.
PATH_OPTIONS = {"data_dir": "DPBO_DATA_DIR", "cache_dir": "DPBO_CACHE_DIR"}


def paths_to_environment(args) -> dict:
    """Set the variables of the path options given; returns what they held before (for :func:`main` to restore)."""
    before = {}
    for option, variable in PATH_OPTIONS.items():
        value = getattr(args, option, None)
        if value:
            before[variable] = os.environ.get(variable)
            os.environ[variable] = os.path.abspath(os.path.expanduser(value))
    return before


def restore_environment(before: dict) -> None:
    for variable, value in before.items():
        if value is None:
            os.environ.pop(variable, None)
        else:
            os.environ[variable] = value


class UsageError(Exception):
    """The command line itself is malformed (unknown option, missing value)."""


def _ascii_int(text: str) -> int:
    return parse_number(text, int)


def _ascii_float(text: str) -> float:
    if text.strip().lower().lstrip("+-") in ("nan", "inf", "infinity"):
        return float(text)          # the setting's check says why it is refused
    return parse_number(text, float)


class OneLineParser(argparse.ArgumentParser):
    """argparse that reports problems as one sentence instead of usage + error.

    Every ``type=int`` / ``type=float`` option reads its value in the one number form of
    :func:`engine.validation.parse_number` (ASCII digits; ``1e3`` is a whole number), not with Python's
    ``int()``/``float()``, which also read other scripts' digits, underscores, ``inf`` and ``nan``.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.register("type", int, _ascii_int)
        self.register("type", float, _ascii_float)

    def error(self, message):  # argparse calls this for a malformed command line
        raise UsageError(message[0].upper() + message[1:].rstrip(".") + ".")


def _load(tool: str):
    return importlib.import_module(f"engine.cli.{tool.replace('-', '_')}")


def program_name() -> str:
    """How the command was called: ``dpbo`` (the installed command) or ``python -m engine``."""
    return "dpbo" if os.path.basename(sys.argv[0] or "") == "dpbo" else "python -m engine"


def missing_extra(err: ModuleNotFoundError) -> str | None:
    """One sentence for an optional dependency that is not installed, or None for any other missing module."""
    top = (err.name or "").split(".")[0]
    if top not in EXTRAS:
        return None
    return (f"This command needs {top}, which the engine-only install leaves out: install the extra "
            f"\"{EXTRAS[top]}\" (in the project's checkout: pip install \".[{EXTRAS[top]}]\").")


def require(module: str) -> None:
    """Stop before any work when the optional ``module`` is not installed (:func:`main` names its extra)."""
    if importlib.util.find_spec(module) is None:
        raise ModuleNotFoundError(f"No module named {module!r}", name=module)


def build_parser() -> OneLineParser:
    parser = OneLineParser(prog=program_name(), description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="tool", metavar="TOOL", parser_class=OneLineParser)
    for tool in TOOLS:
        try:
            module = _load(tool)
        except ModuleNotFoundError as err:
            if err.name != f"engine.cli.{tool}":
                raise
            continue
        module.add_arguments(sub.add_parser(tool, help=module.HELP, description=module.HELP))
    return parser


def _jsonable(value):
    """Turn numpy scalars/arrays and non-finite floats into strict JSON values."""
    try:
        import numpy as np
    except ImportError:  # pragma: no cover - numpy is a hard dependency
        np = None
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if np is not None and isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if np is not None and isinstance(value, np.generic):
        return _jsonable(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def to_json(payload: dict) -> str:
    return json.dumps(_jsonable(payload), allow_nan=False)


def price(module, args, limits: HostLimits) -> Cost:
    """Check what ``module.run(args)`` would cost against ``limits`` (ConfigError above them).

    Every command has a price: a ``cost(args)`` that returns anything but a :class:`Cost` (a forgotten
    door) is a programming error, raised before ``run`` starts. ``args`` may be a list (the lines of one
    configuration file, :func:`per_line`): their costs add up.
    """
    costs = [module.cost(one) for one in (args if isinstance(args, list) else [args])]
    for cost in costs:
        if not isinstance(cost, Cost):
            raise TypeError(f"{module.__name__}.cost(args) returned {cost!r}: return the Cost of the work, or "
                            "Cost.free('why') for a command that does no heavy work")
    cost = sum(costs[1:], costs[0])
    if not cost.is_free:
        what = f"These {len(costs)} lines" if len(costs) > 1 else getattr(module, "WHAT", "This run")
        check(cost, limits, what=what, fewer="lines" if len(costs) > 1 else None)
    return cost


def per_line(args) -> list[tuple[str, argparse.Namespace]] | None:
    """A page's export of several lines given to ``--config``: (label, the arguments of that line) for each
    line, the options given on the command line applying to every line; None for a file of one configuration."""
    path = getattr(args, "config_file", None)
    labels = config_line_labels(path) if path else []
    if len(labels) < 2:
        return None
    return [(label, argparse.Namespace(**dict(vars(args), config_line=i))) for i, label in enumerate(labels)]


def stopped_sentence(limits: HostLimits) -> str:
    return (f"The command was stopped after {format_seconds(limits.run_seconds)}, {RUN_TIME_FACTOR:g} times the "
            f"limit {SECONDS_ENV}={limits.max_seconds:g}; ask for less work or raise the limit.")


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    before = {}
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if args.tool is None:
            raise UsageError(f"Name a tool: one of {', '.join(TOOLS)} ({program_name()} TOOL --help).")
        before = paths_to_environment(args)
        module = _load(args.tool)
        limits = host_limits()
        lines = per_line(args)
        price(module, [one for _, one in lines] if lines else args, limits)
        with cancellable(CancelToken(limits.run_seconds)):
            if lines:       # every line of the export, each as its own JSON object under its label
                payload = {"lines": [dict(label=label, **module.run(one)) for label, one in lines]}
            else:
                payload = module.run(args)
    except (UsageError, ConfigError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except Cancelled as err:
        print(f"error: {stopped_sentence(limits) if err.reason == TIME_LIMIT else err}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as err:
        if missing_extra(err) is None:
            raise
        print(f"error: {missing_extra(err)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted.", file=sys.stderr)
        return 130
    finally:
        restore_environment(before)     # main() may run inside another program (tests): leave its environment
    print(to_json(payload))
    return 0
