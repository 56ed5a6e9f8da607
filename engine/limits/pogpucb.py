"""The price of PO-GP-UCB (``pogpucb_cost``)."""

from __future__ import annotations

from engine.limits.core import Cost, priced, with_margin

# A GP-UCB query updates the posterior over all n inputs in O(n t); the
# baseline doubles it, a refit of the modeler's kernel every few iterations
# multiplies it by about 5, and building the task (ML fit) costs ~2 s once.
# Measured: 20 runs, T = 50, n = 10,000: 0.52 s (2.8 with the build); 5 runs,
# T = 300: 1.8 s (4.7); refit: 2.4 s (6.0). Memory: building the task peaks at
# about 116 MB (the grid's GP draw and the ML fit), the runs add 2 T n floats.
PO_PER_INPUT_S = 3e-8        # per run, input and iteration
PO_PER_INPUT_T2_S = 2e-10    # per run, input and iteration^2 (the growing Cholesky row)
PO_TASK_S = 2.0
PO_TASK_MB = 150.0
PO_INPUTS = 10_000           # the 100 x 100 grids; diabetes has 442
PO_USUAL = dict(runs=20, iterations=50)


def pogpucb_cost(config, n_inputs: int = PO_INPUTS) -> Cost:
    """Cost of ``run_pogpucb(config)`` (a PoConfig) on ``n_inputs`` inputs."""
    R, T = int(config.runs), int(config.iterations)
    methods = 2 if config.baseline else 1
    refit = 5 if config.hyperparameters == "refit" else 1
    seconds = PO_TASK_S + R * methods * refit * n_inputs * (PO_PER_INPUT_S * T + PO_PER_INPUT_T2_S * T * T)
    memory = PO_TASK_MB + 2 * T * n_inputs * 8 / 1e6
    return priced(with_margin("pogpucb", seconds), memory,
                  [("runs", R, PO_USUAL["runs"], 1), ("iterations", T, PO_USUAL["iterations"], 1)])
