"""DP-HYPE, PO-GP-UCB, the privacy audit, the reproductions and prices from Python (``dpbo``): each priced as its
command prices it and refused above the caller's limits, the runs with a progress line and their finished part
kept when stopped (Ctrl-C, the time limit)."""

from __future__ import annotations

import contextlib

from engine.api.common import DEFAULT_LIMITS, INTERRUPTED, priced, stop_reason, time_limit_error, token_for
from engine.api.fbo import fbo_price
from engine.audit import AuditCancelled, AuditResult, OneRunAudit, OneRunResult, ServerAudit, VoteAudit, audit_cost
from engine.audit import one_run_cost, run_one_run
from engine.audit import run_audit as _run_audit
from engine.cancel import TIME_LIMIT, Cancelled, guarded
from engine.fbo.config import FboConfig
from engine.hype import HypeConfig, HypeResult, iter_hype
from engine.limits import Cost, hype_cost, pogpucb_cost
from engine.limits.machine import Limits
from engine.pogpucb import PoConfig
from engine.pogpucb.runner import PoResult, iter_pogpucb
from engine.progress import Progress
from engine.reproduce.stored import FigureVerdicts
from engine.reproduce.stored import figure_verdicts as _figure_verdicts
from engine.validation import ConfigError, api_boundary, shown


def _config(config, cls, default):
    config = default if config is None else config
    if not isinstance(config, cls):
        raise ConfigError(f"config must be a {cls.__name__}, e.g. dpbo.{cls.__name__}(), got {shown(config)}.",
                          "config")
    return config


def _stepped(results, limits, token, line: Progress, count, what: str):
    """Drive a generator of growing results under ``token``: the last one, complete or (stopped by Ctrl-C or the
    time limit) flagged in ``stopped``; ConfigError when the time limit came before any result."""
    last, reason = None, None
    try:
        with guarded(token):
            for last in results:
                line.update(count(last))
    except Cancelled as error:
        reason = stop_reason(error, token)
    except KeyboardInterrupt:
        if last is None:
            raise
        reason = INTERRUPTED
    finally:
        line.close(None if reason is None else f"{reason} after {count(last) if last is not None else 0} of "
                                                f"{line.total} {line.unit}s")
    if last is None:
        if reason == INTERRUPTED:
            raise KeyboardInterrupt
        raise time_limit_error(limits, what)
    last.stopped = reason
    return last


@api_boundary
def run_hype(config: HypeConfig | None = None, *, progress: bool | None = None,
             limits: Limits | None = DEFAULT_LIMITS) -> HypeResult:
    """Run a DP-HYPE experiment (repeated private votes for the k best hyperparameters) to the end.

    Returns the result whose ``to_json()`` ``dpbo hype`` prints: the success
    rate (a probability) over ``config.repetitions`` votes, the noise std
    ``sigma`` (in votes) calibrated to ``config.epsilon`` and ``config.delta``;
    ``winners`` (repetitions,): the candidate each vote chose, ``most_chosen``
    (and in data mode ``most_chosen_label``, its hyperparameters). ``progress``
    and ``limits`` as in :func:`run_fbo`; stopped early (Ctrl-C, the time
    limit), the repetitions done so far (``complete`` False, ``stopped`` says why).

    Example
    -------
    >>> import dpbo
    >>> result = dpbo.run_hype(dpbo.HypeConfig(clients=20, repetitions=50, seed=1))
    >>> 0.0 <= result.to_json()["success_rate"] <= 1.0, result.winners.shape
    (True, (50,))
    """
    config = _config(config, HypeConfig, HypeConfig())
    priced(hype_cost(config), limits)
    token = token_for(limits)
    line = Progress("dp-hype", config.repetitions, enabled=progress, unit="repetition")
    return _stepped(iter_hype(config), limits, token, line, lambda r: r.repetitions, "This DP-HYPE run")


