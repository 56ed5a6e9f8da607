"""Federated BO from Python: ``dpbo.run_fbo`` (to the end, with a callback and a progress line) and
``dpbo.iterate_fbo`` (one step at a time), on the configuration's data set or a researcher's own function.

Both price the run first (the command line's price, :func:`engine.fbo.plan.plan_cost`) and refuse it above the
caller's limits in one sentence; both keep the finished iterations when the run is stopped (a callback, Ctrl-C,
the time limit). docs/api.md is the reference.
"""

from __future__ import annotations

import numbers
import warnings
from typing import Callable

from engine.api.common import DEFAULT_LIMITS, INTERRUPTED, PrivacyWarning, priced, token_for
from engine.fbo.config import FboConfig
from engine.fbo.plan import plan_cost
from engine.fbo.records import FboResult
from engine.fbo.simulation import Simulation
from engine.fbo.steps import FboRun, FboStep
from engine.limits import Cost
from engine.limits.machine import Limits
from engine.objectives.base import Objective
from engine.objectives.own import OwnObjective, own_objective
from engine.progress import Progress
from engine.validation import ConfigError, api_boundary, shown

# Warnings point at the caller's line: warn() in _start, the public function, its boundary, the caller.
CALLER = 4


def _agents(agents) -> int | None:
    """The ``agents`` argument: None, or a whole number of at least 2 agents (ConfigError ``agents``)."""
    if agents is None:
        return None
    whole = isinstance(agents, numbers.Integral) or (isinstance(agents, numbers.Real) and float(agents).is_integer())
    if isinstance(agents, bool) or not whole or int(agents) < 2:
        raise ConfigError(f"agents must be a whole number of at least 2 (federated BO needs two agents), got "
                          f"{shown(agents)}.", "agents")
    return int(agents)


def _problem(config, objective, *, box, minimise, optimum, agents, per_agent, vectorised, name, noise
             ) -> tuple[FboConfig, Objective | None]:
    """The run's configuration and objective (None: the configuration's data set), checked."""
    config = FboConfig() if config is None else config
    if not isinstance(config, FboConfig):
        raise ConfigError("config must be an FboConfig, e.g. dpbo.FboConfig(algorithm='dp-fts-de').", "config")
    agents = _agents(agents)
    if isinstance(objective, Objective):
        return config, objective
    if objective is None:
        if box is not None or minimise or optimum is not None or agents is not None or per_agent:
            raise ConfigError("box, minimise, optimum and agents describe your own objective: pass the function as "
                              "objective=.", "objective")
        return config, None
    if box is None:
        raise ConfigError("Give the box of your objective: box=[(low, high), ...], one pair per coordinate.", "box")
    if per_agent and agents is None:
        raise ConfigError("A per-agent objective fixes the number of agents: give agents=N.", "agents")
    n = agents if agents is not None else config.agents if config.agents is not None else FboConfig.agents
    own = own_objective(objective, box, minimise=minimise, optimum=optimum, agents=n, per_agent=per_agent,
                        vectorised=vectorised, name=name, noise_std=noise)
    if agents is not None and config.agents is None:
        config = config.replace(agents=agents)
    return config, own


def _start(config, objective, limits, **own) -> FboRun:
    """Check, price, plan and warn: the run, ready to iterate (nothing heavy computed yet)."""
    config, objective = _problem(config, objective, **own)
    priced(plan_cost(config, objective), limits)
    simulation = Simulation(config, objective)
    if simulation.plan.delta_warning:
        warnings.warn(simulation.plan.delta_warning, PrivacyWarning, stacklevel=CALLER)
    return FboRun(simulation, token_for(limits))


def _progress_line(run: FboRun, enabled: bool | None) -> Progress:
    config, objective = run.simulation.config, run.simulation.objective
    calls = ""
    if isinstance(objective, OwnObjective):     # its time is the function's: say how many calls it makes
        calls = f" ({config.runs * objective.n_agents:,} calls of {objective.name} per iteration)"
    return Progress(f"{config.algorithm}{calls}", run.iterations, enabled=enabled)


