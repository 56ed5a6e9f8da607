"""The paper's own effect of a claim, where the paper prints the numbers: what the rule's power is computed at.

``power["at_paper"]`` (engine.reproduce.power.power_of) is the chance the rule says "holds" if the true difference
were the one the paper reports. Only PO-GP-UCB prints the numbers its claims compare (Tables 1-9: the simple
regret at each r; Fig. 2a-c: each epsilon's extra regret over GP-UCB, in the text), so its claims get one here;
the other papers' effects are in figures this text copy does not carry, and their claims say so by having none.
A difference is in the claim's favour, in the units of the claim's numbers (simple regret in sigma_y).
"""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=1)
def paper_effects() -> dict[str, tuple[float, str]]:
    """{claim sentence: (the paper's difference in the claim's favour, where it comes from)}."""
    from engine.reproduce.po_gp_ucb_paper import FIGURES, STANDIN_WORDS, TABLES

    out = {}
    for table, (part, _, r_values, paper, best) in TABLES.items():
        label = f"Table {table[5:]}"
        words = STANDIN_WORDS.get(part)
        text = f"{label} ({words})" if words else label
        regret = dict(zip(r_values, paper))
        below = [r for r in r_values if r < best]
        above = [r for r in r_values if r > best]

        def source(r: int) -> str:
            return f"PO-GP-UCB {label}: S = {regret[r]:g} at r = {r} against {regret[best]:g} at r = {best}"

        if below:
            out[f"{text}: decreasing r increases regret: r = {best} beats r = {below[-1]}"] = (
                regret[below[-1]] - regret[best], source(below[-1]))
        if above:
            out[f"{text}: r beyond the admissible (the lifting branch) increases regret: r = {best} beats "
                f"r = {above[0]}"] = (regret[above[0]] - regret[best], source(above[0]))
        rival = min((r for r in r_values if r != best), key=regret.get)
        out[f"{text}: the largest admissible r = {best} gives the smallest regret (beats the best other r)"] = (
            regret[rival] - regret[best], source(rival))
    for part, (_, _, T, _, log_eps, extra, figure) in FIGURES.items():
        words = STANDIN_WORDS.get(part)
        fig_text = f"{figure} ({words})" if words else figure
        for bigger, smaller in zip(log_eps, log_eps[1:]):
            if bigger in extra and smaller in extra:
                out[f"{fig_text}: smaller epsilon, more regret: e^{bigger:g} beats e^{smaller:g} after T = {T}"] = (
                    extra[smaller] - extra[bigger], f"PO-GP-UCB {figure}: extra regret {extra[smaller]:g} at "
                                                    f"e^{smaller:g} against {extra[bigger]:g} at e^{bigger:g}")
        for e, paper in extra.items():
            limit = 0.05 if e == log_eps[0] else 0.1
            out[f"{fig_text}: epsilon = e^{e:g} adds little regret over GP-UCB (less than {limit:g} sigma_y; the "
                f"paper: {paper:g})"] = (limit - paper, f"PO-GP-UCB {figure}: {paper:g} below the limit {limit:g}")
    return out


def effect_of(claim: dict) -> tuple[float, str] | None:
    """The paper's effect of ``claim`` and its source (its numbers' ``paper_effect``, else the registry)."""
    numbers = claim.get("numbers", {})
    if numbers.get("paper_effect") is not None:
        return float(numbers["paper_effect"]), str(numbers.get("paper_effect_source", ""))
    return paper_effects().get(claim.get("claim", ""))
