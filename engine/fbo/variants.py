"""A comparison of federated BO lines: several algorithms, and optionally one parameter at several values.

A comparison is a flat dict of *comparison values* (what the Federated BO
page's controls hold and its URL carries): ``algorithms``, the parameter to
``vary`` and its ``values`` as text, the ``budget_mode``, and every
:class:`FboConfig` field a person sets. This module turns it into labelled
FboConfigs, the lines of a chart (:func:`build_variants`); loads the paper
presets into it (:func:`preset_values`); and goes back from a configuration,
e.g. a sweep's setting, to the comparison that shows it
(:func:`comparison_values`) or from a comparison to a sweep's base
(:func:`sweep_base`).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Iterable, Mapping

from engine.fbo.config import ALGORITHMS, FboConfig
from engine.fbo.presets import PRESETS
from engine.privacy import DEFAULT_ACCOUNTANT
from engine.validation import ConfigError, parse_values

ALGORITHM_SHORT = {"ts": "TS", "fts": "FTS", "fts-de": "FTS-DE", "dp-fts": "DP-FTS", "dp-fts-de": "DP-FTS-DE",
                   "rgpe": "RGPE", "taf": "TAF"}
VARY_OPTIONS = ("none", "q", "z", "S", "P", "features")
VARY_KIND = {"q": float, "z": float, "S": float, "P": int, "features": int}
# Which algorithms a varied parameter changes (the others are run once).
VARY_APPLIES = {"q": "is_private", "z": "is_private", "S": "is_private", "P": "uses_de", "features": None}
BUDGET_MODES = ("none", "stop", "calibrate")
# Datasets whose agents are fixed by the data (one per landmine field).
FIXED_AGENT_DATASETS = ("landmine",)
# Non-private algorithms a sweep can draw as reference levels.
REFERENCE_ALGORITHMS = ("ts", "fts", "fts-de")
PRESET_RUNS = 3   # presets compare 4-5 lines: 3 runs each keep them quick

# The default comparison runs in a few seconds on a 2-core machine: the paper's
# synthetic task with fewer agents, iterations and runs than Fig. 2 (which the
# presets load). A None default marks an optional field (empty: the task's or
# the paper's value).
COMPARISON_DEFAULTS: dict[str, Any] = {
    "algorithms": ["ts", "dp-fts-de"], "vary": "none", "values": "", "dataset": "synthetic", "agents": 50,
    "iterations": 30, "runs": 3, "seed": 0, "features": 50, "q": 0.25, "z": 1.0, "S": 11.0, "P": 2,
    "sampling": "poisson", "accountant": DEFAULT_ACCOUNTANT, "delta": None, "delta_rule": "product",
    "budget_mode": "none", "budget": 8.0,
    "pt_schedule": "sqrt", "pt_constant": 0.5, "weights": "adaptive", "weight_a": 15.0, "weight_schedule": "synthetic",
    "local_exploration": True, "n_init": 10, "fts_variant": "target", "alpha": None, "objective_seed": 0,
    "domain": "table", "lengthscale": None, "noise_var": None, "other_observations": None, "dissimilarity": None,
    "targets": None,
}
CONFIG_FIELDS = tuple(name for name in COMPARISON_DEFAULTS
                      if name in FboConfig.__dataclass_fields__ and name not in ("budget",))


def base_config_fields(values: Mapping[str, Any]) -> dict:
    """FboConfig fields (without ``algorithm``) of a comparison."""
    fields = {name: values[name] for name in CONFIG_FIELDS}
    if values["dataset"] in FIXED_AGENT_DATASETS:
        fields["agents"] = None
    fields["budget"] = values["budget"] if values["budget_mode"] != "none" else None
    fields["calibrate_z"] = values["budget_mode"] == "calibrate"
    return fields


def build_variants(values: Mapping[str, Any]) -> list[tuple[str, FboConfig]]:
    """The (label, FboConfig) of every line to compare; raises ConfigError naming the field.

    Each chosen algorithm runs once, or once per compared value of the varied
    parameter when that parameter matters to it (q, z and S to the private
    algorithms, P to those with distributed exploration).
    """
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
                variants.append((f"{line_label(variant)} ({vary} = {value:g})", variant))
        else:
            variants.append((line_label(config), config))
    return variants


def line_label(config: FboConfig) -> str:
    """A line's name; in the FTS paper's setting also how many numbers each other agent sends (Sec. 3.2)."""
    short = ALGORITHM_SHORT[config.algorithm]
    if config.in_target_setting and config.message_length:
        return f"{short} (sends {config.message_length})"
    return short


def preset_values(name: str) -> dict:
    """The comparison that loads a paper preset (:mod:`engine.fbo.presets`).

    The preset's base settings fill the comparison; its list of compared
    settings becomes the algorithms plus one varied parameter. TS is added as
    the baseline. Runs are :data:`PRESET_RUNS` so the comparison stays quick.
    """
    preset = PRESETS[name]
    values = {key: (list(v) if isinstance(v, list) else v) for key, v in COMPARISON_DEFAULTS.items()}
    values.update({key: val for key, val in preset["base"].items() if key in COMPARISON_DEFAULTS})
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
    values["runs"] = PRESET_RUNS
    return values


def preset_runs_within(name: str, limits=None) -> int | None:
    """The runs per line with which preset ``name`` fits ``limits`` (:class:`engine.limits.HostLimits`, default
    the host's): :data:`PRESET_RUNS`, fewer when those do not fit, None when not even one run does.

    Priced as a first visitor's Run is, its task's table built first (whatever the cache holds), so every
    visitor of a host gets the same preset.
    """
    from engine.limits import HostLimits

    return _runs_within(name, HostLimits.from_env() if limits is None else limits)


@lru_cache(maxsize=256)
def _runs_within(name: str, limits) -> int | None:
    from engine.fbo.plan import lines_cost
    from engine.limits import check

    values = preset_values(name)
    for runs in range(PRESET_RUNS, 0, -1):
        configs = tuple(cfg for _, cfg in build_variants(dict(values, runs=runs)))
        try:
            check(lines_cost(configs, tables_ready=False), limits)
        except ConfigError:
            continue
        return runs
    return None


def _same_value(a, b) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return float(a) == float(b)
    return a == b


def preset_in_view(values: Mapping[str, Any], names: Iterable[str] = tuple(PRESETS)) -> str | None:
    """The paper preset among ``names`` whose comparison ``values`` show, or None.

    The number of runs and the seed are not part of a preset's identity: a
    preset run with more runs is still that figure; nor are the agents of a task that has its own (the page
    shows landmine's 29 where the preset leaves them to the task).
    """
    for name in names:
        wanted = preset_values(name)
        free = ("runs", "seed", "agents") if wanted["dataset"] in FIXED_AGENT_DATASETS else ("runs", "seed")
        if all(_same_value(values.get(key), value) for key, value in wanted.items() if key not in free):
            return name
    return None


def comparison_values(config: Mapping[str, Any], algorithms: Iterable[str] | None = None) -> dict:
    """The comparison values that show ``config`` (FboConfig fields, e.g. ``to_dict()`` or a sweep row).

    Fields a comparison has no place for are left out; ``algorithms``
    defaults to the config's own algorithm.
    """
    values = {name: config[name] for name in COMPARISON_DEFAULTS
              if name in config and (config[name] is not None or COMPARISON_DEFAULTS[name] is None)}
    if "algorithm" in config and algorithms is None:
        algorithms = [config["algorithm"]]
    if algorithms is not None:
        values["algorithms"] = list(algorithms)
    if config.get("budget") is not None:
        values["budget_mode"] = "calibrate" if config.get("calibrate_z") else "stop"
    elif "budget" in config:
        values.pop("budget", None)
    return values


def sweep_base(values: Mapping[str, Any]) -> tuple[dict, list[str]]:
    """A sweep's base configuration and reference algorithms from a comparison.

    The last private algorithm (else the last one) becomes the base; the
    non-private ones become reference levels. Runs, seed and an unused budget
    are left to the sweep.
    """
    values = dict(COMPARISON_DEFAULTS, **values)
    algorithms = list(values.get("algorithms") or ["dp-fts-de"])
    private = [a for a in algorithms if a.startswith("dp-")]
    base = {"algorithm": private[-1] if private else algorithms[-1]}
    for name, value in values.items():
        if name in FboConfig.__dataclass_fields__ and name not in ("runs", "seed", "budget") and value is not None:
            base[name] = value
    if base.get("dataset") in FIXED_AGENT_DATASETS:
        base["agents"] = None     # the task has its own agents (one per landmine field)
    if values.get("budget_mode") in ("stop", "calibrate"):
        base["budget"] = values.get("budget")
        base["calibrate_z"] = values.get("budget_mode") == "calibrate"
    refs = [a for a in algorithms if a in REFERENCE_ALGORITHMS]
    return base, refs
