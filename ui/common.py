"""Streamlit glue shared by the pages.

- :class:`Param`, :func:`init_state`, :func:`mirror_to_query`: every control
  takes its starting value from ``st.session_state``, seeded from the URL's
  query parameters, and the page writes its non-default values back to the
  URL, so a link reproduces the configuration.
- :class:`ErrorSlots`: a place under each control where a
  :class:`~engine.validation.ConfigError` sentence appears, chosen by the
  error's ``field``.
- :func:`max_work`: the host's size limit (env ``DPBO_MAX_WORK``).
- ``cached_*``: engine computations that are pure and worth caching across
  reruns and sessions (privacy accounting, calibration).
- :data:`FBO_PARAMS` and :func:`fbo_link_params`: the federated BO page's
  controls, so other pages can link to a configuration on it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

import numpy as np
import streamlit as st

from engine.fbo.config import (
    ALGORITHMS,
    DEFAULT_MAX_WORK,
    FboConfig,
    FTS_VARIANTS,
    PT_SCHEDULES,
    WEIGHT_SCHEDULES,
    WEIGHTS,
)
from engine.objectives.registry import DATASETS
from engine.privacy import (
    ACCOUNTANTS,
    SAMPLING,
    calibrate_q,
    calibrate_steps,
    calibrate_z,
    epsilon,
    epsilon_curve,
)
from engine.validation import ConfigError

ROOT = Path(__file__).resolve().parents[1]
MAX_WORK_ENV = "DPBO_MAX_WORK"

# ---------------------------------------------------------------- controls <-> URL


@dataclass(frozen=True)
class Param:
    """One control's value: its default, its type and, for a choice, the allowed values.

    ``kind`` is one of ``bool``, ``int``, ``float``, ``str`` or ``list`` (a list
    of strings, written to the URL joined by commas). ``optional`` allows
    ``None`` (an empty field), written to the URL as an empty value.
    """

    default: Any
    kind: type
    choices: tuple | None = None
    optional: bool = False

    def decode(self, text: str):
        """Parse a query-parameter string; raises ValueError when it does not fit."""
        text = str(text).strip()
        if self.optional and text in ("", "none", "None"):
            return None
        if self.kind is bool:
            lowered = text.lower()
            if lowered in ("1", "true", "yes", "on"):
                return True
            if lowered in ("0", "false", "no", "off"):
                return False
            raise ValueError(text)
        if self.kind is int:
            number = float(text)
            if number != int(number):
                raise ValueError(text)
            return int(number)
        if self.kind is float:
            number = float(text)
            if not np.isfinite(number):
                raise ValueError(text)
            return number
        if self.kind is list:
            items = [item.strip() for item in text.split(",") if item.strip()]
            if self.choices is not None and any(item not in self.choices for item in items):
                raise ValueError(text)
            return items
        if self.choices is not None and text not in self.choices:
            raise ValueError(text)
        return text

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


def init_state(params: Mapping[str, Param], prefix: str, *, read_query: bool = True) -> list[str]:
    """Seed ``st.session_state[prefix + name]`` for every control not yet on screen.

    A control that already has a value keeps it; a new one takes the URL's
    query parameter of the same name when it parses, else its default. Returns
    the names of query parameters that were ignored because they did not parse.
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
                ignored.append(name)
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


# ---------------------------------------------------------------- errors next to controls


class ErrorSlots:
    """Empty places under controls where a ConfigError sentence can appear.

    Call :meth:`under` right after drawing a control, with the field names a
    ConfigError may carry for it (``ConfigError.field`` is either the config
    field, e.g. ``"P"``, or the human name the check used, e.g.
    ``"number of agents N"``). :meth:`show` puts the sentence under the
    matching control, or in the fallback slot.
    """

    def __init__(self):
        self._slots: dict[str, Any] = {}
        self._fallback = None

    def under(self, *fields: str) -> None:
        slot = st.empty()
        for name in fields:
            self._slots.setdefault(name, slot)

    def fallback(self) -> None:
        """Mark the current position as the place for errors of unknown fields."""
        self._fallback = st.empty()

    def show(self, err: ConfigError) -> None:
        slot = self._slots.get(getattr(err, "field", None)) or self._fallback
        (slot if slot is not None else st).error(str(err), icon=":material/error:")

    def has(self, field: str | None) -> bool:
        return field in self._slots


# ---------------------------------------------------------------- host limits and links


def max_work() -> int:
    """The largest agents x iterations x runs a visitor may start (env DPBO_MAX_WORK)."""
    raw = os.environ.get(MAX_WORK_ENV, "").strip()
    if raw:
        try:
            value = int(float(raw))
        except ValueError:
            value = 0
        if value > 0:
            return value
    return DEFAULT_MAX_WORK


def page_exists(page: str) -> bool:
    return (ROOT / page).is_file()


