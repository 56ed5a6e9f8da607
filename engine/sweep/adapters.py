"""How a sweep runs each tool: one adapter per tool, reading only its public API.

An adapter turns a parameter dict into the tool's validated configuration and
runs it, returning one :class:`RunOutcome` per run (final utility, privacy loss,
delta). Tool modules are imported lazily, inside the worker that runs the cell,
so a sweep of one tool never needs the others and a Dask worker imports only
what it runs.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import math
import os
import typing
from dataclasses import dataclass
import numpy as np

from engine.validation import ConfigError, check_choice


@dataclass(frozen=True)
class RunOutcome:
    """What one run contributes to the sweep table."""

    utility: float
    privacy_loss: float = math.nan   # epsilon at the end of the run; NaN for a non-private method
    privacy_delta: float = math.nan
    metric: str | None = None        # what utility measures, when the engine says (e.g. "1 - AUC")


def _annotation_kinds(annotation) -> set[str]:
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
        from engine.sweep.spec import parse_value

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


class Adapter:
    """A tool a sweep can run.

    Subclasses set the names below and implement :meth:`run`. ``config_path``
    names the tool's configuration dataclass (``module:Class``); its fields
    are the parameters a sweep can set or vary.
    """

    name: str = ""
    label: str = ""
    config_path: str = ""
    seed_field: str = "seed"
    runs_field: str | None = "runs"   # None: the tool runs once per call; the adapter loops with derived seeds
    metric: str = "utility"
    lower_is_better: bool = True
    page: str | None = None           # the dashboard page that shows one configuration of this tool

    # -- parameters -------------------------------------------------------
    def config_class(self):
        module, _, cls = self.config_path.partition(":")
        try:
            return getattr(importlib.import_module(module), cls)
        except ModuleNotFoundError as err:
            raise ConfigError(f"The {self.label} engine is not available in this installation ({err.name}).") \
                from None

    def fields(self) -> dict[str, set[str]]:
        """Parameter name -> allowed scalar kinds."""
        cls = self.config_class()
        hints = {}
        for f in dataclasses.fields(cls):
            hints[f.name] = _annotation_kinds(f.type)
        return hints

    def defaults(self) -> dict:
        cls = self.config_class()
        out = {}
        for f in dataclasses.fields(cls):
            if f.default is not dataclasses.MISSING:
                out[f.name] = f.default
            elif f.default_factory is not dataclasses.MISSING:  # pragma: no cover - no tool uses one yet
                out[f.name] = f.default_factory()
        return out

    def runs_params(self, runs: int) -> dict:
        return {self.runs_field: runs} if self.runs_field else {}

    def resolve(self, params: dict) -> dict:
        """Every parameter of the tool, typed and validated (raises ConfigError for a bad one)."""
        kinds = self.fields()
        unknown = sorted(set(params) - set(kinds))
        if unknown:
            raise ConfigError(f"{self.label} has no setting {', '.join(unknown)}; "
                              f"known settings: {', '.join(sorted(kinds))}.", unknown[0])
        typed = {k: coerce(v, kinds[k]) for k, v in params.items()}
        config = self.config_class()(**typed)
        return {f.name: getattr(config, f.name) for f in dataclasses.fields(config)}

    def make_config(self, params: dict):
        return self.config_class()(**params)

    def prepare(self, params: dict) -> None:
        """Work every cell would repeat (e.g. building a cached objective table), done once by the driver."""

    def private(self, params: dict) -> bool:
        return True

    def run(self, params: dict, runs: int) -> list[RunOutcome]:
        raise NotImplementedError


class ToyAdapter(Adapter):
    """A cheap deterministic stand-in for an engine, to try the sweep machinery."""

    name = "toy"
    label = "Toy trade-off (test function)"
    config_path = "engine.sweep.toy:ToyConfig"
    metric = "toy loss"
    lower_is_better = True

    def run(self, params, runs):
        from engine.sweep.toy import run_toy

        utility, epsilon = run_toy(self.make_config(params))
        return [RunOutcome(float(u), float(epsilon), 1e-5) for u in utility]


class FboAdapter(Adapter):
    """Federated BO (TS, FTS, FTS-DE, DP-FTS, DP-FTS-DE): the runs of a cell are simulated together."""

    name = "fbo"
    label = "Federated BO"
    config_path = "engine.fbo.config:FboConfig"
    metric = "final metric (lower is better)"
    lower_is_better = True
    page = "Federated_BO"

    def private(self, params):
        return str(params.get("algorithm", "")).startswith("dp-")

    @staticmethod
    def objective(params):
        """The cell's objective, shared by the cells a process runs (objectives are immutable)."""
        return _cached_objective(params["dataset"], params.get("agents"), params.get("alpha"),
                                 params.get("objective_seed", 0), params.get("data_dir"),
                                 params.get("domain", "table"), params.get("split"), os.environ.get("DPBO_DATA_DIR"),
                                 os.environ.get("DPBO_CACHE_DIR"))

    def prepare(self, params):
        # Build (or load) the objective table once, so parallel workers only read it.
        self.objective(params)

    def run(self, params, runs):
        from engine.fbo import run_fbo

        result = run_fbo(self.make_config(params), self.objective(params))
        final = np.asarray(result.records[-1].metric, dtype=float)      # (runs, agents)
        utility = final.mean(axis=1)
        epsilon = result.epsilon
        eps = math.nan if not epsilon or epsilon[-1] is None else float(epsilon[-1])
        delta = math.nan if result.delta is None or not self.private(params) else float(result.delta)
        label = getattr(result, "metric_label", None)
        return [RunOutcome(float(u), eps, delta, label) for u in utility]


