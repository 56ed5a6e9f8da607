"""The engine's public Python API: ``import dpbo`` (installed) or ``from engine import api``.

Everything a researcher calls is named in :data:`__all__`; every other module
of ``engine`` is private by convention (it may change between versions).
The run functions return the same result objects whose ``to_json()`` the
command line (``dpbo <tool>``) prints, so a notebook and a shell agree.

Units: privacy loss ``epsilon`` and ``delta`` are the (epsilon, delta) of
differential privacy (epsilon in nats, delta a probability); ``q`` is a
probability, ``z`` the noise standard deviation in units of the clipping
bound, iterations and releases are counts. Bad input raises
:class:`ConfigError` with one sentence (and the field it is about).
docs/api.md is this module's reference (tests/test_api.py checks it).
"""

from __future__ import annotations

import warnings

from engine.audit import ServerAudit, VoteAudit
from engine.audit import run_audit as _run_audit
from engine.fbo.config import FboConfig
from engine.fbo.records import FboResult
from engine.fbo.simulation import Simulation
from engine.hype import HypeConfig
from engine.hype import run_hype as _run_hype
from engine.objectives.base import Objective
from engine.objectives.own import own_objective
from engine.pogpucb import PoConfig
from engine.pogpucb import run_pogpucb as _run_pogpucb
from engine.privacy import calibrate_z as _calibrate_z
from engine.privacy import DEFAULT_ACCOUNTANT
from engine.privacy import default_delta as _default_delta
from engine.privacy import epsilon as _epsilon
from engine.privacy import epsilon_curve as _epsilon_curve
from engine.reproduce.stored import figure_verdicts as _figure_verdicts
from engine.validation import ConfigError

__all__ = [
    # configurations and errors
    "FboConfig", "HypeConfig", "PoConfig", "ServerAudit", "VoteAudit", "ConfigError", "PrivacyWarning",
    # runs and their results
    "run_fbo", "FboResult", "run_hype", "run_pogpucb", "run_audit",
    # privacy accounting
    "epsilon", "epsilon_curve", "calibrate_z", "default_delta",
    # the papers' reproductions
    "reproduce", "figure_verdicts",
]


class PrivacyWarning(UserWarning):
    """A run's privacy setting is legal but weak (e.g. delta above 1/N); the message says what to change."""


def run_fbo(config: FboConfig | None = None, objective=None, *, box=None, minimise: bool = False,
            optimum: float | None = None, agents: int | None = None, per_agent: bool = False,
            vectorised: bool = False, name: str | None = None, noise: float = 0.0) -> FboResult:
    """Run a federated BO experiment (TS, FTS, FTS-DE, DP-FTS, DP-FTS-DE, ...) to the end.

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
    which, and which way is better).

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

    Returns
    -------
    FboResult
        ``curve`` (T + 1,): the metric's mean over runs and agents after each
        iteration (iteration 0 is after the initial points); ``curve_stderr``
        (T + 1,): its standard error over runs; ``run_curves`` (runs, T + 1);
        ``epsilon``: privacy loss after each iteration (None without DP);
        ``delta``; ``to_json()``: the command line's JSON, whose ``config``
        echoes every setting used (with ``objective``: your objective's name).

    Warns
    -----
    PrivacyWarning
        When delta is above 1/N.

    Example
    -------
    >>> import numpy as np, dpbo
    >>> def bowl(x):                       # minimum 0 at (0.3, 0.3)
    ...     return float(np.sum((x - 0.3) ** 2))
    >>> config = dpbo.FboConfig(algorithm="dp-fts-de", agents=10, iterations=5, runs=2, P=2)
    >>> result = dpbo.run_fbo(config, bowl, box=[(0, 1), (0, 1)], minimise=True, optimum=0.0)
    >>> result.metric_label, len(result.curve), result.to_json()["config"]["objective"]
    ('simple regret', 6, 'bowl')
    """
    config = FboConfig() if config is None else config
    if not isinstance(config, FboConfig):
        raise ConfigError("config must be an FboConfig, e.g. dpbo.FboConfig(algorithm='dp-fts-de').", "config")
    own = None
    if isinstance(objective, Objective):
        own = objective
    elif objective is not None:
        if box is None:
            raise ConfigError("Give the box of your objective: box=[(low, high), ...], one pair per coordinate.",
                              "box")
        if per_agent and agents is None:
            raise ConfigError("A per-agent objective fixes the number of agents: give agents=N.", "agents")
        n = agents if agents is not None else config.agents if config.agents is not None else FboConfig.agents
        own = own_objective(objective, box, minimise=minimise, optimum=optimum, agents=n, per_agent=per_agent,
                            vectorised=vectorised, name=name, noise_std=noise)
        if agents is not None and config.agents is None:
            config = config.replace(agents=int(agents))
    elif box is not None or minimise or optimum is not None or agents is not None:
        raise ConfigError("box, minimise, optimum and agents describe your own objective: pass the function as "
                          "objective=.", "objective")
    simulation = Simulation(config, own)
    if simulation.plan.delta_warning:
        warnings.warn(simulation.plan.delta_warning, PrivacyWarning, stacklevel=2)
    for _ in simulation:
        pass
    return simulation.result()


