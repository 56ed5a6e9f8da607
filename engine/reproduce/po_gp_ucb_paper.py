"""What the PO-GP-UCB paper prints: its Tables 1-9 and the Fig. 2 numbers of its text (the reproduction's settings
and claims read them, engine.reproduce.po_gp_ucb; the paper's effects, engine.reproduce.effects)."""

from __future__ import annotations

from engine.pogpucb.presets import TABLE_PRESETS

TABLES = {   # table: (part, log epsilon, r values, the paper's regrets, the largest admissible r)
    **{name: ("synthetic", p["log_epsilon"], p["r_values"], p["paper_regret"], p["best_r"])
       for name, p in TABLE_PRESETS.items()},
    "table4": ("loan", 2.7, (3, 6, 8, 10, 15, 20), (0.083, 0.088, 0.078, 0.069, 0.081, 0.076), 10),
    "table5": ("loan", 2.9, (3, 9, 12, 15, 20, 30), (0.091, 0.076, 0.078, 0.077, 0.1, 0.096), 15),
    "table6": ("loan", 3.1, (5, 10, 15, 20, 30, 50), (0.097, 0.091, 0.069, 0.084, 0.104, 0.127), 20),
    "table7": ("property", 2.6, (3, 6, 8, 10, 15, 20), (0.682, 0.516, 0.495, 0.485, 0.485, 0.493), 10),
    "table8": ("property", 2.8, (3, 9, 12, 15, 20, 30), (0.567, 0.553, 0.479, 0.453, 0.493, 0.52), 15),
    "table9": ("property", 3.0, (5, 10, 15, 20, 30, 50), (0.591, 0.523, 0.486, 0.482, 0.489, 0.488), 20),
}
# part: (data set, delta, T, Fig. 2's r, its log epsilons largest first, the paper's extra regret over GP-UCB,
#        the figure)
FIGURES = {
    "synthetic": ("synthetic", 1e-5, 50, 10, (1.1, 0.9, 0.5, 0.0), {1.1: 0.011, 0.9: 0.069, 0.0: 0.099}, "Fig. 2a"),
    "loan": ("loan-like", 1e-5, 50, 15, (2.9, 2.0, 1.0), {2.9: 0.003, 2.0: 0.019, 1.0: 0.05}, "Fig. 2b"),
    "property": ("property-like", 1e-4, 100, 15, (2.8, 1.0, 0.5), {2.8: 0.051, 1.0: 0.017, 0.5: 0.082},
                 "Fig. 2c"),
    "branin": ("branin", 1e-5, 50, 10, (1.1, 0.9, 0.0), {}, "App. A"),
}
STANDIN_WORDS = {"loan": "loan stand-in", "property": "property stand-in"}