@functools.lru_cache(maxsize=4)
def _cached_objective(dataset, agents, alpha, seed, data_dir, domain, split, env_data_dir, env_cache_dir):
    # The environment is part of the key: it decides where data and tables come from.
    from engine.objectives import build_objective

    return build_objective(dataset, n_agents=agents, alpha=alpha, seed=seed, data_dir=data_dir, domain=domain,
                           split=split)


def _first(payload: dict, *names):
    for name in names:
        value = payload.get(name)
        if value is not None:
            return value
    return None


def _last(value):
    if isinstance(value, (list, tuple, np.ndarray)):
        return _last(value[-1]) if len(value) else None
    if isinstance(value, dict):
        return _first(value, "mean", "value")
    return value


def _scalar(value) -> float:
    value = _last(value)
    return math.nan if value is None else float(value)


class HypeAdapter(Adapter):
    """DP-HYPE: each run is one engine call (its repetitions give the success rate or accuracy)."""

    name = "hype"
    label = "DP-HYPE"
    config_path = "engine.hype:HypeConfig"
    runs_field = None
    metric = "success rate / accuracy (higher is better)"
    lower_is_better = False
    page = "DP_HYPE"

    def run(self, params, runs):
        from engine.hype import run_hype
        from engine.sweep.spec import derive_seed

        out = []
        for r in range(runs):
            seed = derive_seed(params[self.seed_field], r) if runs > 1 else params[self.seed_field]
            payload = run_hype(self.make_config(dict(params, **{self.seed_field: seed}))).to_json()
            utility = _scalar(_first(payload, "success_rate", "accuracy_dp_hype"))
            out.append(RunOutcome(utility, _scalar(payload.get("epsilon")), _scalar(payload.get("delta"))))
        return out


class PoAdapter(Adapter):
    """PO-GP-UCB: final simple regret per run."""

    name = "pogpucb"
    label = "PO-GP-UCB"
    config_path = "engine.pogpucb:PoConfig"
    metric = "final simple regret (lower is better)"
    lower_is_better = True
    page = "PO_GP_UCB"

    def run(self, params, runs):
        from engine.pogpucb import run_pogpucb
        from engine.sweep.spec import derive_seed

        result = run_pogpucb(self.make_config(params))
        payload = result.to_json()
        eps, delta = _scalar(payload.get("epsilon")), _scalar(payload.get("delta"))
        per_run = payload.get("final_regrets")
        if per_run is None:
            per_run = _per_run_final(result)
        if per_run is not None and len(per_run) == runs:
            return [RunOutcome(float(u), eps, delta) for u in per_run]
        # No per-run figures in the public result: run each run on its own seed.
        out = []
        for r in range(runs):
            seed = derive_seed(params[self.seed_field], r)
            one = run_pogpucb(self.make_config(dict(params, **{self.seed_field: seed, self.runs_field: 1})))
            out.append(RunOutcome(_scalar(one.to_json().get("curve")), eps, delta))
        return out


def _per_run_final(result) -> np.ndarray | None:
    """Final simple regret of each run, from the result's tidy frame when it has one."""
    to_frame = getattr(result, "to_frame", None)
    if to_frame is None:
        return None
    frame = to_frame()
    if frame is None or "run" not in frame or "iteration" not in frame:
        return None
    value = next((c for c in ("simple_regret", "regret", "metric", "value") if c in frame), None)
    if value is None:
        return None
    frame = frame[frame["iteration"] == frame["iteration"].max()]
    if "method" in frame:  # keep PO-GP-UCB, drop the non-private baseline
        frame = frame[~frame["method"].astype(str).str.contains("baseline|gp-ucb$", case=False, regex=True)]
    return frame.groupby("run")[value].mean().to_numpy()


ADAPTERS: dict[str, Adapter] = {a.name: a for a in (FboAdapter(), HypeAdapter(), PoAdapter(), ToyAdapter())}
TOOLS = tuple(ADAPTERS)


def get_adapter(tool: str) -> Adapter:
    check_choice("tool", tool, TOOLS)
    return ADAPTERS[tool]


def register(adapter: Adapter) -> None:
    """Add a tool (e.g. a test double) to the registry."""
    ADAPTERS[adapter.name] = adapter