def run_hype(config: HypeConfig | None = None):
    """Run a DP-HYPE experiment (repeated private votes for the k best hyperparameters) to the end.

    Returns the result whose ``to_json()`` ``dpbo hype`` prints: the success
    rate (a probability) over ``config.repetitions`` votes, the noise std
    ``sigma`` (in votes) calibrated to ``config.epsilon`` and ``config.delta``.

    Example
    -------
    >>> import dpbo
    >>> result = dpbo.run_hype(dpbo.HypeConfig(clients=20, repetitions=50, seed=1))
    >>> 0.0 <= result.to_json()["success_rate"] <= 1.0
    True
    """
    return _run_hype(HypeConfig() if config is None else config)


def run_pogpucb(config: PoConfig | None = None):
    """Run PO-GP-UCB (a curator's randomly projected release, GP-UCB on it) against non-private GP-UCB.

    Returns the result whose ``to_json()`` ``dpbo pogpucb`` prints: the simple
    regret per iteration, ``curve`` (iterations,) with ``curve_stderr`` over
    ``config.runs`` runs, the same for non-private GP-UCB (``baseline_curve``),
    the curator's branch, sigma_min against omega, epsilon and delta.

    Example
    -------
    >>> import dpbo
    >>> result = dpbo.run_pogpucb(dpbo.PoConfig(runs=2, iterations=5, seed=0))
    >>> len(result.to_json()["curve"]), result.to_json()["branch"]
    (5, 'preserve')
    """
    return _run_pogpucb(PoConfig() if config is None else config)


def run_audit(config):
    """Audit a mechanism of the engine: play its distinguishing game and bound epsilon from below.

    ``config`` is a :class:`ServerAudit` (the DP-FTS-DE server round) or a
    :class:`VoteAudit` (a DP-HYPE vote). Returns the result whose ``to_json()``
    ``dpbo audit`` prints: the claimed epsilon, the audited lower bound with
    95 % confidence, and ``violation`` (True when the bound exceeds the claim).

    Example
    -------
    >>> import dpbo
    >>> result = dpbo.run_audit(dpbo.ServerAudit(trials=2000, seed=0))
    >>> result.to_json()["violation"]
    False
    """
    return _run_audit(config)


def epsilon(q: float, z: float, steps: int, delta: float, accountant: str = DEFAULT_ACCOUNTANT, *,
            sampling: str = "poisson", n_agents: int | None = None) -> float:
    """Epsilon after ``steps`` releases of the subsampled Gaussian mechanism.

    ``q``: probability that an agent is sampled per release (poisson) or the
    fraction sampled (``sampling="fixed"``, with ``n_agents``); ``z``: noise std
    over the clipping bound; ``delta`` in (0, 1); ``accountant``: "rdp" (the
    product's default everywhere, as in :class:`FboConfig`), "ma" (the paper's moments accountant) or "pld".

    Example
    -------
    >>> import dpbo
    >>> round(dpbo.epsilon(q=0.25, z=1.0, steps=40, delta=200 ** -1.1, accountant="ma"), 2)
    9.91
    """
    return _epsilon(q, z, steps, delta, accountant, sampling=sampling, n_agents=n_agents)