@api_boundary
def run_pogpucb(config: PoConfig | None = None, *, progress: bool | None = None,
                limits: Limits | None = DEFAULT_LIMITS) -> PoResult:
    """Run PO-GP-UCB (a curator's randomly projected release, GP-UCB on it) against non-private GP-UCB.

    Returns the result whose ``to_json()`` ``dpbo pogpucb`` prints: the simple
    regret per iteration, ``curve`` (iterations,) with ``curve_stderr`` over
    ``config.runs`` runs, the same for non-private GP-UCB (``baseline_curve``),
    the curator's branch, sigma_min against omega, epsilon and delta; what each
    run chose: ``best_rows`` (runs,) the data set's row it found best and
    ``best_values`` f there, ``queries`` (runs, initial points + T) every row it
    queried. ``progress`` and ``limits`` as in :func:`run_fbo`; stopped early,
    the runs done so far (``complete`` False, ``stopped`` says why).

    Example
    -------
    >>> import dpbo
    >>> result = dpbo.run_pogpucb(dpbo.PoConfig(runs=2, iterations=5, seed=0))
    >>> len(result.to_json()["curve"]), result.to_json()["branch"], result.best_rows.shape
    (5, 'preserve', (2,))
    """
    config = _config(config, PoConfig, PoConfig())
    priced(pogpucb_cost(config), limits)
    token = token_for(limits)
    line = Progress("po-gp-ucb", config.runs, enabled=progress, unit="run")
    return _stepped(iter_pogpucb(config), limits, token, line, lambda r: r.runs_done, "This PO-GP-UCB run")


@contextlib.contextmanager
def _audit_stops(token, limits: Limits):
    """An audit under ``token``: its time limit one sentence, Ctrl-C the KeyboardInterrupt it was."""
    try:
        with guarded(token):
            yield
    except (Cancelled, AuditCancelled):
        if token.reason is None:
            raise
        if token.reason != TIME_LIMIT:
            raise KeyboardInterrupt from None
        raise time_limit_error(limits, "This audit") from None


