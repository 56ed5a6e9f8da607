"""The settings advisor from Python: ``dpbo.advise`` (the ``dpbo advise`` command's answer, priced, stoppable)."""

from __future__ import annotations

from typing import Callable

from engine.advise import Advice, AdviceRequest, HypeAdvice, advice_of_search, hype_advice, iter_search, request_cost
from engine.api.common import DEFAULT_LIMITS, INTERRUPTED, priced, stop_reason, time_limit_error, token_for
from engine.api.fbo import _agents
from engine.cancel import Cancelled, guarded
from engine.executor import Executor, use
from engine.limits.machine import Limits
from engine.objectives.base import Objective
from engine.objectives.own import own_objective
from engine.progress import Progress
from engine.validation import ConfigError, api_boundary, shown

CALLBACK = "callback"


def _request(request, fields: dict) -> AdviceRequest:
    if request is None:
        return AdviceRequest(**fields)
    if not isinstance(request, AdviceRequest):
        raise ConfigError(f"request must be a dpbo.AdviceRequest, e.g. dpbo.AdviceRequest(agents=50), got "
                          f"{shown(request)}.", "request")
    return request.replace(**fields) if fields else request


def _objective(request: AdviceRequest, objective, *, box, minimise, optimum, agents, per_agent, vectorised, name,
               noise) -> Objective | None:
    if objective is None or isinstance(objective, Objective):
        if box is not None:
            raise ConfigError("box describes your own objective: pass the function as objective=.", "objective")
        return objective
    if request.algorithm != "dp-fts-de":
        raise ConfigError("DP-HYPE's advice simulates its clients' votes: give no objective.", "objective")
    if box is None:
        raise ConfigError("Give the box of your objective: box=[(low, high), ...], one pair per coordinate.", "box")
    n = _agents(agents) or request.agents or AdviceRequest().n_agents
    return own_objective(objective, box, minimise=minimise, optimum=optimum, agents=n, per_agent=per_agent,
                         vectorised=vectorised, name=name, noise_std=noise)


@api_boundary
def advise(request: AdviceRequest | None = None, objective: Callable | Objective | None = None, *, box=None,
           minimise: bool = False, optimum: float | None = None, agents: int | None = None, per_agent: bool = False,
           vectorised: bool = False, name: str | None = None, noise: float = 0.0, executor: Executor | None = None,
           callback: Callable[[Advice], object] | None = None, progress: bool | None = None,
           limits: Limits | None = DEFAULT_LIMITS, **fields) -> Advice | HypeAdvice:
    """The DP-FTS-DE setting (q, z, S, P, 1 - p_t) that meets a budget and does best on a task, or DP-HYPE's k
    and noise: what ``dpbo advise`` prints (``advise(...).to_json()`` is its JSON).

    Give the request as a :class:`AdviceRequest` or as its fields (the command line's options and ``--config``
    keys): ``dpbo.advise(agents=50, iterations=40, epsilon=4, delta=1e-5)``; fields given with a request
    change it. The task: a built-in data set (``dataset``), a proxy (``dataset="proxy"`` with ``dimension``,
    ``lengthscale``, ``noise``, ``heterogeneity``), or your own function (``objective``, ``box`` and the rest
    as in :func:`run_fbo`; its N is ``agents``).

    Every setting the search tries meets epsilon exactly (z calibrated by the product's RDP accountant for its
    q and T). Settings are compared on common random numbers; the pick's utility is measured again on seeds
    the search never used (``recommended.utility`` with ``recommended.stderr``, in the task's metric,
    ``metric_label``; lower is better unless it says higher). The search runs on ``executor`` (default:
    worker processes on this machine; ``dpbo``'s Dask executor scales it out). A request that no setting meets
    is a ConfigError naming what to relax (epsilon, or T).

    Parameters
    ----------
    callback : callable, optional
        Called with the :class:`Advice` so far after every finished task of the search; returning True stops it
        there (``stopped == "callback"``).
    progress, limits
        As in :func:`run_fbo`: a progress line on stderr; the search is priced first and refused above
        ``limits`` (one sentence naming the knob), and a time limit stops it. Stopped early (a callback, Ctrl-C,
        the time limit) the advice is what the search found so far (``complete`` False, ``stopped`` says why).

    Returns
    -------
    Advice
        ``recommended`` (q, z, S, P, pt_schedule, utility, stderr, runs), ``epsilon_spent`` (the budget),
        ``tied`` (the settings a paired test cannot tell from the pick), ``references`` (``"fts-de"``: the same
        task without privacy; ``"ts"``: each agent alone; their ``difference`` from the pick), ``sensitivity``
        (a proxy smoother, rougher, more heterogeneous), ``deployment`` (the FboConfig to run),
        ``command_line``, ``config_text()``, ``export_flower(out)``, ``flower_zip()``; DP-HYPE: a
        :class:`HypeAdvice` (``k``, ``sigma`` on the sum, ``per_client`` noise, ``success``).

    Example
    -------
    >>> import dpbo
    >>> advice = dpbo.advise(agents=6, iterations=4, epsilon=4, sensitivity=False, executor=dpbo.Executor("local"))
    >>> sorted(advice.recommended.knobs.fields()), round(advice.epsilon_spent, 3)
    (['P', 'S', 'pt_schedule', 'q'], 4.0)
    >>> advice.command_line.startswith("python -m engine fbo --agents 6 --iterations 4")
    True
    """
    request = _request(request, dict(fields, **({} if agents is None else {"agents": _agents(agents)})))
    own = _objective(request, objective, box=box, minimise=minimise, optimum=optimum, agents=agents,
                     per_agent=per_agent, vectorised=vectorised, name=name, noise=noise)
    if own is not None:
        request = request.replace(agents=int(own.n_agents))
    priced(request_cost(request, own, executor=executor), limits, what="This search")
    if request.algorithm == "dp-hype":
        return hype_advice(request)
    token = token_for(limits)
    search, reason = None, None
    line = None
    try:
        with use(executor), guarded(token):
            for search in iter_search(request, own):
                if line is None:
                    line = Progress("advise", search.plan.tasks(), enabled=progress, unit="task")
                line.update(search.tasks_done, search.stage)
                if callback is not None and callback(advice_of_search(search)):
                    reason = CALLBACK
                    break
    except Cancelled as error:
        reason = stop_reason(error, token)
    except KeyboardInterrupt:
        if search is None:
            raise
        reason = INTERRUPTED
    finally:
        if line is not None:
            line.close(None if reason is None else f"{reason} after {search.tasks_done} of {search.plan.tasks()} "
                                                   "tasks")
    if search is None:
        raise time_limit_error(limits, "This search")
    return advice_of_search(search, reason)