def _detail(step: FboStep) -> str:
    eps = "" if step.epsilon is None else f", epsilon {step.epsilon:.3g}"
    return f"{step.metric_label.split(' (')[0]} {step.metric:.4g}{eps}"


@api_boundary
def run_fbo(config: FboConfig | None = None, objective: Callable | Objective | None = None, *, box=None,
            minimise: bool = False, optimum: float | None = None, agents: int | None = None,
            per_agent: bool = False, vectorised: bool = False, name: str | None = None, noise: float = 0.0,
            callback: Callable[[FboStep], object] | None = None, progress: bool | None = None,
            limits: Limits | None = DEFAULT_LIMITS) -> FboResult:
    """Run a federated BO experiment (TS, FTS, FTS-DE, DP-FTS, DP-FTS-DE, ...) and return its result.

    Without ``objective`` the configuration's data set is optimised, exactly
    as ``dpbo fbo`` does: ``run_fbo(config).to_json()`` is the command's JSON
    (apart from ``wall_seconds``).

    Your own objective: ``objective`` is a plain function of one point
    ``f(x) -> float`` with ``x`` a NumPy array of shape (D,) inside ``box``
    (D pairs (low, high), in the function's own units). Every agent optimises
    ``f``; ``per_agent=True`` passes the agent's index too, ``f(x, agent)``,
    and then ``agents`` fixes how many there are. ``minimise=True`` minimises.
    With ``vectorised=True`` the function takes a batch ``X`` of shape (K, D)
    and returns K values (much faster: every agent of every run queries once
    per iteration). With a known ``optimum`` (the best value of ``f``) the
    metric is the simple regret ``|optimum - best value found|``; without it
    the metric is the best value found itself (``result.metric_label`` says
    which, and which way is better). Each agent standardises its own
    observations and the box is mapped to [0, 1]^D, so ``f`` in any units
    and offset, on a box in any units, gives the same queries.

    Parameters
    ----------
    config : FboConfig, optional
        The settings (default ``FboConfig()``: DP-FTS-DE on the paper's synthetic
        task). With your own objective ``config.agents`` agents optimise it
        (``agents`` and the configuration must agree when both are given; a
        conflict is a ConfigError, never a silent override).
    objective : callable, optional
    box : list of (low, high), one per coordinate; required with ``objective``.
    minimise, optimum, agents, per_agent, vectorised
        As above.
    name : str, optional
        Shown in the result's echoed configuration (default: the function's ``__name__``).
    noise : float
        Standard deviation of Gaussian noise added to each observation (default 0: exact values).
    callback : callable, optional
        Called with an :class:`FboStep` after every iteration (0 after the initial points, then 1..T);
        returning True stops the run there (``result.stopped == "callback"``).
    progress : bool, optional
        A progress line on stderr (iteration, metric, epsilon, time left), rewritten in place. Default: shown
        in a terminal or a notebook once the run has taken 2 s; False: never; True: always.
    limits : Limits or None
        The run is refused (one ConfigError sentence naming the knob) when its price (:func:`price`) is above
        them: by default the memory free on this machine; ``Limits(seconds=600)`` also refuses a run priced
        above 600 s of computing and stops one still computing after 600 s. None: no limit.

    Returns
    -------
    FboResult
        ``curve`` (T + 1,): the metric's mean over runs and agents after each
        iteration (iteration 0 is after the initial points); ``curve_stderr``
        (T + 1,): its standard error over runs; ``run_curves`` (R, T + 1);
        ``epsilon`` (T + 1,): privacy loss after each iteration (None without DP);
        ``delta``; ``best_x`` (R, N, D) and ``best_value`` (R, N): each agent's best
        point in the box's units; ``best()``: the best of all; ``X`` (R, N, n, D) and ``y`` (R, N, n):
        every query (n = n_init + T); ``to_frame()``; ``to_json()``: the command line's JSON, whose
        ``config`` echoes every setting used (with ``objective``: your objective's name).
        Stopped early (a callback, Ctrl-C, the time limit): the finished iterations, ``stopped`` says why.

    Warns
    -----
    PrivacyWarning
        When delta is not far below 1/N.

    Example
    -------
    >>> import numpy as np, dpbo
    >>> def bowl(x):                       # minimum 0 at (0.3, 0.3)
    ...     return float(np.sum((x - 0.3) ** 2))
    >>> config = dpbo.FboConfig(algorithm="dp-fts-de", agents=10, iterations=5, runs=2, P=2)
    >>> result = dpbo.run_fbo(config, bowl, box=[(0, 1), (0, 1)], minimise=True, optimum=0.0)
    >>> result.metric_label, len(result.curve), result.to_json()["config"]["objective"]
    ('simple regret', 6, 'bowl')
    >>> result.best_x.shape, result.X.shape                 # (R, N, D), (R, N, n_init + T, D)
    ((2, 10, 2), (2, 10, 15, 2))
    >>> stopped = dpbo.run_fbo(config, bowl, box=[(0, 1), (0, 1)], minimise=True,
    ...                        callback=lambda step: step.iteration == 2)
    >>> stopped.stopped, len(stopped.curve)
    ('callback', 3)
    """
    run = _start(config, objective, limits, box=box, minimise=minimise, optimum=optimum, agents=agents,
                 per_agent=per_agent, vectorised=vectorised, name=name, noise=noise)
    line = _progress_line(run, progress)
    try:
        for step in run:
            line.update(step.iteration, _detail(step))
            if callback is not None and callback(step):
                run.stop("callback")
    except KeyboardInterrupt:
        run.stop(INTERRUPTED)
    finally:
        done = len(run.simulation.records) - 1
        where = f"after iteration {done} of {run.iterations}" if done >= 0 else "before the initial points"
        line.close(None if run.stopped is None else f"{run.stopped} {where}")
    return run.result()