def page_link(page: str, label: str, *, icon: str | None = None, help: str | None = None,
              query_params: Mapping[str, str] | None = None) -> bool:
    """``st.page_link`` when the page file exists, else a grey note; returns whether it linked."""
    if not page_exists(page):
        st.caption(f"{label} (not available in this installation)")
        return False
    st.page_link(page, label=label, icon=icon, help=help, query_params=dict(query_params or {}))
    return True


# ---------------------------------------------------------------- cached privacy accounting


@st.cache_data(show_spinner=False, max_entries=2048)
def cached_epsilon(q: float, z: float, steps: int, delta: float, accountant: str,
                   sampling: str = "poisson", n_agents: int | None = None) -> float:
    return epsilon(q, z, steps, delta, accountant, sampling=sampling, n_agents=n_agents)


@st.cache_data(show_spinner=False, max_entries=512)
def cached_epsilon_curve(q: float, z: float, steps: int, delta: float, accountant: str,
                         sampling: str = "poisson", n_agents: int | None = None) -> np.ndarray:
    return epsilon_curve(q, z, steps, delta, accountant, sampling=sampling, n_agents=n_agents)


@st.cache_data(show_spinner=False, max_entries=512)
def cached_calibrate_z(target: float, q: float, steps: int, delta: float, accountant: str,
                       sampling: str = "poisson", n_agents: int | None = None) -> float:
    return calibrate_z(target, q, steps, delta, accountant, sampling=sampling, n_agents=n_agents)


@st.cache_data(show_spinner=False, max_entries=512)
def cached_calibrate_q(target: float, z: float, steps: int, delta: float, accountant: str,
                       sampling: str = "poisson", n_agents: int | None = None) -> float:
    return calibrate_q(target, z, steps, delta, accountant, sampling=sampling, n_agents=n_agents)


@st.cache_data(show_spinner=False, max_entries=512)
def cached_calibrate_steps(target: float, q: float, z: float, delta: float, accountant: str,
                           sampling: str = "poisson", n_agents: int | None = None) -> int:
    return calibrate_steps(target, q, z, delta, accountant, sampling=sampling, n_agents=n_agents)


# ---------------------------------------------------------------- the federated BO page's controls

FBO_PAGE = "pages/1_Federated_BO.py"
FBO_PREFIX = "fbo_"
VARY_OPTIONS = ("none", "q", "z", "S", "P", "features")
BUDGET_MODES = ("none", "stop", "calibrate")

# Defaults run in a few seconds on a 2-core machine: the paper's synthetic task
# with fewer agents, iterations and runs than Fig. 2 (which the presets load).
FBO_PARAMS: dict[str, Param] = {
    "algorithms": Param(["ts", "dp-fts-de"], list, ALGORITHMS),
    "vary": Param("none", str, VARY_OPTIONS),
    "values": Param("", str),
    "dataset": Param("synthetic", str, tuple(DATASETS)),
    "agents": Param(50, int),
    "iterations": Param(30, int),
    "runs": Param(3, int),
    "seed": Param(0, int),
    "features": Param(50, int),
    "q": Param(0.25, float),
    "z": Param(1.0, float),
    "S": Param(11.0, float),
    "P": Param(2, int),
    "sampling": Param("poisson", str, SAMPLING),
    "accountant": Param("ma", str, ACCOUNTANTS),
    "delta": Param(None, float, optional=True),
    "budget_mode": Param("none", str, BUDGET_MODES),
    "budget": Param(8.0, float),
    "pt_schedule": Param("sqrt", str, PT_SCHEDULES),
    "pt_constant": Param(0.5, float),
    "weights": Param("adaptive", str, WEIGHTS),
    "weight_a": Param(15.0, float),
    "weight_schedule": Param("synthetic", str, WEIGHT_SCHEDULES),
    "local_exploration": Param(True, bool),
    "n_init": Param(10, int),
    "fts_variant": Param("target", str, FTS_VARIANTS),
    "alpha": Param(None, float, optional=True),
    "objective_seed": Param(0, int),
    "domain": Param("table", str, ("table", "continuous")),
    "lengthscale": Param(None, float, optional=True),
    "noise_var": Param(None, float, optional=True),
}


def fbo_link_params(config: Mapping[str, Any], algorithms: Iterable[str] | None = None) -> dict[str, str]:
    """Query parameters that open the federated BO page on ``config``.

    ``config`` holds FboConfig fields (e.g. ``FboConfig.to_dict()`` or a sweep
    row); fields the page has no control for are left out. Use with
    ``st.page_link(FBO_PAGE, query_params=...)``.
    """
    values = {name: config[name] for name in FBO_PARAMS
              if name in config and (config[name] is not None or FBO_PARAMS[name].optional)}
    if "algorithm" in config and algorithms is None:
        algorithms = [config["algorithm"]]
    if algorithms is not None:
        values["algorithms"] = list(algorithms)
    if config.get("budget") is not None:
        values["budget_mode"] = "calibrate" if config.get("calibrate_z") else "stop"
    elif "budget" in config:
        values.pop("budget", None)
    return query_dict(values, FBO_PARAMS)


