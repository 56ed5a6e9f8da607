"""The hype-votes game: one DP-HYPE vote with a canary client whose k votes move to a disjoint set.

What runs
    The noisy vote sum exactly as :func:`engine.hype.run.vote_block` obtains it:
    :func:`engine.hype.voting.noisy_vote_sum` (the summed noise drawn from its
    exact law, the engine's default) or, with ``aggregation="secure-sum"``,
    :func:`engine.hype.voting.secure_sum_votes` (every client adds its share of
    the noise and only the total leaves the simulated secure summation). Both
    are called through the module, so a patched mechanism is the one audited.
    The noise std comes from the run's own calibration
    (:func:`engine.hype.calibration.resolve_noise`); the negative control
    multiplies the noise actually added by ``noise_scale``.

Neighbouring inputs (replace-one, the paper's "Remove-Then-Add", Lemma IV.1)
    n - 1 clients vote for k random candidates each, known to the auditor; the
    canary client votes for candidates A = {0..k-1} in D and B = {k..2k-1} in
    D'. The clean sums differ by e_A - e_B, whose norm sqrt(2k) is the
    sensitivity the calibration assumes, so this pair is the worst case.

The statistic
    The noise is N(0, sigma^2 I), so the log-likelihood ratio of D against D'
    is affine in the projection of (noisy sum - known votes) on e_A - e_B:
    with s that projection scaled to be N(0, 1) in D' and N(mu, 1) in D
    (mu = sqrt(2k) / sigma, sigma the claimed noise), it is mu s - mu^2 / 2 nats.
    Thresholding it is the most powerful test (Neyman-Pearson).
"""

from __future__ import annotations

import numpy as np

from engine.audit.config import VoteAudit
from engine.limits.audit import chunk_trials
from engine.hype import voting
from engine.hype.calibration import resolve_noise
from engine.privacy import gaussian_epsilon

STATISTIC = "projection of the noisy vote sum on the canary's vote change (the exact log-likelihood ratio)"
NEIGHBOURS = "replace-one: the canary client's k votes on candidates A or on a disjoint set B"


class VoteGame:
    """The canary game on DP-HYPE's noisy vote sum (see the module docstring)."""

    def __init__(self, config: VoteAudit):
        self.config = cfg = config
        self.sigma, _ = resolve_noise(cfg.epsilon, cfg.sigma, cfg.delta, cfg.k)
        self.sensitivity = voting.sensitivity(cfg.k)
        n, p, k = cfg.clients, cfg.candidates, cfg.k
        rng = np.random.default_rng((cfg.seed, 2))
        others = voting.top_k_mask(rng.random((n - 1, p)), k).astype(np.int64)
        self.side_a, self.side_b = np.arange(k), np.arange(k, 2 * k)
        self.client_votes = {}
        for world, side in (("in", self.side_a), ("out", self.side_b)):
            canary = np.zeros((1, p), dtype=np.int64)
            canary[0, side] = 1
            self.client_votes[world] = np.vstack([others, canary])
        self.vote_sums = {world: votes.sum(axis=0) for world, votes in self.client_votes.items()}
        known = self.vote_sums["out"]
        self.centre = float(known[self.side_a].sum() - known[self.side_b].sum())   # the projection's mean in D'
        self.noise_std = self.sigma * cfg.noise_scale
        # Secure summation draws one (trials, p) message per client: n times the work.
        self.chunk_trials = chunk_trials(p, n if cfg.aggregation == "secure-sum" else 1)
        self.neighbours = NEIGHBOURS
        self.statistic = STATISTIC
        self.statistics = ("llr",)
        self.descriptions = {"llr": STATISTIC}
        self.mu = self.sensitivity / self.sigma

    def scores(self, world: str, size: int, rng: np.random.Generator) -> np.ndarray:
        cfg = self.config
        if cfg.aggregation == "secure-sum":
            votes = self.client_votes[world]
            reporting = np.ones((size, votes.shape[0]), dtype=bool)
            std = voting.per_client_std(self.noise_std, cfg.clients)
            noisy = voting.secure_sum_votes(np.broadcast_to(votes, (size, *votes.shape)), reporting, std, rng)
        else:
            votes = self.vote_sums[world]
            noisy = voting.noisy_vote_sum(np.broadcast_to(votes, (size, votes.shape[0])), self.noise_std, rng)
        projection = noisy[:, self.side_a].sum(axis=1) - noisy[:, self.side_b].sum(axis=1)
        standard = (projection - self.centre) / (self.sigma * self.sensitivity)
        return {"llr": self.mu * standard - 0.5 * self.mu * self.mu}

    # ------------------------------------------------------------------ accounting
    def epsilon_claimed(self) -> float:
        return gaussian_epsilon(self.sigma, self.config.delta, self.sensitivity, self.config.accountant)

    def epsilon_canary(self) -> float:
        """The canary reaches the full sensitivity: the most this game can show is the claim itself."""
        return self.epsilon_claimed()

    def mu_claimed(self) -> float:
        return self.sensitivity / self.sigma