def epsilon_curve(q: float, z: float, steps: int, delta: float, accountant: str = DEFAULT_ACCOUNTANT, *,
                  sampling: str = "poisson", n_agents: int | None = None):
    """Epsilon after 1, 2, ..., ``steps`` releases: a NumPy array of shape (steps,), non-decreasing.

    Arguments as :func:`epsilon`.

    Example
    -------
    >>> import dpbo
    >>> curve = dpbo.epsilon_curve(q=0.25, z=1.0, steps=40, delta=1e-3)
    >>> curve.shape, bool(curve[-1] >= curve[0])
    ((40,), True)
    """
    return _epsilon_curve(q, z, steps, delta, accountant, sampling=sampling, n_agents=n_agents)


def calibrate_z(target_epsilon: float, q: float, steps: int, delta: float, accountant: str = DEFAULT_ACCOUNTANT, *,
                sampling: str = "poisson", n_agents: int | None = None) -> float:
    """The smallest noise multiplier z whose epsilon after ``steps`` releases is at most ``target_epsilon``.

    Arguments as :func:`epsilon`; raises ConfigError when no z reaches the target.

    Example
    -------
    >>> import dpbo
    >>> z = dpbo.calibrate_z(5.0, q=0.25, steps=40, delta=1e-3)
    >>> dpbo.epsilon(0.25, z, 40, 1e-3) <= 5.0
    True
    """
    return _calibrate_z(target_epsilon, q, steps, delta, accountant, sampling=sampling, n_agents=n_agents)


def default_delta(n_agents: int, rule: str = "product") -> float:
    """The default delta of a guarantee for N participants under a delta rule.

    ``rule="product"`` (the default of the API, the command line, the pages and the Flower export): 1e-5, or
    1 % of 1/N when that is smaller, far below 1/N for every N. ``rule="paper"``: the DP-FTS-DE paper's
    1 / N^1.1 (close to 1/N: 0.17 for 5 agents), used where a page or a reproduction follows the paper.

    Example
    -------
    >>> import dpbo
    >>> dpbo.default_delta(5), dpbo.default_delta(10_000)
    (1e-05, 1e-06)
    >>> round(dpbo.default_delta(200, rule="paper"), 7)
    0.0029435
    """
    return _default_delta(n_agents, rule)


def reproduce(paper: str = "dp-fts-de", parts: str | None = None, *, runs: int | None = None,
              seed: int = 0, workers: int | None = None) -> dict:
    """Reproduce a paper's experiments: curves with standard errors over runs and every claim judged.

    ``paper``: "dp-fts-de", "fts", "dp-hype", "po-gp-ucb" or "all"; ``parts``:
    comma-separated parts (``dpbo reproduce --help`` lists them); ``runs``: runs
    per setting (default the paper's, which takes minutes to hours). Returns
    exactly the dict ``dpbo reproduce`` prints: per part, each setting's curve
    and the claims with their verdicts ("holds", "not significant",
    "reversed"). The stored reproductions at the papers' run counts are read
    with :func:`figure_verdicts` instead.

    Example
    -------
    >>> import dpbo
    >>> out = dpbo.reproduce("dp-fts-de", "synthetic", runs=2)      # doctest: +SKIP
    >>> sorted(out["parts"])                                          # doctest: +SKIP
    ['synthetic']
    """
    from engine.cli import build_parser          # the command's own parser: the same defaults, the same checks
    from engine.cli import reproduce as command

    argv = ["reproduce", paper, "--quiet", "--seed", str(seed)]
    for option, value in (("--parts", parts), ("--runs", runs), ("--workers", workers)):
        if value is not None:
            argv += [option, str(value)]
    return command.run(build_parser().parse_args(argv))


def figure_verdicts(figure: str):
    """What the stored 100-run reproduction of the DP-FTS-DE paper says about one of its figures.

    ``figure``: "fig2a" ... "fig2d", "fig3a" ... "fig3d" and the appendix's
    figures. Returns None when no stored part judges that figure, else an
    object with ``headline`` (one sentence), ``claims`` (one dict per claim:
    ``claim``, ``verdict``, ``numbers``: paired differences and their standard
    errors in the metric's units), ``runs`` and ``held``. Installed, the stored
    reproductions travel with the package; in a checkout they are
    ``data/reproduction/``.

    Example
    -------
    >>> import dpbo
    >>> verdicts = dpbo.figure_verdicts("fig3a")
    >>> verdicts.runs, len(verdicts.claims) > 0
    (100, True)
    """
    return _figure_verdicts(figure)
