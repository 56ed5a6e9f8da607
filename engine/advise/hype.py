"""DP-HYPE's advice: the number of votes per client k and the noise, for the team's clients, candidates and epsilon.

Every k of :data:`KS` (up to p) is scored on the same simulated votes (the paper's Sec. V-B losses: ``good``
good candidates among ``candidates``, local losses spread by ``sigma_loss``), its noise calibrated to the budget
for that k (:func:`engine.hype.calibration.calibrate_sigma`, the product's RDP conversion): the success rate is
the share of votes whose winner is a good candidate. The k with the highest rate on the search's seed is the
pick; its rate is then measured again on a seed the search never used (the predicted utility), beside the same
vote without noise and one client choosing alone. Ties: a two-proportion test against the pick (the votes share
their losses and noise, so the unpaired standard error is conservative: the tied set is if anything too wide).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from engine.hype.calibration import calibrate_sigma
from engine.hype.config import HypeConfig
from engine.hype.sweeps import evaluate_grid
from engine.hype.voting import per_client_std
from engine.limits import Cost, hype_grid_cost
from engine.reproduce.claims import ALPHA, p_two_sided

KS = (1, 2, 3, 5, 10, 20, 50, 100)
REPETITIONS = 2000            # votes per k on the search's seed, times the effort
SEARCH_SEED, VALIDATION_SEED = 0, 1      # offsets from the request's seed (kept apart by the streams below)
SEED_STRIDE = 1_000_003


def _config(request, repetitions: int, seed: int) -> HypeConfig:
    return HypeConfig(mode="simulation", clients=request.n_agents, candidates=request.candidates, good=request.good,
                      sigma_loss=request.sigma_loss, delta=request.resolved_delta, epsilon=request.epsilon,
                      repetitions=repetitions, seed=seed)


def ks_for(candidates: int) -> tuple[int, ...]:
    return tuple(k for k in KS if k <= candidates) or (1,)


def _seed(request, stream: int) -> int:
    return (int(request.seed) * 2 + stream) * SEED_STRIDE % (2**31 - 2)


def hype_advice_cost(request) -> Cost:
    """The price of :func:`hype_advice`: the grid on the search's seed, and three single points to validate."""
    reps = REPETITIONS * int(request.effort)
    config = _config(request, reps, 0)
    grid = hype_grid_cost(config, len(ks_for(request.candidates)))
    point = hype_grid_cost(config, 1)
    alone = hype_grid_cost(config.replace(clients=1), 1)
    return grid + point + point + alone


@dataclass
class HypeAdvice:
    """DP-HYPE's answer: k, the noise (on the sum and per client) and the success rates behind them."""

    request: object
    k: int
    sigma: float
    per_client: float
    success: float
    stderr: float
    repetitions: int
    table: list[dict] = field(default_factory=list)        # every k on the search's seed
    tied: list[int] = field(default_factory=list)
    references: dict = field(default_factory=dict)
    config: HypeConfig | None = None
    stopped: str | None = None

    @property
    def complete(self) -> bool:
        return self.stopped is None

    def to_json(self) -> dict:
        from engine.cli.hype import command_line

        return {"algorithm": "dp-hype", "clients": self.request.n_agents, "candidates": self.request.candidates,
                "epsilon": float(self.request.epsilon), "delta": self.request.resolved_delta, "accountant": "rdp",
                "complete": self.complete, "stopped": self.stopped,
                "recommended": {"k": self.k, "sigma": self.sigma, "per_client_noise": self.per_client,
                                "success_rate": self.success, "stderr": self.stderr, "runs": self.repetitions,
                                "predicted_from": "validation"},
                "tied": [row for row in self.table if row["k"] in self.tied], "ks": self.table,
                "references": self.references,
                "deploy": {"config": self.config.to_dict(), "command_line": command_line(self.config)}}


def _rate_se(rate: float, n: int) -> float:
    return math.sqrt(max(rate * (1 - rate), 0.25 / n) / n)


def hype_advice(request) -> HypeAdvice:
    """Score every k on one seed, keep the best, re-measure it (and the references) on a fresh seed."""
    reps = REPETITIONS * int(request.effort)
    search = _config(request, reps, _seed(request, SEARCH_SEED))
    ks = ks_for(request.candidates)
    grid = evaluate_grid(search, ks, epsilons=[float(request.epsilon)])
    rates = [float(r) for r in grid.success_rate[0, :, 0]]
    best = max(range(len(ks)), key=lambda i: rates[i])
    table = []
    tied = []
    for i, k in enumerate(ks):
        se = math.hypot(_rate_se(rates[i], reps), _rate_se(rates[best], reps))
        diff = rates[i] - rates[best]
        p = 1.0 if i == best else p_two_sided(diff / se if se > 0 else None)
        table.append({"k": k, "success_rate": rates[i], "stderr": _rate_se(rates[i], reps),
                      "sigma": float(grid.sigmas[i, 0]), "difference": diff, "p": p})
        if i != best and p >= ALPHA:
            tied.append(k)
    k = ks[best]
    fresh = _config(request, reps, _seed(request, VALIDATION_SEED))
    chosen = evaluate_grid(fresh, [k], epsilons=[float(request.epsilon)])
    clear = evaluate_grid(fresh, [k], sigmas=[0.0])
    alone = evaluate_grid(fresh.replace(clients=1), [1], sigmas=[0.0])
    sigma = calibrate_sigma(float(request.epsilon), request.resolved_delta, k)
    success = float(chosen.success_rate[0, 0, 0])
    refs = {}
    for name, result in (("no privacy", clear), ("one client alone", alone)):
        rate = float(result.success_rate[0, 0, 0])
        refs[name] = {"success_rate": rate, "stderr": _rate_se(rate, reps), "difference": success - rate}
    return HypeAdvice(request=request, k=k, sigma=float(sigma), per_client=per_client_std(sigma, request.n_agents),
                      success=success, stderr=_rate_se(success, reps), repetitions=reps, table=table, tied=tied,
                      references=refs, config=fresh.replace(k=k, repetitions=REPETITIONS, seed=0))
