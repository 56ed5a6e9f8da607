"""What an audit found: claimed epsilon, the attack's scores in both worlds, and the lower bound."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

HISTOGRAM_BINS = 40


@dataclass
class AuditResult:
    """One distinguishing game, run ``trials`` times (half with input D, "in", half with D', "out").

    Attributes
    ----------
    mechanism : {"fbo-server", "hype-votes"}
    config : ServerAudit or VoteAudit
    epsilon_claimed : float
        What the accountant (``accountant``) claims for the mechanism at ``delta``.
    epsilon_canary : float
        What the same accountant gives for this canary's actual shift per
        release: the most this game could ever prove (below the claim when the
        claim charges a worst case the canary cannot reach, e.g. phi_max in
        every sub-region).
    epsilon_lower : float
        One-sided lower confidence bound (``confidence``) on the mechanism's
        true epsilon at ``delta``; above ``epsilon_claimed`` means a violation.
    epsilon_point : float
        The same formula on the held-out rates themselves (no confidence).
    threshold, tpr, fpr, tpr_lower, fpr_upper : float
        The held-out test "score >= threshold" (chosen on the other half).
    scores_in, scores_out : ndarray
        The attack statistic in every trial of each world (first half chose
        the threshold, second half was held out).
    roc_fpr, roc_tpr : ndarray
        ROC of the held-out halves (sorted by FPR).
    mu_lower, mu_point, epsilon_gdp : float
        Gaussian-DP summary: lower confidence bound on mu, its point value,
        and the epsilon at delta of mu_lower-GDP (a bound only for Gaussian
        trade-offs, see :mod:`engine.audit.stats`).
    mu_claimed : float or None
        The claim's mu when the mechanism is exactly Gaussian (DP-HYPE; the
        server at q = 1), else None.
    """

    mechanism: str
    config: object
    accountant: str
    delta: float
    confidence: float
    epsilon_claimed: float
    epsilon_canary: float
    epsilon_lower: float
    epsilon_point: float
    threshold: float
    tpr: float
    fpr: float
    tpr_lower: float
    fpr_upper: float
    trials: int
    evaluation_trials: int
    scores_in: np.ndarray
    scores_out: np.ndarray
    roc_fpr: np.ndarray
    roc_tpr: np.ndarray
    mu_lower: float
    mu_point: float
    epsilon_gdp: float
    mu_claimed: float | None
    noise_scale: float
    statistic: str
    neighbours: str
    wall_seconds: float

    @property
    def violation(self) -> bool:
        """The attack proves more than the claim: the implementation is not as private as stated."""
        return self.epsilon_lower > self.epsilon_claimed

    @property
    def verdict(self) -> str:
        """One sentence for a person."""
        claim = f"claimed epsilon {self.epsilon_claimed:.3g}"
        bound = f"audited lower bound {self.epsilon_lower:.3g} ({self.confidence:.0%} confidence)"
        if self.violation:
            control = (f" (negative control: noise scaled by {self.noise_scale:g}, caught as it should be)"
                       if self.noise_scale != 1 else "")
            return f"VIOLATION: {bound} exceeds the {claim}; the mechanism is not as private as it says{control}."
        return f"Consistent: {bound} is at most the {claim}."

    def histogram(self, bins: int = HISTOGRAM_BINS) -> dict:
        """Counts of both worlds' scores on shared bins over the central 99.9 % of all scores.

        The range always holds the threshold (the strongest tests sit in a far
        tail); scores outside it are counted in the first or last bin, so the
        counts add up to the trials.
        """
        pooled = np.concatenate([self.scores_in, self.scores_out])
        low, high = np.quantile(pooled, [0.0005, 0.9995])
        low, high = min(low, self.threshold), max(high, self.threshold)
        pad = 0.05 * (high - low) if high > low else 0.5
        low, high = low - pad, high + pad
        edges = np.linspace(low, high, bins + 1)

        def counts(scores):
            return np.histogram(np.clip(scores, low, high), bins=edges)[0]

        return {"edges": edges, "counts_in": counts(self.scores_in), "counts_out": counts(self.scores_out)}

    def to_json(self) -> dict:
        """The CLI's JSON record (scores as a histogram, not one number per trial)."""
        out = {name: getattr(self, name) for name in (
            "mechanism", "epsilon_claimed", "epsilon_lower", "confidence", "trials", "tpr", "fpr", "threshold",
            "wall_seconds", "epsilon_point", "tpr_lower", "fpr_upper", "epsilon_canary", "evaluation_trials",
            "delta", "accountant", "noise_scale", "mu_lower", "mu_point", "epsilon_gdp", "mu_claimed",
            "statistic", "neighbours")}
        out["violation"] = self.violation
        out["verdict"] = self.verdict
        out["histogram"] = self.histogram()
        out["roc"] = {"fpr": self.roc_fpr, "tpr": self.roc_tpr}
        out["config"] = dataclasses.asdict(self.config)
        return out
