"""Does a federation behave like the engine? Seeded federation runs against the engine's runs at the same settings.

A DP-FTS-DE app deployed with Flower must be the mechanism the engine simulates: the same rounds, the same
subsampling, the same clip and noise, so the same law for its curve. One federation run inside the engine's
min-max envelope says little; :func:`compare_runs` takes the curves of several seeded federation runs (the
agents' mean simple regret after each round, what the ServerApp's summary reports) and the engine's runs at the
same settings, and tests, round by round, whether the federation's mean curve is the engine's: a Welch t-test
per round (the federation's runs and the engine's are independent: different seeds), Bonferroni over the
rounds, and a chi-square test of the number of agents each release selected (Binomial(N, q) under Poisson
sampling in both). ``"same"`` means no round's test rejects at the family-wise level ``alpha``.

What it can see is shown where it is used (``tests/test_flower_compare.py``): strategies changed on purpose
(the noise skipped, the broadcast one round late) run through Flower's round loop in-process
(:mod:`engine.flower.offline`), 20 seeds each, are told apart from the engine, and the exported strategy is not.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import stats

from engine.validation import ConfigError

ALPHA = 0.01


def compare_runs(federation: np.ndarray, engine: np.ndarray, *, alpha: float = ALPHA) -> dict:
    """Round-by-round test of ``federation`` (runs x rounds) against ``engine`` (runs x rounds) curves."""
    federation, engine = np.asarray(federation, float), np.asarray(engine, float)
    if federation.ndim != 2 or engine.ndim != 2 or federation.shape[1] != engine.shape[1]:
        raise ConfigError(f"The federation's curves {federation.shape} and the engine's {engine.shape} must be "
                          "runs x rounds with the same rounds.")
    if len(federation) < 2 or len(engine) < 2:
        raise ConfigError("Compare at least two runs on each side.")
    if not (np.isfinite(federation).all() and np.isfinite(engine).all()):
        raise ConfigError("A curve has missing values (a round without every agent's reply): compare complete runs.")
    rounds = federation.shape[1]
    p_values = []
    for r in range(rounds):
        a, b = federation[:, r], engine[:, r]
        if np.ptp(a) == 0 and np.ptp(b) == 0:
            p_values.append(1.0 if a[0] == b[0] else 0.0)
        else:
            with warnings.catch_warnings():       # one side constant (e.g. every agent used the broadcast)
                warnings.simplefilter("ignore", RuntimeWarning)
                p_values.append(float(stats.ttest_ind(a, b, equal_var=False).pvalue))
    level = alpha / rounds
    differs = [r for r, p in enumerate(p_values) if p < level]
    fed_se = federation.std(axis=0, ddof=1) / np.sqrt(len(federation))
    return {"runs": int(len(federation)), "engine_runs": int(len(engine)), "rounds": rounds, "alpha": alpha,
            "federation_mean": federation.mean(axis=0).tolist(), "federation_stderr": fed_se.tolist(),
            "engine_mean": engine.mean(axis=0).tolist(), "p_values": p_values, "level_per_round": level,
            "differs_at": differs, "same": not differs}


def compare_selected(selected: np.ndarray, n_agents: int, q: float, *, alpha: float = ALPHA) -> dict:
    """Chi-square test that the agents selected per release are Binomial(``n_agents``, ``q``) (Poisson sampling)."""
    counts = np.bincount(np.asarray(selected, int).ravel(), minlength=n_agents + 1)[: n_agents + 1]
    expected = stats.binom.pmf(np.arange(n_agents + 1), n_agents, q) * counts.sum()
    statistic = float(((counts - expected) ** 2 / expected).sum())
    p_value = float(stats.chi2.sf(statistic, n_agents))
    return {"observed": counts.tolist(), "expected": expected.tolist(), "p_value": p_value, "same": p_value >= alpha}


STATISTICS = ("regret_mean", "broadcast_norm", "broadcast_used")


def engine_statistics(config, runs: int, seed: int) -> dict:
    """The engine's runs of an exported ``config`` (``runs`` of them from ``seed``), as the federation reports them.

    Per run: the agents' mean simple regret after each round (T + 1), the broadcast's norm of each release (T)
    and how many agents' queries each release chose (T, iterations 1..T: rounds 2..T + 1 of the federation).
    """
    from engine.fbo.simulation import run_fbo
    from engine.flower.settings import fbo_config, fbo_run_config

    result = run_fbo(fbo_config(fbo_run_config(config)).replace(runs=runs, seed=seed))
    return {"regret_mean": result.run_curves, "broadcast_norm": result.per_release("broadcast_norm"),
            "broadcast_used": result.per_release("used_broadcast"),
            "selected": np.stack([r.n_selected for r in result.records if r.released], axis=1)}


def federation_statistics(summaries: list[dict]) -> dict:
    """The same statistics from federation summaries (one per seeded run), aligned with :func:`engine_statistics`."""
    def column(name: str, rounds: slice) -> np.ndarray:
        return np.array([[np.nan if v is None else v for v in s[name][rounds]] for s in summaries], dtype=float)

    releases = min(int(s["releases"]) for s in summaries)
    return {"regret_mean": column("regret_mean", slice(None)), "broadcast_norm": column("broadcast_norm",
            slice(0, releases)), "broadcast_used": column("broadcast_used", slice(1, releases + 1)),
            "selected": column("selected", slice(0, releases))}


def compare_federation(summaries: list[dict], config, *, engine_runs: int = 400, seed: int = 0,
                       alpha: float = ALPHA) -> dict:
    """Seeded federation runs of ``config`` against the engine's: each statistic round by round, and the sampling.

    Runs in which an agent did not reply (a dropout: its vector counted as zero, a different broadcast by design,
    see docs/flower.md) are left out and listed (``with_dropouts``); the others must be at least two. ``same``
    when no test rejects; the family-wise level ``alpha`` is split evenly over the statistics.
    """
    complete = [s for s in summaries if not any(s["missing"])]
    if len(complete) < 2:
        raise ConfigError(f"Compare at least two federation runs in which every agent replied in every round "
                          f"({len(complete)} of {len(summaries)} did).")
    federation, engine = federation_statistics(complete), engine_statistics(config, engine_runs, seed)
    level = alpha / (len(STATISTICS) + 1)
    tests = {name: compare_runs(federation[name], engine[name], alpha=level) for name in STATISTICS}
    tests["selected"] = compare_selected(federation["selected"], int(config.agents), config.q, alpha=level)
    return {"tests": tests, "same": all(t["same"] for t in tests.values()), "alpha": alpha,
            "runs": len(complete), "engine_runs": engine_runs,
            "with_dropouts": [s.get("seed") for s in summaries if any(s["missing"])]}
