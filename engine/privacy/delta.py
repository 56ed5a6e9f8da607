"""The one delta policy of the product: the default delta of a guarantee for N participants, and when a delta is weak.

Every place that needs a default delta (the API, the command line, the pages, a run's plan, the Flower export)
calls :func:`default_delta` with the configuration's delta rule:

``product`` (the default everywhere)
    delta = 1e-5, or 1 % of 1/N when that is smaller: far below 1/N for every N, so a mechanism that
    released one participant's data outright with probability delta would do so for about one participant
    in a hundred thousand runs (or fewer), not one in every run.
``paper``
    delta = 1 / N^1.1, the DP-FTS-DE paper's convention (after DP-FedAvg), used where a page or a reproduction
    follows the paper and labelled as the paper's. It is close to 1/N (0.17 for 5 agents, 0.0029 for 200),
    which :func:`delta_weakness` says in one sentence.
"""

from __future__ import annotations

from engine.validation import check_choice, check_int

DELTA_RULES = ("product", "paper")
DELTA_RULE_LABELS = {"product": "1e-5, or 1 % of 1/N when smaller (product)",
                     "paper": "1/N^1.1 (the DP-FTS-DE paper's)"}
PRODUCT_DELTA = 1e-5
PRODUCT_DELTA_SHARE = 0.01     # the product's delta is at most this share of 1/N
WEAK_DELTA_SHARE = 0.1         # a delta of at least this share of 1/N gets a warning


def product_delta(n_agents: int) -> float:
    """The product's delta for N participants: 1e-5, or 1 % of 1/N when that is smaller."""
    return min(PRODUCT_DELTA, PRODUCT_DELTA_SHARE / int(n_agents))


def paper_delta(n_agents: int) -> float:
    """delta = 1 / N^1.1, the convention of the DP-FTS-DE paper (after DP-FedAvg); only a little below 1/N."""
    return float(n_agents) ** -1.1


DELTA_RULE_FUNCTIONS = {"product": product_delta, "paper": paper_delta}


def default_delta(n_agents: int, rule: str = "product") -> float:
    """The delta of a guarantee for ``n_agents`` participants under ``rule`` (:data:`DELTA_RULES`).

    ``product`` (the default everywhere: API, command line, pages, the Flower export): 1e-5, or 1 % of 1/N
    when that is smaller, far below 1/N for every N. ``paper``: the DP-FTS-DE paper's 1 / N^1.1, used where a
    page or a reproduction follows the paper (0.17 for 5 agents: close to 1/N, see :func:`delta_weakness`).
    """
    check_choice("delta_rule", rule, DELTA_RULES)
    n = check_int("agents", n_agents, 2 if rule == "paper" else 1, name="number of participants N")
    return DELTA_RULE_FUNCTIONS[rule](n)


def delta_weakness(delta: float, n_agents: int) -> str | None:
    """One sentence when ``delta`` is not far below 1/N (at least a tenth of it), else None.

    A delta near 1/N allows a mechanism that releases one participant's data outright with probability
    delta, i.e. about one participant in every such run; a reviewer expects delta well below 1/N.
    """
    n = int(n_agents)
    if float(delta) < WEAK_DELTA_SHARE / n:
        return None
    return (f"delta = {float(delta):.3g} is {float(delta) * n:.0%} of 1/N = {1.0 / n:.3g} for {n} participants: a "
            "guarantee this weak can allow releasing one participant's data outright; the product's default is "
            f"delta = {product_delta(n):.3g}.")
