"""What a sweep is: a base configuration, the parameters it varies, and the seeds.

A sweep of one tool is a list of *settings* (full parameter dicts) times
``replicates`` seeds. Each (setting, replicate) pair is a *cell*: one call of
the tool's engine with ``runs`` runs, giving one table row per run.

Settings come from axes (parameter -> values) combined either as a full grid
or one parameter at a time around the base (the design of the DP-FTS-DE
paper's Fig. 3a: z varies at q = 0.35, q varies at z = 1), plus explicit
settings and *references* (e.g. the non-private algorithms drawn as levels).

Seeds never depend on execution order: a cell's seed is derived from the sweep
seed and the replicate index (``paired_seeds``, so every setting sees the same
random numbers and differences between settings are not seed noise) or, with
``paired_seeds=False``, also from the setting's parameters.
"""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol

from engine.sweep.values import derive_seed, format_value, plain, setting_label, stable_hash
from engine.validation import ConfigError, check_choice, check_int

COMBINE = ("grid", "one-at-a-time")
# Bounds that keep a spec finite before anything is priced: the cells are listed (and validated) one by one.
MAX_CELLS = 2000
MAX_RUNS = 1000
MAX_REPLICATES = 100


class ToolFields(Protocol):
    """What a spec needs to know about its tool (an :class:`engine.sweep.adapters.Adapter`)."""

    seed_field: str

    def defaults(self) -> dict: ...

    def coerce(self, params: dict) -> dict: ...

    def resolve(self, params: dict) -> dict: ...

    def runs_params(self, runs: int) -> dict: ...


@dataclass(frozen=True)
class Cell:
    """One engine call of a sweep: a full parameter dict and its seed.

    ``params`` holds every parameter of the tool's configuration, already
    resolved and validated by the tool's adapter, including the seed and the
    number of runs.
    """

    index: int             # position in the sweep (rows are ordered by it)
    role: str              # "setting" or "reference"
    setting: str           # human label of the overrides, e.g. "q=0.35, z=1"
    overrides: dict        # what this setting changes with respect to the base
    replicate: int
    seed: int
    runs: int
    params: dict
    key: str               # hash of tool + params: the identity used to resume

    @property
    def label(self) -> str:
        suffix = f" (seed {self.replicate + 1})" if self.replicate else ""
        return f"{self.setting}{suffix}"


