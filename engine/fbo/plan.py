"""What a federated BO configuration will do before it runs: its run plan.

:func:`make_plan` resolves the number of agents and delta, the noise
multiplier z (calibrated to the budget when asked), epsilon after every
release, how many releases the budget allows and where it runs out, and what
the run costs against the host's limit (:mod:`engine.limits`). The simulation
runs the plan, the page's "Privacy before you run" shows it, and sweeps price
their cells with it, so all three agree by construction.

Releases: the server's release after iteration t - 1 is used in iteration t,
so T iterations make T releases and epsilon after iteration t is epsilon after
min(t, releases) releases. With a budget the server stops once the next
release would exceed it (paper footnote 13); with ``calibrate_z`` z is chosen
so that epsilon after T releases equals the budget.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Sequence

import numpy as np

from engine.fbo.config import FboConfig
from engine.limits import Cost, fbo_cost, objective_cost
from engine.objectives.base import DatasetUnavailable, Objective
from engine.objectives.own import OwnObjective
from engine.objectives.registry import default_agents, make_task
from engine.objectives.store import table_path
from engine.paths import data_dir
from engine.privacy import calibrate_z, default_delta, delta_weakness, epsilon, epsilon_curve
from engine.privacy.accountants import budget_releases
from engine.validation import ConfigError


@dataclass(frozen=True)
class RunPlan:
    """Everything a federated BO run is decided to do before its first iteration.

    Attributes
    ----------
    config : FboConfig
    n_agents : int
        Agents of the run (the config's, else the task's own number).
    n_subregions : int
        P used (1 unless the algorithm explores distributedly).
    delta, z : float
        The delta of the guarantee (the config's delta rule unless given) and the noise
        multiplier used (calibrated with ``calibrate_z``).
    epsilon_curve : numpy.ndarray or None
        Epsilon after 1..T releases (read-only); None without DP.
    releases : int
        Server releases the run makes: T without a budget, fewer when the
        budget stops the server, 0 for algorithms without a server.
    budget_reached_at : int or None
        With a budget: the iteration of the last release it allows, when the
        server stops early, or T when z is calibrated to the budget.
    cost : engine.limits.Cost
        The run's estimated CPU time and memory.
    """

    config: FboConfig
    n_agents: int
    n_subregions: int
    delta: float
    z: float
    epsilon_curve: np.ndarray | None
    releases: int
    budget_reached_at: int | None
    cost: Cost

    def epsilon_after(self, t: int) -> float | None:
        """Epsilon after iteration ``t`` (0 before any release; None without DP)."""
        if self.epsilon_curve is None:
            return None
        spent = min(int(t), self.releases)
        return float(self.epsilon_curve[spent - 1]) if spent else 0.0

    @property
    def final_epsilon(self) -> float | None:
        """Epsilon at the end of the run (None without DP)."""
        return self.epsilon_after(self.config.iterations)

    @property
    def delta_warning(self) -> str | None:
        """One sentence when delta is not far below 1/N (a guarantee that weak can let one agent's data out)."""
        return delta_weakness(self.delta, self.n_agents) if self.config.is_private else None


def resolve_agents(config: FboConfig, objective: Objective | None = None) -> int:
    """The run's number of agents: the objective's, else the config's, else the task's default."""
    if objective is not None:
        n = int(objective.n_agents)
        if isinstance(objective, OwnObjective) and config.agents is not None and int(config.agents) != n:
            raise ConfigError(f"The objective serves {n} agents and the configuration asks for {config.agents}: "
                              f"set agents={n} in the configuration (or None to follow the objective).", "agents")
    else:
        n = int(config.agents) if config.agents is not None else default_agents(config.dataset)
    if n < 2:
        raise ConfigError(f"Federated BO needs at least 2 agents, the objective has {n}.", "agents")
    if config.n_subregions > n:
        raise ConfigError(f"P must be at most the number of agents ({n}), got {config.n_subregions}.", "P")
    return n


def objective_ready(config: FboConfig) -> bool:
    """Whether the objective of ``config`` costs nothing to build: a real task whose table is cached.

    Reads the task's data but computes no score; missing data counts as not ready (the run itself then says
    where the data belongs), so a plan needs no data.
    """
    if config.dataset == "synthetic" or config.domain != "table":
        return False
    try:
        task = _task(config.dataset, config.agents, config.alpha, config.objective_seed, str(data_dir()))
    except DatasetUnavailable:
        return False
    return table_path(task).is_file()


@lru_cache(maxsize=16)
def _task(dataset: str, agents: int | None, alpha: float | None, seed: int, where: str):
    """A real task, made once per setting (landmine's split takes half a second; compared lines share it).
    ``where`` (the data folder) is part of the key only."""
    return make_task(dataset, n_agents=agents, alpha=alpha, seed=seed)


def make_plan(config: FboConfig, objective: Objective | None = None) -> RunPlan:
    """The :class:`RunPlan` of ``config`` (with ``objective`` when it is already built).

    Without the objective the plan needs no data: agents come from the
    config or the task's default and the cost assumes the largest candidate
    table. Raises ConfigError (with the field to change) for a run that
    cannot be planned, e.g. a budget no noise level reaches.
    """
    N = resolve_agents(config, objective)
    T = config.iterations
    delta = float(config.delta) if config.delta is not None else default_delta(N, config.delta_rule)
    z = float(config.z)
    curve, budget_reached_at = None, None
    if config.is_private:
        common = dict(sampling=config.sampling, n_agents=N)
        if config.calibrate_z:
            z = calibrate_z(config.budget, config.q, T, delta, config.accountant, **common)
        curve = _epsilon_curve(config.q, z, T, delta, config.accountant, config.sampling, N).copy()
        if config.calibrate_z:
            # The curve may use a coarser grid (PLD); the end point is the calibrated one.
            curve[-1] = epsilon(config.q, z, T, delta, config.accountant, **common)
            releases, budget_reached_at = T, T
        elif config.budget is not None:
            releases, curve = budget_releases(curve, config.budget, config.q, z, delta, config.accountant, **common)
            releases = min(T, releases)
            budget_reached_at = releases if releases < T else None
        else:
            releases = T
        curve.setflags(write=False)
    else:
        releases = T if config.uses_server else 0
    return RunPlan(config=config, n_agents=N, n_subregions=config.n_subregions, delta=delta, z=z,
                   epsilon_curve=curve, releases=releases, budget_reached_at=budget_reached_at,
                   cost=plan_cost(config, objective))


@lru_cache(maxsize=64)
def _epsilon_curve(q: float, z: float, T: int, delta: float, accountant: str, sampling: str, N: int) -> np.ndarray:
    """:func:`engine.privacy.epsilon_curve`, kept: the blocks of runs of one setting share their privacy curve."""
    curve = epsilon_curve(q, z, T, delta, accountant, sampling=sampling, n_agents=N)
    curve.setflags(write=False)
    return curve


def plan_cost(config: FboConfig, objective: Objective | None = None, *, objective_counted: bool = False,
              tables_ready: bool | None = None) -> Cost:
    """What running ``config`` costs, known before any of it is computed (the privacy curve included).

    Pages check it before they make the plan, so a run too large for the host
    is refused before even its privacy curve is accounted. ``objective_counted``:
    building the objective is priced elsewhere (another line of the same task). ``tables_ready``: whether a real
    task's table is built (None: look in the cache; False: the price of a first visitor, whatever the cache holds).
    """
    N = resolve_agents(config, objective)
    candidates = len(objective.candidates) if objective is not None and objective.is_discrete else None
    ready = objective is not None or (objective_ready(config) if tables_ready is None else tables_ready)
    built = objective_cost(config.dataset, N, alpha=config.alpha, domain=config.domain, table_ready=ready)
    if objective is not None or objective_counted:
        built = replace(built, seconds=0.0, memory_mb=0.0)
    own = None
    if isinstance(objective, OwnObjective):     # continuous, its own refit period; its calls are its own time
        own = {"dim": objective.dim, "refit_every": objective.own_refit_every}
    return fbo_cost(config, N, candidates, objective=built, own=own)


def lines_cost(configs: Sequence[FboConfig], *, objectives_built: bool = False,
               tables_ready: bool | None = None) -> Cost:
    """What running ``configs`` together costs (compared lines): each line's run, each objective built once
    (``objectives_built``: none, their tables are built first by a job of their own; ``tables_ready``: as in
    :func:`plan_cost`)."""
    total, seen = None, set()
    for config in configs:
        key = (config.dataset, resolve_agents(config), config.alpha, config.objective_seed, config.domain,
               config.split)
        cost = plan_cost(config, objective_counted=objectives_built or key in seen, tables_ready=tables_ready)
        seen.add(key)
        total = cost if total is None else total + cost
    if total is None:
        raise ValueError("lines_cost needs at least one configuration")
    return total