@api_boundary
def iterate_fbo(config: FboConfig | None = None, objective: Callable | Objective | None = None, *, box=None,
                minimise: bool = False, optimum: float | None = None, agents: int | None = None,
                per_agent: bool = False, vectorised: bool = False, name: str | None = None, noise: float = 0.0,
                limits: Limits | None = DEFAULT_LIMITS) -> FboRun:
    """The run of :func:`run_fbo`, computed one iteration at a time as you iterate it.

    Arguments as :func:`run_fbo` (priced and refused above ``limits`` now, before any iteration). Iterating
    the returned :class:`FboRun` yields an :class:`FboStep` per finished iteration (0 after the initial
    points, then 1..T); leave the loop (``break``) to stop early. ``run.result()`` is the
    :class:`FboResult` of the finished iterations at any moment, also after Ctrl-C ended the loop (the first
    Ctrl-C stops the run at its next checkpoint and ends the loop quietly; ``stopped`` says "interrupted").

    Example
    -------
    >>> import numpy as np, dpbo
    >>> run = dpbo.iterate_fbo(dpbo.FboConfig(algorithm="ts", agents=4, iterations=20, runs=1),
    ...                        lambda x: float(np.sum(x ** 2)), box=[(-1, 1)], minimise=True)
    >>> for step in run:
    ...     if step.best_value.min() < 1e-3:        # good enough: stop here
    ...         break
    >>> result = run.result()
    >>> bool(result.best().value < 1e-3), len(result.curve) <= 21
    (True, True)
    """
    return _start(config, objective, limits, box=box, minimise=minimise, optimum=optimum, agents=agents,
                  per_agent=per_agent, vectorised=vectorised, name=name, noise=noise)


def fbo_price(config, objective=None, *, box=None, agents: int | None = None, per_agent: bool = False) -> Cost:
    """The price of :func:`run_fbo` with these arguments (your function's own time aside)."""
    if objective is not None and not isinstance(objective, Objective) and box is None:
        raise ConfigError("Give the box of your objective: box=[(low, high), ...], one pair per coordinate.", "box")
    config, objective = _problem(config, objective, box=box, minimise=False, optimum=None, agents=agents,
                                 per_agent=per_agent, vectorised=False, name=None, noise=0.0)
    return plan_cost(config, objective)
