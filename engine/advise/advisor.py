"""The settings advisor from a request to an answer: what the runs optimise, the price, the search's steps.

:func:`iter_search` yields the search's state as it grows (:class:`engine.advise.search.Search`);
:func:`advice_of_search` turns a state into the answer (:class:`engine.advise.result.Advice`), so a page takes
the answer only when it draws. DP-HYPE's advice is one light computation (:func:`engine.advise.hype.hype_advice`).
"""

from __future__ import annotations

import dataclasses
from typing import Iterator

from engine.advise.evaluate import Task
from engine.advise.hype import HypeAdvice, hype_advice, hype_advice_cost
from engine.advise.request import PROXY, AdviceRequest
from engine.advise.result import Advice, advice_of
from engine.advise.search import Plan, Search
from engine.advise.space import base_fields, grid, is_real, levels, paper_knobs, run_config
from engine.executor import Executor, current
from engine.fbo.plan import objective_ready
from engine.limits import Cost, advice_cost, fbo_cost, objective_cost
from engine.objectives import build_objective, dataset_label
from engine.objectives.base import Objective
from engine.objectives.own import OwnObjective
from engine.objectives.proxy import MAX_LENGTHSCALE, MIN_LENGTHSCALE, SYNTHETIC_PROXY, Proxy, grid_axes, root_axes
from engine.validation import ConfigError

ROUNDS = 4                     # executor jobs of a search: screen, narrow, final (with sensitivity), validation
MORE_DIFFERENT = 0.3           # the sensitivity row's heterogeneity step


@dataclasses.dataclass(frozen=True)
class Prepared:
    """A request made concrete: the task's runs, its sensitivity rows, how to describe it."""

    request: AdviceRequest
    task: Task
    rows: list
    dataset: str                     # the grid's kind: a data set, "proxy" or "own"
    description: str


def task_of(request: AdviceRequest, objective: Objective | None = None) -> Prepared:
    """What the runs of ``request`` optimise (``objective``: a researcher's own function, its N fixed)."""
    if objective is not None:
        n = int(objective.n_agents)
        if request.agents is not None and int(request.agents) != n:
            raise ConfigError(f"The objective serves {n} agents and the request asks for {request.agents}: give "
                              f"agents={n} (or leave it out).", "agents")
        request = request.replace(agents=n)
        base = base_fields("synthetic", n, request.iterations, request.resolved_delta)
        return Prepared(request, Task(base=base, objective=objective), [], "own",
                        getattr(objective, "description", "") or objective.name)
    n = request.n_agents
    proxy = request.proxy
    base = base_fields(request.dataset, n, request.iterations, request.resolved_delta, proxy=proxy)
    task = Task(base=base, proxy=proxy)
    described = proxy.describe() if proxy is not None else dataset_label(request.dataset)
    rows = []
    if request.sensitivity and not is_real(request.dataset):
        rows = sensitivity_rows(task, proxy or SYNTHETIC_PROXY)
    return Prepared(request, task, rows, request.dataset, described)


def sensitivity_rows(task: Task, proxy: Proxy) -> list[tuple[str, Task]]:
    """(label, Task) for a smoother, a rougher and a more heterogeneous proxy than ``proxy`` (a row that would
    not change anything is left out)."""
    changes = [("smoother", dict(lengthscale=min(MAX_LENGTHSCALE, 2 * proxy.lengthscale))),
               ("rougher", dict(lengthscale=max(MIN_LENGTHSCALE, proxy.lengthscale / 2))),
               ("agents more different", dict(heterogeneity=min(1.0, proxy.heterogeneity + MORE_DIFFERENT)))]
    rows = []
    for word, change in changes:
        changed = dataclasses.replace(proxy, **change)
        if changed == proxy:
            continue
        name, value = next(iter(change.items()))
        rows.append((f"{word} ({name} {value:g})", task.with_proxy(changed)))
    return rows


