"""One evaluation of the advisor: a setting run on a list of seeds, as one task of the executor.

Every setting of one comparison runs on the same seeds (common random numbers): seed index i of a stream is
the same objective draw (for the tasks that have draws: the synthetic task and a proxy) and the same run seed
for every setting, so two settings' utilities are paired run by run. The streams keep the seeds of the search,
of its validation, of the sensitivity rows and of any later evaluation apart (:func:`seed_of`), so a judgement
on one stream never reuses runs another chose with.

A run's utility is the task's metric after the last iteration, averaged over the agents (simple regret on the
synthetic task and a proxy, 1 - AUC or the validation error on the real tasks; lower is better); a curve is the
same average after every iteration.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field

import numpy as np

from engine.cancel import checkpoint
from engine.executor import kept
from engine.fbo.config import FboConfig
from engine.fbo.simulation import Simulation
from engine.objectives import build_objective, proxy as proxies
from engine.objectives.base import Objective
from engine.objectives.own import metric_scale
from engine.settings import SEED_MAX

# Seed streams (never reused across purposes).
SELECTION, VALIDATION, SENSITIVITY = 1, 2, 3
CHUNK = 4            # runs per executor task: a fraction of a second each on the synthetic task


def request_base(seed: int, task: "Task", epsilon: float) -> int:
    """The base seed of one request's runs: its ``seed`` and what the runs are (the task's fields, the proxy,
    epsilon), so two requests do not share their seeds' objective draws (requests on the same task then err
    independently) while the same request always gets the same runs."""
    described = repr((sorted((k, repr(v)) for k, v in task.base.items()), repr(task.proxy), float(epsilon),
                      getattr(task.objective, "name", None)))
    state = np.random.SeedSequence([int(seed), zlib.crc32(described.encode())]).generate_state(1)[0]
    return int(state) % SEED_MAX


def seed_of(base: int, stream: int, index: int, part: int) -> int:
    """The seed of run ``index`` of ``stream`` (part 0: its objective draw, part 1: the run's own randomness)."""
    state = np.random.SeedSequence([int(base), int(stream), int(index), int(part)]).generate_state(1)[0]
    return int(state) % SEED_MAX


@dataclass(frozen=True)
class Task:
    """What the runs optimise: a built-in data set (``dataset``), a proxy (``proxy``) or an objective handed over
    (``objective``, e.g. a researcher's own function), with the FboConfig fields every run shares (``base``)."""

    base: dict
    proxy: proxies.Proxy | None = None
    objective: Objective | None = field(default=None, compare=False)

    @property
    def draws(self) -> bool:
        """Whether each seed index draws a new objective (the synthetic task and a proxy do)."""
        return self.objective is None and (self.proxy is not None or self.base["dataset"] == "synthetic")

    def objective_for(self, objective_seed: int) -> Objective | None:
        """The objective of one run (None: the simulation builds the configuration's data set itself)."""
        if self.objective is not None:
            return self.objective
        if self.proxy is not None:
            return proxies.build(self.proxy, self.base["agents"], objective_seed)
        if self.draws:
            return None
        base = self.base        # a real task's table: loaded once per worker process
        return kept(("advise-objective", base["dataset"], base["agents"], base.get("split")),
                    lambda: build_objective(base["dataset"], n_agents=base["agents"], split=base.get("split")))

    def with_proxy(self, proxy: proxies.Proxy) -> "Task":
        """The same runs on another proxy (a row of the sensitivity table)."""
        base = dict(self.base, lengthscale=float(proxy.lengthscale), noise_var=float(proxy.noise_var))
        return Task(base=base, proxy=proxy)


def run_seeds(task: Task, fields: dict, base_seed: int, stream: int, indices: tuple[int, ...]
              ) -> tuple[np.ndarray, str]:
    """The curves (len(indices), T + 1) of the setting ``fields`` (FboConfig fields over ``task.base``) on seed
    indices ``indices`` of ``stream``, as losses (lower is better), and the task's metric label. The executor's
    task function."""
    curves, label = [], ""
    for index in indices:
        checkpoint()
        objective_seed = seed_of(base_seed, stream, index, 0) if task.draws else 0
        config = FboConfig(**dict(task.base, **fields, runs=1, objective_seed=objective_seed,
                                  seed=seed_of(base_seed, stream, index, 1)))
        objective = task.objective_for(objective_seed)
        simulation = Simulation(config, objective)
        for _ in simulation:
            pass
        scale = metric_scale(simulation.objective)
        curves.append(scale * simulation.result().curve)
        label = simulation.metric_label
    return np.asarray(curves, dtype=float), label


def chunks(indices, size: int = CHUNK) -> list[tuple[int, ...]]:
    """``indices`` cut into tuples of at most ``size`` (one executor task each)."""
    indices = list(indices)
    return [tuple(indices[i:i + size]) for i in range(0, len(indices), size)]
