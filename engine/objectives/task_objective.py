"""A :class:`~engine.objectives.tasks.Task` as the :class:`~engine.objectives.base.Objective` the engine optimises.

On the ``"table"`` domain the objective reads the task's cached candidate
table (built once, :func:`engine.objectives.builds.build_table`); on the
``"continuous"`` domain it trains the model at every queried point.
"""

from __future__ import annotations

import numpy as np

from engine.objectives.base import FunctionObjective, Objective, TableObjective
from engine.objectives.builds import Progress, build_table
from engine.objectives.tasks import Task
from engine.validation import check_choice


def _objective_fields(task: Task) -> dict:
    return dict(name=task.name, n_agents=task.n_agents, dim=task.dim, noise_std=task.noise_std,
                reference=np.ones(task.n_agents), metric_label=task.metric_label,
                lengthscale=task.lengthscale, noise_var=task.noise_var, description=task.summary,
                own_gp_prior=tuple(task.own_gp_prior), own_refit_every=int(task.own_refit_every))


def table_objective(task: Task, grid: int | None = None, *, n_jobs: int | None = None,
                    progress: Progress | None = None, directory=None) -> TableObjective:
    """``task`` as a :class:`TableObjective` over its cached candidate grid (built if needed)."""
    built = build_table(task, grid, n_jobs=n_jobs, progress=progress, directory=directory)
    return TableObjective(candidates=built.candidates, values=built.values, **_objective_fields(task))


def function_objective(task: Task) -> FunctionObjective:
    """``task`` as a :class:`FunctionObjective` that trains the model at every queried point."""

    def evaluate(agents: np.ndarray, points: np.ndarray) -> np.ndarray:
        agents = np.asarray(agents, dtype=int).ravel()
        points = np.atleast_2d(np.asarray(points, dtype=float))
        out = np.empty(len(agents))
        for agent in np.unique(agents):
            rows = np.flatnonzero(agents == agent)
            out[rows] = task.score(int(agent), points[rows])
        return out

    return FunctionObjective(fn=evaluate, **_objective_fields(task))


def objective_for(task: Task, domain: str = "table", grid: int | None = None) -> Objective:
    """The objective of ``task`` on the ``"table"`` or ``"continuous"`` domain."""
    check_choice("domain", domain, ("table", "continuous"))
    if domain == "continuous":
        return function_objective(task)
    return table_objective(task, grid)
