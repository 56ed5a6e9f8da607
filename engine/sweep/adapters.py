"""How a sweep runs each tool: one adapter per tool, reading only its public API.

An adapter turns a parameter dict into the tool's validated configuration,
prices it (:mod:`engine.limits`) and runs it, returning one
:class:`RunOutcome` per run (final utility, privacy loss, delta). Tool modules
are imported lazily, inside the worker that runs the cell, so a sweep of one
tool never needs the others and a Dask worker imports only what it runs.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import math
import os
from dataclasses import dataclass

import numpy as np

from engine.limits import Cost, fbo_cost, hype_cost, objective_cost, pogpucb_cost
from engine.settings import spec
from engine.sweep.values import annotation_kinds, coerce, derive_seed
from engine.validation import ConfigError, check_choice


@dataclass(frozen=True)
class Metric:
    """What a tool's utility measures, and which way is better (stored with every table row)."""

    label: str
    lower_is_better: bool


@dataclass(frozen=True)
class RunOutcome:
    """What one run contributes to the sweep table."""

    utility: float
    privacy_loss: float = math.nan   # epsilon at the end of the run; NaN for a non-private method
    privacy_delta: float = math.nan
    metric: str | None = None        # what utility measures, when the engine says (e.g. "1 - AUC")
    extra: dict | None = None        # further metrics of the run, by column name (see EXTRA_METRICS)


# Metrics a tool may record beside its utility, each in a column of its own: a sweep table can be read
# with any of them as the utility (engine.sweep.analysis.with_metric).
EXTRA_METRICS = {"test_accuracy": Metric("test accuracy of the chosen candidate", lower_is_better=False)}


class Adapter:
    """A tool a sweep can run.

    Subclasses set the names below and implement :meth:`run` and :meth:`cost`.
    ``config_path`` names the tool's configuration dataclass (``module:Class``);
    its fields are the parameters a sweep can set or vary.
    """

    name: str = ""
    label: str = ""
    config_path: str = ""
    seed_field: str = "seed"
    runs_field: str | None = "runs"   # None: the tool runs once per call; the adapter loops with derived seeds
    metric: Metric = Metric("utility", lower_is_better=True)

    # -- parameters -------------------------------------------------------
    def config_class(self):
        module, _, cls = self.config_path.partition(":")
        try:
            return getattr(importlib.import_module(module), cls)
        except ModuleNotFoundError as err:
            raise ConfigError(f"The {self.label} engine is not available in this installation ({err.name}).") \
                from None

    def fields(self) -> dict[str, set[str]]:
        """Parameter name -> allowed scalar kinds: from the field's declaration (:mod:`engine.settings`), else
        its annotation."""
        out = {}
        for f in dataclasses.fields(self.config_class()):
            declared = spec(f)
            out[f.name] = (annotation_kinds(f.type) if declared is None
                           else {declared.kind.__name__} | ({"None"} if declared.optional else set()))
        return out

    def defaults(self) -> dict:
        out = {}
        for f in dataclasses.fields(self.config_class()):
            if f.default is not dataclasses.MISSING:
                out[f.name] = f.default
            elif f.default_factory is not dataclasses.MISSING:  # pragma: no cover - no tool uses one yet
                out[f.name] = f.default_factory()
        return out

    def coerce(self, params: dict) -> dict:
        """``params`` with the types of the tool's fields (unknown names left as they are)."""
        kinds = self.fields()
        return {k: coerce(v, kinds[k]) if k in kinds else v for k, v in params.items()}

    def runs_params(self, runs: int) -> dict:
        return {self.runs_field: runs} if self.runs_field else {}

    def resolve(self, params: dict) -> dict:
        """Every parameter of the tool, typed and validated (raises ConfigError for a bad one)."""
        kinds = self.fields()
        unknown = sorted(set(params) - set(kinds))
        if unknown:
            raise ConfigError(f"{self.label} has no setting {', '.join(unknown)}; "
                              f"known settings: {', '.join(sorted(kinds))}.", unknown[0])
        config = self.config_class()(**self.coerce(params))
        return {f.name: getattr(config, f.name) for f in dataclasses.fields(config)}

    def make_config(self, params: dict):
        return self.config_class()(**params)

    def prepare(self, params: dict) -> None:
        """Work every cell would repeat (e.g. building a cached objective table), done once by the driver."""

    def private(self, params: dict) -> bool:
        return True

    def cost(self, params: dict, runs: int) -> Cost:
        """The estimated cost of one cell (``params`` resolved, ``runs`` runs)."""
        raise NotImplementedError

    def shared_costs(self, cell_params: list[dict]) -> list[Cost]:
        """Work the cells (their resolved ``params``) share, done once by the driver (e.g. a table build)."""
        return []

    def run(self, params: dict, runs: int) -> list[RunOutcome]:
        raise NotImplementedError


class ToyAdapter(Adapter):
    """A cheap deterministic stand-in for an engine, to try the sweep machinery."""

    name = "toy"
    label = "Toy trade-off (test function)"
    config_path = "engine.sweep.toy:ToyConfig"
    metric = Metric("toy loss", lower_is_better=True)

    def cost(self, params, runs):
        return Cost(seconds=float(params.get("sleep", 0.0)) + 1e-3, memory_mb=1.0, field="runs", knobs=("runs",))

    def run(self, params, runs):
        from engine.sweep.toy import run_toy

        utility, epsilon = run_toy(self.make_config(params))
        return [RunOutcome(float(u), float(epsilon), 1e-5) for u in utility]


