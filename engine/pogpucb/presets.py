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
