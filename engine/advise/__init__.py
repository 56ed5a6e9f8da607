"""The settings advisor: from a team's N, T, budget and task to the DP-FTS-DE (or DP-HYPE) setting to deploy.

``AdviceRequest`` (:mod:`engine.advise.request`) is what a team asks; :func:`iter_search` computes the search
(:mod:`engine.advise.search`: successive halving on common random numbers over the settings that meet the budget,
:mod:`engine.advise.space`) on the one executor, and :func:`advice_of_search` turns its state into the answer
(:mod:`engine.advise.result`); :func:`request_cost` prices it first. DP-HYPE: :mod:`engine.advise.hype`.
docs/advisor.md describes the method and the evidence behind it.
"""

from engine.advise.advisor import advice_of_search, advise_now, iter_search, planned_tasks, request_cost, task_of
from engine.advise.hype import HypeAdvice, hype_advice
from engine.advise.request import ALGORITHMS, TASKS, AdviceRequest
from engine.advise.result import Advice, Row

__all__ = ["ALGORITHMS", "Advice", "AdviceRequest", "HypeAdvice", "Row", "TASKS", "advice_of_search", "advise_now",
           "hype_advice", "iter_search", "planned_tasks", "request_cost", "task_of"]
