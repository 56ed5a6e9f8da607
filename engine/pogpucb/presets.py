"""The paper's experiments as PoConfig overrides (Section 4).

Tables 1-3 fix epsilon and vary r on the synthetic GP; ``paper_regret`` is the
simple regret after 50 iterations they report, ``best_r`` the largest r with
sigma_min >= omega. Fig. 2a fixes r = 10 and varies epsilon (the text names
exp(1.1), exp(0.9) and exp(0.0)).
"""

from __future__ import annotations

SYNTHETIC = dict(dataset="synthetic", delta=1e-5, iterations=50, delta_ucb=0.05)

TABLE_PRESETS = {
    "table1": dict(label="Table 1: ε = exp(1.1), r from 3 to 20", log_epsilon=1.1, r_values=(3, 6, 8, 10, 15, 20),
                   paper_regret=(0.073, 0.038, 0.018, 0.014, 0.118, 0.137), best_r=10, base=SYNTHETIC),
    "table2": dict(label="Table 2: ε = exp(1.3), r from 3 to 30", log_epsilon=1.3, r_values=(3, 9, 12, 15, 20, 30),
                   paper_regret=(0.091, 0.009, 0.019, 0.008, 0.127, 0.134), best_r=15, base=SYNTHETIC),
    "table3": dict(label="Table 3: ε = exp(1.5), r from 5 to 50", log_epsilon=1.5, r_values=(5, 10, 15, 20, 30, 50),
                   paper_regret=(0.05, 0.021, 0.003, 0.002, 0.094, 0.142), best_r=20, base=SYNTHETIC),
}

FIG2A = dict(label="Fig. 2a: r = 10, ε = exp(0.0), exp(0.9), exp(1.1)", r=10, log_epsilons=(0.0, 0.9, 1.1),
             base=SYNTHETIC)


def paper_regret(table: str, r: int) -> float | None:
    """The paper's S_50 for ``r`` in ``table``, or None when the table does not try that r."""
    preset = TABLE_PRESETS[table]
    values = dict(zip(preset["r_values"], preset["paper_regret"]))
    return values.get(int(r))


# Every reproduced figure and table as the page's control values, with the figure its verdicts are stored
# under (engine.reproduce.po_gp_ucb). Tables 1-3 and Fig. 2a run on the synthetic GP; Fig. 2b, Tables 4-6
# on the loan applications stand-in; Fig. 2c, Tables 7-9 on the property prices stand-in.
_PARTS = {"synthetic": dict(dataset="synthetic", delta=1e-5, iterations=50),
          "loan": dict(dataset="loan-like", delta=1e-5, iterations=50),
          "property": dict(dataset="property-like", delta=1e-4, iterations=100)}
_FIGURES = {"fig2a": ("Fig. 2a", "synthetic", 10, (0.0, 0.9, 1.1)),
            "fig2b": ("Fig. 2b", "loan", 15, (1.0, 2.0, 2.9)),
            "fig2c": ("Fig. 2c", "property", 15, (0.5, 1.0, 2.8))}
_TABLES = {"table4": ("loan", 2.7, (3, 6, 8, 10, 15, 20), 10), "table5": ("loan", 2.9, (3, 9, 12, 15, 20, 30), 15),
           "table6": ("loan", 3.1, (5, 10, 15, 20, 30, 50), 20),
           "table7": ("property", 2.6, (3, 6, 8, 10, 15, 20), 10),
           "table8": ("property", 2.8, (3, 9, 12, 15, 20, 30), 15),
           "table9": ("property", 3.0, (5, 10, 15, 20, 30, 50), 20)}


def paper_presets() -> dict:
    """name -> (label, the figure or table it reproduces, control values) for every reproduced figure."""
    out = {}
    for name, (figure, part, r, logs) in _FIGURES.items():
        where = "synthetic GP" if part == "synthetic" else f"{part} stand-in"
        out[name] = (f"{figure}: {where}, r = {r}, ε = " + ", ".join(f"exp({v:g})" for v in logs), figure,
                     dict(_PARTS[part], eps_mode="log", log_epsilon=logs[-1], r=r, compare="epsilon",
                          values=", ".join(f"{v:g}" for v in logs)))
    tables = {name: ("synthetic", p["log_epsilon"], p["r_values"], p["best_r"]) for name, p in TABLE_PRESETS.items()}
    for name, (part, log_eps, r_values, best) in {**tables, **_TABLES}.items():
        figure = f"Table {name[5:]}"
        where = "synthetic GP" if part == "synthetic" else f"{part} stand-in"
        out[name] = (f"{figure}: {where}, ε = exp({log_eps:g}), r from {r_values[0]} to {r_values[-1]}", figure,
                     dict(_PARTS[part], eps_mode="log", log_epsilon=log_eps, r=best, compare="r",
                          values=", ".join(str(r) for r in r_values)))
    return out