@dataclass(frozen=True)
class SweepSpec:
    """A sweep of one tool.

    Parameters
    ----------
    tool
        Adapter name (``fbo``, ``hype``, ``pogpucb``, ``toy``).
    base
        Fixed parameters shared by every cell (the tool's defaults fill the rest).
    axes
        ``((name, (v1, v2, ...)), ...)``: the varied parameters and their values.
    combine
        ``"grid"``: every combination of the axes' values; ``"one-at-a-time"``:
        each axis varied alone with the others at their base values.
    settings
        Extra explicit settings (dicts of overrides) appended after the axes'.
    references
        Settings drawn as reference levels (e.g. non-private algorithms).
    runs
        Runs per cell (one table row each).
    replicates
        Seeds per setting (cells per setting).
    seed
        The sweep seed every cell seed is derived from.
    paired_seeds
        Give every setting the same seeds (common random numbers).
    """

    tool: str
    base: Mapping[str, Any] = field(default_factory=dict)
    axes: tuple = ()
    combine: str = "grid"
    settings: tuple = ()
    references: tuple = ()
    runs: int = 5
    replicates: int = 1
    seed: int = 0
    paired_seeds: bool = True
    label: str = ""

    def __post_init__(self):
        check_choice("combine", self.combine, COMBINE)
        check_int("runs", self.runs, 1, MAX_RUNS, name="number of runs")
        check_int("replicates", self.replicates, 1, MAX_REPLICATES, name="number of seeds per setting")
        check_int("seed", self.seed, 0)
        # Normalise containers so specs built by hand, from JSON or from the CLI compare equal.
        axes = []
        for axis in self.axes:
            try:
                name, values = axis
            except (TypeError, ValueError):
                raise ConfigError(f"Each varied parameter needs a name and values, got {axis!r}.") from None
            values = tuple(plain(v) for v in (values if isinstance(values, (list, tuple)) else [values]))
            if not values:
                raise ConfigError(f"Give at least one value for {name}.", name)
            if len(set(map(repr, values))) != len(values):
                raise ConfigError(f"The values of {name} repeat: {', '.join(map(format_value, values))}.", name)
            axes.append((str(name), values))
        names = [n for n, _ in axes]
        if len(set(names)) != len(names):
            raise ConfigError("A parameter is varied twice; give each parameter once.")
        sizes = [len(values) for _, values in axes]
        settings = (math.prod(sizes) if self.combine == "grid" else sum(sizes)) if axes else 1
        cells = (settings + len(self.settings) + len(self.references)) * int(self.replicates)
        if cells > MAX_CELLS:
            widest = max(axes, key=lambda axis: len(axis[1]))[0] if axes else "replicates"
            raise ConfigError(f"This sweep has {cells:,} cells; at most {MAX_CELLS:,} are allowed. "
                              f"Give fewer values of {widest}.", widest)
        object.__setattr__(self, "axes", tuple(axes))
        object.__setattr__(self, "base", {str(k): plain(v) for k, v in dict(self.base).items()})
        object.__setattr__(self, "settings", tuple(dict(s) for s in self.settings))
        object.__setattr__(self, "references", tuple(dict(s) for s in self.references))

    @property
    def varied(self) -> list[str]:
        """Names of the parameters the settings vary (axes first, then explicit settings' keys)."""
        names = [n for n, _ in self.axes]
        for overrides in self.settings:
            names += [k for k in overrides if k not in names]
        return names

    def overrides(self, tool: ToolFields) -> list[tuple[str, dict]]:
        """``(role, overrides)`` for every distinct setting, in sweep order (``tool``: the spec's adapter)."""
        out: list[tuple[str, dict]] = []
        if self.axes and self.combine == "grid":
            names = [n for n, _ in self.axes]
            for combo in itertools.product(*(values for _, values in self.axes)):
                out.append(("setting", dict(zip(names, combo))))
        elif self.axes:
            # One at a time: the other axes stay at their base value (the tool's
            # default when the base does not set one).
            defaults = tool.defaults()
            anchor = {n: self.base.get(n, defaults.get(n, values[0])) for n, values in self.axes}
            for name, values in self.axes:
                for value in values:
                    out.append(("setting", dict(anchor, **{name: value})))
        out += [("setting", dict(s)) for s in self.settings]
        out += [("reference", dict(s)) for s in self.references]
        if not out:
            out.append(("setting", {}))
        # Typed before comparing, so 1 and 1.0 are one setting.
        out = [(role, tool.coerce(overrides)) for role, overrides in out]
        unique, seen = [], set()
        for role, overrides in out:
            key = (role, json.dumps(overrides, sort_keys=True, default=str))
            if key not in seen:
                seen.add(key)
                unique.append((role, overrides))
        return unique

    def cells(self, tool: ToolFields) -> list[Cell]:
        """Every cell of the sweep, in a fixed order.

        ``tool`` is the adapter of ``self.tool`` (``engine.sweep.get_adapter``):
        it fills and validates each cell's parameters and raises
        :class:`ConfigError` for a bad setting, so the whole sweep is refused
        before anything runs.
        """
        cells: list[Cell] = []
        for role, overrides in self.overrides(tool):
            merged = dict(self.base, **overrides)
            for replicate in range(self.replicates):
                # The seed of a cell depends on what it is, never on when it runs.
                setting_params = tool.resolve(dict(merged, **{tool.seed_field: 0}, **tool.runs_params(self.runs)))
                seed = derive_seed(self.seed, replicate, None if self.paired_seeds else setting_params)
                params = tool.resolve(dict(merged, **{tool.seed_field: seed}, **tool.runs_params(self.runs)))
                key = stable_hash({"tool": self.tool, "params": params, "runs": self.runs})
                cells.append(Cell(index=len(cells), role=role, setting=setting_label(overrides),
                                  overrides=overrides, replicate=replicate, seed=seed, runs=self.runs,
                                  params=params, key=key))
        return cells

    def describe(self, tool_label: str) -> str:
        """The spec's label, else what it varies, e.g. ``"Federated BO: q in {0.15, 0.25}"``."""
        if self.label:
            return self.label
        return f"{tool_label}: " + " x ".join(f"{n} in {{{', '.join(map(format_value, v))}}}" for n, v in self.axes)

    def to_dict(self) -> dict:
        return {"tool": self.tool, "base": dict(self.base), "axes": [[n, list(v)] for n, v in self.axes],
                "combine": self.combine, "settings": [dict(s) for s in self.settings],
                "references": [dict(s) for s in self.references], "runs": self.runs,
                "replicates": self.replicates, "seed": self.seed, "paired_seeds": self.paired_seeds,
                "label": self.label}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "SweepSpec":
        data = dict(data)
        data["axes"] = tuple((n, tuple(v)) for n, v in data.get("axes", ()))
        data["settings"] = tuple(data.get("settings", ()))
        data["references"] = tuple(data.get("references", ()))
        return cls(**data)

    def key(self) -> str:
        """A hash of the whole sweep (e.g. to name its output in a cache folder)."""
        return stable_hash(self.to_dict())