@api_boundary
def run_audit(config: ServerAudit | VoteAudit | OneRunAudit, *, progress: bool | None = None,
              limits: Limits | None = DEFAULT_LIMITS) -> AuditResult | OneRunResult:
    """Audit a mechanism of the engine: play its distinguishing game and bound epsilon from below.

    ``config`` is a :class:`ServerAudit` (the DP-FTS-DE server round) or a
    :class:`VoteAudit` (a DP-HYPE vote), played many times: returns the
    :class:`AuditResult` whose ``to_json()`` ``dpbo audit`` prints: the claimed
    epsilon, the audited lower bound with 95 % confidence, and ``violation``
    (True when the bound exceeds the claim). Or a :class:`OneRunAudit`: one run
    of the server's T releases with m canary agents, each in with probability
    1/2, bounded by the auditor's guesses (``dpbo audit --one-run``); returns a
    :class:`OneRunResult` (``epsilon_lower``, ``bound.nested``: the bound on the
    first 100, 300, 1000, ... canaries).
    ``progress`` and ``limits`` as in :func:`run_fbo` (an audit stopped early has
    no result: the time limit is a ConfigError, Ctrl-C a KeyboardInterrupt).

    Example
    -------
    >>> import dpbo
    >>> result = dpbo.run_audit(dpbo.ServerAudit(trials=2000, seed=0))
    >>> result.to_json()["violation"]
    False
    >>> dpbo.run_audit(dpbo.OneRunAudit(canaries=1000, steps=10, seed=0)).violation
    False
    """
    if isinstance(config, OneRunAudit):
        priced(one_run_cost(config), limits, what="This audit")
        token = token_for(limits)
        with _audit_stops(token, limits):
            return run_one_run(config, cancel=token)
    if not isinstance(config, (ServerAudit, VoteAudit)):
        raise ConfigError(f"config must be a dpbo.ServerAudit, VoteAudit or OneRunAudit, got {shown(config)}.",
                          "config")
    priced(audit_cost(config), limits, what="This audit")
    token = token_for(limits)
    line = Progress(f"audit of {config.mechanism}", int(config.trials) // 2 * 2, enabled=progress, unit="trial")
    try:
        with _audit_stops(token, limits):
            return _run_audit(config, progress=lambda done, total: line.update(done), cancel=token)
    finally:
        line.close()


@api_boundary
def price(config: FboConfig | HypeConfig | PoConfig | ServerAudit | VoteAudit | OneRunAudit, objective=None, *,
          box=None,
          agents: int | None = None, per_agent: bool = False) -> Cost:
    """What a run of ``config`` costs, estimated before it starts: the price ``dpbo <tool>`` checks.

    ``config``: an :class:`FboConfig` (with your own ``objective``, its ``box``, ``agents`` and ``per_agent`` as
    in :func:`run_fbo`), a :class:`HypeConfig`, a :class:`PoConfig`, a :class:`ServerAudit` or a
    :class:`VoteAudit`. Returns a :class:`Cost`: ``seconds`` (estimated CPU seconds on the reference machine,
    rounded up; your own function's time is not in it), ``memory_mb`` (estimated peak memory the run adds),
    ``field`` (the setting to lower first) and ``knobs`` (every setting that drives the price). The run
    functions refuse a run whose price is above their ``limits``.

    Example
    -------
    >>> import dpbo
    >>> cost = dpbo.price(dpbo.FboConfig(runs=10**6))
    >>> cost.memory_mb > 50_000, cost.field
    (True, 'runs')
    >>> try:                                     # refused in one sentence, before any work
    ...     dpbo.run_fbo(dpbo.FboConfig(runs=10**6), limits=dpbo.Limits(memory_mb=4000))
    ... except dpbo.ConfigError as refused:
    ...     print(refused.field, "|", str(refused).split(":")[0])
    runs | This run needs more than 1 TB of memory (estimated), above limits.memory_mb = 4,000 MB
    """
    if isinstance(config, (FboConfig, type(None))):
        return fbo_price(config, objective, box=box, agents=agents, per_agent=per_agent)
    if objective is not None or box is not None or agents is not None or per_agent:
        raise ConfigError("objective, box, agents and per_agent describe your own objective for federated BO: "
                          "give them with an FboConfig.", "objective")
    if isinstance(config, HypeConfig):
        return hype_cost(config)
    if isinstance(config, PoConfig):
        return pogpucb_cost(config)
    if isinstance(config, (ServerAudit, VoteAudit)):
        return audit_cost(config)
    if isinstance(config, OneRunAudit):
        return one_run_cost(config)
    raise ConfigError(f"price needs a configuration (dpbo.FboConfig, HypeConfig, PoConfig, ServerAudit or "
                      f"VoteAudit), got {shown(config)}.", "config")


@api_boundary
def reproduce(paper: str = "dp-fts-de", parts: str | None = None, *, runs: int | None = None,
              seed: int = 0, workers: int | None = None, limits: Limits | None = DEFAULT_LIMITS) -> dict:
    """Reproduce a paper's experiments: curves with standard errors over runs and every claim judged.

    ``paper``: "dp-fts-de", "fts", "dp-hype", "po-gp-ucb" or "all"; ``parts``:
    comma-separated parts (``dpbo reproduce --help`` lists them); ``runs``: runs
    per setting (default the paper's, which takes minutes to hours). Returns
    exactly the dict ``dpbo reproduce`` prints: per part, each setting's curve
    and the claims with their verdicts ("holds", "not significant",
    "reversed"). The stored reproductions at the papers' run counts are read
    with :func:`figure_verdicts` instead. ``limits`` as in :func:`run_fbo` (a
    reproduction stopped early has no result).

    Example
    -------
    >>> import dpbo
    >>> out = dpbo.reproduce("dp-fts-de", "synthetic", runs=2)      # doctest: +SKIP
    >>> sorted(out["parts"])                                          # doctest: +SKIP
    ['synthetic']
    """
    from engine.cli import UsageError, build_parser   # the command's own parser: the same defaults and checks
    from engine.cli import reproduce as command

    argv = ["reproduce", str(paper), "--quiet", "--seed", str(seed)]
    for option, value in (("--parts", parts), ("--runs", runs), ("--workers", workers)):
        if value is not None:
            argv += [option, str(value)]
    try:
        args = build_parser().parse_args(argv)
    except UsageError as error:
        raise ConfigError(str(error), "parts") from None
    priced(command.cost(args), limits, what="This reproduction")
    token = token_for(limits)
    try:
        with guarded(token):
            return command.run(args)
    except Cancelled as error:
        if stop_reason(error, token) == INTERRUPTED:
            raise KeyboardInterrupt from None
        raise time_limit_error(limits, "This reproduction") from None


@api_boundary
def figure_verdicts(figure: str) -> FigureVerdicts | None:
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