def request_cost(request: AdviceRequest, objective: Objective | None = None, *,
                 executor: Executor | None = None) -> Cost:
    """What the advice costs, known before anything runs (the command line's and the page's price)."""
    if request.algorithm == "dp-hype":
        return hype_advice_cost(request)
    prepared = task_of(request, objective)
    task, request = prepared.task, prepared.request
    n = int(task.base["agents"])
    kind = prepared.dataset if prepared.dataset != "own" else "synthetic"
    lv = levels(kind, n)
    settings = len(grid(kind, n))
    plan = Plan(settings, int(request.effort), len(prepared.rows))
    widest = paper_knobs(kind)
    widest = dataclasses.replace(widest, P=max(lv["P"]), q=max(lv["q"]))
    config = run_config(task.base, widest, 1.0)
    candidates = None
    own = None
    if isinstance(objective, OwnObjective):
        own = {"dim": objective.dim, "refit_every": objective.own_refit_every}
    elif task.proxy is not None:
        candidates = len(grid_axes(task.proxy.dimension)[0]) ** task.proxy.dimension
    draw = objective_cost("synthetic", n, alpha=getattr(task.proxy, "heterogeneity", None))
    if not task.draws:
        draw = Cost(0.0, 0.0, "agents")
    run = fbo_cost(config, n, candidates, objective=draw, accounting=False, own=own)
    table = None
    if is_real(prepared.dataset) and prepared.dataset != "own":
        table = objective_cost(prepared.dataset, n, table_ready=objective_ready(config))
    proxies = ([task.proxy] if task.proxy is not None else []) + [row.proxy for _, row in prepared.rows]
    executor = executor or current()
    workers = executor.processes(plan.tasks())
    return advice_cost(run, plan.total_runs, calibrations=len(lv["q"]), steps=int(request.iterations),
                       rounds=ROUNDS, workers=workers, effort=int(request.effort), agents=n, objective=table,
                       axes=tuple(axis for proxy in proxies for axis in root_axes(proxy)))


def planned_tasks(request: AdviceRequest) -> int:
    """How many items :func:`iter_search` yields for ``request`` at most (a progress bar's length)."""
    if request.algorithm == "dp-hype":
        return 1
    prepared = task_of(request)
    kind = prepared.dataset if prepared.dataset != "own" else "synthetic"
    return Plan(len(grid(kind, prepared.request.n_agents)), int(request.effort), len(prepared.rows)).tasks() + 2


def iter_search(request: AdviceRequest, objective: Objective | None = None, *,
                executor: Executor | None = None) -> Iterator[Search]:
    """The search of ``request``'s advice, yielded after its calibration and after every finished task."""
    prepared = task_of(request, objective)
    dim = 1
    if objective is not None:
        dim = objective.dim
    elif prepared.task.proxy is not None:
        dim = prepared.task.proxy.dimension
    elif is_real(prepared.dataset):
        base = prepared.task.base       # build (or load) the task's table here once, before the workers need it
        dim = build_objective(base["dataset"], n_agents=base["agents"], split=base.get("split")).dim
    search = Search(prepared.request, prepared.task, prepared.rows,
                    prepared.dataset if prepared.dataset != "own" else "synthetic")
    search.description, search.dim = prepared.description, int(dim)
    with (executor or current()).session() as kept:      # one set of worker processes for every round
        yield from search.steps(kept)


def advice_of_search(search: Search, stopped: str | None = None) -> Advice:
    """The answer of ``search`` as it stands (``stopped``: why it ended early)."""
    return advice_of(search, task=getattr(search, "description", ""), metric_label=search.metric_label,
                     scale=-1.0 if search.metric_label.endswith("(higher is better)") else 1.0, stopped=stopped)


def advise_now(request: AdviceRequest, objective: Objective | None = None, *,
               executor: Executor | None = None) -> Advice | HypeAdvice:
    """The whole advice, computed here (the command line and the API drive :func:`iter_search` themselves)."""
    if request.algorithm == "dp-hype":
        return hype_advice(request)
    search = None
    for search in iter_search(request, objective, executor=executor):
        pass
    return advice_of_search(search)


__all__ = ["PROXY", "Prepared", "advice_of_search", "advise_now", "iter_search", "planned_tasks", "request_cost",
           "task_of"]
