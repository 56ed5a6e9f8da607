"""The price of DP-HYPE: repeated votes (``hype_cost``, both modes) and grids of them (``hype_grid_cost``)."""

from __future__ import annotations

from engine.limits.core import Cost, priced, with_margin

# Simulation: every repetition draws n x p losses and sorts them (exact: 2000
# reps, n = 250, p = 100: 0.90 s (1.5); p = 1000: 10.8 s (15); secure summation
# client by client, 500 reps: 0.53 s (0.75)). Data mode trains every candidate on every client once per
# run (n = 100 with 1000 votes: 3.2 s (4.0); n = 500: 14 s (20); counted even
# when cached) and votes cheaply. Memory: a block of at most 2.5 M losses
# (31 MB (80)); data mode 245 MB (260) at n = 100, 839 MB (900) at n = 500.
HYPE_BASE_S = 0.02           # the run's setup and its summary, whatever its size
HYPE_SIM_S = 30e-9           # per repetition x client x candidate
HYPE_SECURE_SUM_S = 60e-9
HYPE_DATA_VOTE_S = 2e-9
HYPE_TRAIN_S = 0.04          # per client and run (data mode score table)
HYPE_USUAL = dict(repetitions=2000, clients=250, candidates=100, runs=1)


def hype_cost(config) -> Cost:
    """Cost of ``run_hype(config)`` (a HypeConfig)."""
    R, n, p = int(config.repetitions), int(config.clients), int(config.p)
    per_vote = HYPE_SECURE_SUM_S if config.aggregation == "secure-sum" else (
        HYPE_SIM_S if config.mode == "simulation" else HYPE_DATA_VOTE_S)
    seconds = HYPE_BASE_S + R * n * p * per_vote
    elements = max(2_500_000, n * p)
    memory = 40 + elements * (24 if config.aggregation == "secure-sum" else 16) / 1e6
    knobs = [("repetitions", R, HYPE_USUAL["repetitions"], 1), ("clients", n, HYPE_USUAL["clients"], 1)]
    if config.mode == "simulation":
        knobs.append(("candidates", p, HYPE_USUAL["candidates"], 1))
    else:
        runs = int(config.runs)
        seconds += runs * n * HYPE_TRAIN_S
        memory = max(memory, 100 + 1.6 * n)
        knobs.append(("runs", runs, HYPE_USUAL["runs"], 1))
    return priced(with_margin("hype", seconds), memory, knobs)


# A grid (evaluate_grid) draws and sorts each block's losses for every loss spread and votes for every k;
# every (k, noise) point then adds a noisy argmax and the bound over the p candidates. Measured CPU seconds
# (estimate): one spread, 2 points, 2000 repetitions, n = 250, p = 100: 0.55 (1.5); the Fig. 2a grid
# (6 spreads x 12 points): 1.24 (4.1), each further spread about 2.8e-9 s per repetition, client and
# candidate; 200 points: 0.76 (1.9); 40 points, p = 1000: 7.3 (15.8).
HYPE_SPREAD_S = 1e-8         # per repetition x client x candidate and loss spread after the first
HYPE_POINT_S = 1e-8          # per repetition, loss spread, grid point and candidate: the noisy argmax and the bound


def hype_grid_cost(config, points: int, sigma_losses: int = 1) -> Cost:
    """Cost of ``evaluate_grid`` over ``points`` (k, noise) pairs and ``sigma_losses`` loss spreads.

    The points share each block's losses and sorts (common random numbers);
    data mode reads the score tables of the run it follows (in memory).
    """
    R, n, p = int(config.repetitions), int(config.clients), int(config.p)
    S = max(1, int(sigma_losses))
    per_vote = HYPE_SIM_S if config.mode == "simulation" else HYPE_DATA_VOTE_S
    seconds = R * (n * p * (per_vote + (S - 1) * HYPE_SPREAD_S) + S * int(points) * p * HYPE_POINT_S)
    memory = 40 + max(2_500_000, n * p) * 16 * S / 1e6
    return priced(with_margin("hype", seconds), memory, [("repetitions", R, HYPE_USUAL["repetitions"], 1),
                                   ("clients", n, HYPE_USUAL["clients"], 1),
                                   ("candidates", p, HYPE_USUAL["candidates"], 1)])