class FboAdapter(Adapter):
    """Federated BO (TS, FTS, FTS-DE, DP-FTS, DP-FTS-DE): the runs of a cell are simulated together."""

    name = "fbo"
    label = "Federated BO"
    config_path = "engine.fbo.config:FboConfig"
    metric = Metric("final metric", lower_is_better=True)

    def private(self, params):
        return str(params.get("algorithm", "")).startswith("dp-")

    @staticmethod
    def objective(params):
        """The cell's objective, shared by the cells a process runs (objectives are immutable)."""
        return _cached_objective(params["dataset"], params.get("agents"), params.get("alpha"),
                                 params.get("objective_seed", 0), params.get("domain", "table"), params.get("split"),
                                 os.environ.get("DPBO_DATA_DIR"),
                                 os.environ.get("DPBO_CACHE_DIR"))

    def prepare(self, params):
        # Build (or load) the objective table once, so parallel workers only read it.
        self.objective(params)

    def cost(self, params, runs):
        from engine.fbo.plan import resolve_agents

        config = self.make_config(params)
        n_agents = resolve_agents(config)
        # A real task's table is built once by the driver (shared_costs); a synthetic objective in every process.
        own = objective_cost(config.dataset, n_agents, alpha=config.alpha, domain=config.domain, table_ready=True)
        return fbo_cost(config, n_agents, objective=own)

    def shared_costs(self, cell_params):
        from engine.fbo.plan import objective_ready, resolve_agents

        seen, out = set(), []
        for params in cell_params:
            config = self.make_config(params)
            key = (config.dataset, config.domain, resolve_agents(config), config.alpha, config.objective_seed)
            if key in seen or config.dataset == "synthetic" or config.domain != "table":
                continue
            seen.add(key)
            if not objective_ready(config):
                out.append(objective_cost(config.dataset, key[2], alpha=config.alpha))
        return out

    def run(self, params, runs):
        from engine.fbo import run_fbo

        result = run_fbo(self.make_config(params), self.objective(params))
        final = np.asarray(result.records[-1].metric, dtype=float)      # (runs, agents)
        utility = final.mean(axis=1)
        epsilon = result.epsilon
        eps = math.nan if epsilon is None or not len(epsilon) or np.isnan(epsilon[-1]) else float(epsilon[-1])
        delta = math.nan if result.delta is None or not self.private(params) else float(result.delta)
        return [RunOutcome(float(u), eps, delta, result.metric_label) for u in utility]


@functools.lru_cache(maxsize=4)
def _cached_objective(dataset, agents, alpha, seed, domain, split, env_data_dir, env_cache_dir):
    # The environment is part of the key: it alone decides where data and tables come from.
    from engine.objectives import build_objective

    return build_objective(dataset, n_agents=agents, alpha=alpha, seed=seed, domain=domain, split=split)


class HypeAdapter(Adapter):
    """DP-HYPE: each run is one engine call (its repetitions give the success rate; in data mode also the test
    accuracy of the chosen candidate, ``test_accuracy``)."""

    name = "hype"
    label = "DP-HYPE"
    config_path = "engine.hype:HypeConfig"
    runs_field = None
    metric = Metric("success rate", lower_is_better=False)

    def cost(self, params, runs):
        one = hype_cost(self.make_config(params))
        return dataclasses.replace(one, seconds=one.seconds * runs)

    def run(self, params, runs):
        from engine.hype import run_hype

        out = []
        for r in range(runs):
            seed = derive_seed(params[self.seed_field], r) if runs > 1 else params[self.seed_field]
            result = run_hype(self.make_config(dict(params, **{self.seed_field: seed})))
            # Data mode: the test accuracy of the chosen candidate, averaged over the run's votes.
            extra = ({"test_accuracy": float(np.mean(result.chosen_accuracy))}
                     if result.config.mode == "data" and result.chosen_accuracy else None)
            out.append(RunOutcome(float(result.success_rate), float(result.epsilon), float(result.config.delta),
                                  extra=extra))
        return out


class PoAdapter(Adapter):
    """PO-GP-UCB: final simple regret per run."""

    name = "pogpucb"
    label = "PO-GP-UCB"
    config_path = "engine.pogpucb:PoConfig"
    metric = Metric("final simple regret", lower_is_better=True)

    def cost(self, params, runs):
        return pogpucb_cost(self.make_config(params))

    def run(self, params, runs):
        from engine.pogpucb import run_pogpucb

        result = run_pogpucb(self.make_config(params))
        config = result.config
        return [RunOutcome(float(u), float(config.epsilon), float(config.delta)) for u in result.final_regrets]


ADAPTERS: dict[str, Adapter] = {a.name: a for a in (FboAdapter(), HypeAdapter(), PoAdapter(), ToyAdapter())}
TOOLS = tuple(ADAPTERS)


def get_adapter(tool: str) -> Adapter:
    check_choice("tool", tool, TOOLS)
    return ADAPTERS[tool]


def register(adapter: Adapter) -> None:
    """Add a tool (e.g. a test double) to the registry."""
    ADAPTERS[adapter.name] = adapter