ALGORITHM_SHORT = {"ts": "TS", "fts": "FTS", "fts-de": "FTS-DE", "dp-fts": "DP-FTS", "dp-fts-de": "DP-FTS-DE"}
VARY_KIND = {"q": float, "z": float, "S": float, "P": int, "features": int}
# Which algorithms a varied parameter changes (the others are run once).
VARY_APPLIES = {"q": "is_private", "z": "is_private", "S": "is_private", "P": "uses_de", "features": None}
# Datasets whose agents are fixed by the data (one per landmine field).
FIXED_AGENT_DATASETS = ("landmine",)


def parse_values(text: str, kind: type, name: str) -> list:
    """'0.15, 0.25 0.5' -> [0.15, 0.25, 0.5]; raises ConfigError (field ``values``)."""
    items = [item for item in str(text).replace(";", ",").replace(" ", ",").split(",") if item]
    if not items:
        raise ConfigError(f"Give the values of {name} to compare, separated by commas (e.g. 0.15, 0.25, 0.5).",
                          "values")
    out = []
    for item in items:
        try:
            number = float(item)
        except ValueError:
            raise ConfigError(f"'{item}' is not a number; give the values of {name} separated by commas.",
                              "values") from None
        if kind is int:
            if number != int(number):
                raise ConfigError(f"{name} takes whole numbers, got {item}.", "values")
            number = int(number)
        if number not in out:
            out.append(number)
    if len(out) > 6:
        raise ConfigError(f"Compare at most 6 values of {name} at once, got {len(out)}.", "values")
    return out


def base_config_fields(values: Mapping[str, Any]) -> dict:
    """FboConfig fields (without ``algorithm``) from the federated BO page's control values."""
    budget_mode = values["budget_mode"]
    fields = {name: values[name] for name in (
        "dataset", "agents", "iterations", "runs", "seed", "features", "q", "z", "S", "P", "sampling", "accountant",
        "delta", "pt_schedule", "pt_constant", "weights", "weight_a", "weight_schedule", "local_exploration",
        "n_init", "fts_variant", "alpha", "objective_seed", "domain", "lengthscale", "noise_var")}
    if values["dataset"] in FIXED_AGENT_DATASETS:
        fields["agents"] = None
    fields["budget"] = values["budget"] if budget_mode != "none" else None
    fields["calibrate_z"] = budget_mode == "calibrate"
    return fields


def build_variants(values: Mapping[str, Any]) -> list[tuple[str, FboConfig]]:
    """The (label, FboConfig) of every line to compare; raises ConfigError naming the control.

    Each chosen algorithm runs once, or once per compared value of the varied
    parameter when that parameter matters to it (q, z and S to the private
    algorithms, P to those with distributed exploration).
    """
    from engine.fbo.config import FboConfig

    algorithms = [a for a in ALGORITHMS if a in values["algorithms"]]
    if not algorithms:
        raise ConfigError("Choose at least one algorithm to run.", "algorithms")
    base = base_config_fields(values)
    vary = values["vary"]
    compared = parse_values(values["values"], VARY_KIND[vary], vary) if vary != "none" else []
    variants = []
    for algorithm in algorithms:
        fields = dict(base, algorithm=algorithm)
        if not algorithm.startswith("dp-"):
            fields.update(budget=None, calibrate_z=False)
        config = FboConfig(**fields)
        applies = VARY_APPLIES.get(vary)
        if compared and (applies is None or getattr(config, applies)):
            for value in compared:
                try:
                    variant = config.replace(**{vary: value})
                except ConfigError as err:
                    raise ConfigError(f"Compared value {vary} = {value:g}: {err}", "values") from None
                variants.append((f"{ALGORITHM_SHORT[algorithm]} ({vary} = {value:g})", variant))
        else:
            variants.append((ALGORITHM_SHORT[algorithm], config))
    return variants


def preset_values(name: str) -> dict:
    """Control values that load a paper preset (engine.fbo.presets) on the federated BO page.

    The preset's base settings fill the controls; its list of compared
    settings becomes the algorithms plus one varied parameter. TS is added as
    the baseline. Runs are 3 so the comparison fits the default size limit.
    """
    from engine.fbo.presets import PRESETS

    preset = PRESETS[name]
    values = {key: param.default for key, param in FBO_PARAMS.items()}
    values.update({key: val for key, val in preset["base"].items() if key in FBO_PARAMS})
    algorithms = {preset["base"]["algorithm"], "ts"}
    varied: dict[str, list] = {}
    for entry in preset["compare"]:
        algorithms.add(entry.get("algorithm", preset["base"]["algorithm"]))
        for key, val in entry.items():
            if key != "algorithm" and key in VARY_KIND:
                varied.setdefault(key, [])
                if val not in varied[key]:
                    varied[key].append(val)
    values["algorithms"] = [a for a in ALGORITHMS if a in algorithms]
    if varied:
        key = next(iter(varied))
        values["vary"] = key
        values["values"] = ", ".join(f"{v:g}" for v in varied[key])
    values["runs"] = 3
    return values
