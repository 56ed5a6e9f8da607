"""What a many-trial audit found: the claimed epsilon, the attack's counts in both worlds, and the lower bound."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from engine.audit.bands import exceedances

HISTOGRAM_BINS = 40
METHOD = ("every threshold of a fixed grid at once (Clopper-Pearson at level alpha / thresholds per world, "
          "all trials used; engine.audit.bands)")


@dataclass
class AuditResult:
    """One distinguishing game, played ``trials`` times (half with input D, "in", half with D', "out").

    Attributes
    ----------
    mechanism : {"fbo-server", "hype-votes", "flower"}
    config : ServerAudit, VoteAudit or StrategyAudit
    epsilon_claimed : float
        What the accountant (``accountant``) claims for the mechanism at ``delta``.
    epsilon_canary : float
        What the same accountant gives for this canary's actual shift per release: the most this game could
        ever prove (below the claim when the claim charges a worst case the canary cannot reach, e.g. phi_max
        in every sub-region).
    epsilon_lower : float
        Lower confidence bound (``confidence``) on the mechanism's true epsilon at ``delta``, holding at every
        threshold of every statistic at once (:mod:`engine.audit.bands`); above ``epsilon_claimed`` means a
        violation.
    epsilon_point : float
        The same formula on the raw rates at the chosen threshold (no confidence).
    statistic_used, threshold, tpr, fpr, tpr_lower, fpr_upper
        The statistic and threshold whose test proves ``epsilon_lower``, its rates and their bounds.
    grids, counts : dict
        Per statistic, its :class:`engine.audit.bands.ScoreGrid` and (counts in D, counts in D') on it.
    curve : list of (trials, epsilon_lower)
        The bound after each chunk of trials (each point a bound with ``confidence`` on its own).
    roc_fpr, roc_tpr : ndarray
        ROC of the chosen statistic at the grid's thresholds (all trials, sorted by FPR).
    mu_lower, mu_point, epsilon_gdp : float
        Gaussian-DP: a lower confidence bound on mu (valid for any mechanism, from the same event), its point
        value, and the epsilon at delta of mu_lower-GDP (the mechanism's epsilon only if its trade-off is
        Gaussian, as one Gaussian release is).
    mu_claimed : float or None
        The claim's mu when the mechanism claims exactly Gaussian DP (a DP-HYPE vote; the server at q = 1).
    control : str
        The negative control played (``"none"`` for the mechanism as it is).
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
    statistic_used: str
    threshold: float
    tpr: float
    fpr: float
    tpr_lower: float
    fpr_upper: float
    trials: int
    evaluation_trials: int
    grids: dict
    counts: dict
    curve: list
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
    tests: int = 1
    statistics: dict = field(default_factory=dict)
    control: str = "none"
    cpu_seconds: float | None = None

    @property
    def violation(self) -> bool:
        """The attack proves more than the claim: the implementation is not as private as stated."""
        return self.epsilon_lower > self.epsilon_claimed

    @property
    def fdp_violation(self) -> bool:
        """The attack proves a larger Gaussian-DP mu than a mechanism that claims to be exactly Gaussian has."""
        return self.mu_claimed is not None and self.mu_lower > self.mu_claimed * (1 + 1e-9)

    @property
    def verdict(self) -> str:
        """One sentence for a person."""
        claim = f"claimed epsilon {self.epsilon_claimed:.3g}"
        bound = f"audited lower bound {self.epsilon_lower:.3g} ({self.confidence:.0%} confidence)"
        control = ""
        if self.noise_scale != 1 or self.control != "none":
            what = self.control if self.control != "none" else f"noise scaled by {self.noise_scale:g}"
            control = f" (negative control: {what}, caught as it should be)"
        if self.violation:
            return f"VIOLATION: {bound} exceeds the {claim}; the mechanism is not as private as it says{control}."
        if self.fdp_violation:
            return (f"VIOLATION of its Gaussian-DP claim: the attack proves mu >= {self.mu_lower:.3g} against the "
                    f"claimed mu {self.mu_claimed:.3g} ({self.confidence:.0%} confidence); its (epsilon, delta) "
                    f"bound {self.epsilon_lower:.3g} is below the {claim}{control}.")
        return f"Consistent: {bound} is at most the {claim}."

    def histogram(self, bins: int = HISTOGRAM_BINS, *, pile: bool = True) -> dict:
        """Counts of the chosen statistic in both worlds on about ``bins`` shared bins over the central 99.9 % of
        all scores (and the threshold); scores outside them are counted in the first or last bin, so the counts
        add up to the trials (``pile=False``: left out, as a figure draws them). ``edges`` are grid thresholds."""
        counts_in, counts_out = (np.asarray(c, dtype=np.int64) for c in self.counts[self.statistic_used])
        thresholds = self.grids[self.statistic_used].thresholds
        pooled = np.cumsum(counts_in + counts_out) / max(int((counts_in + counts_out).sum()), 1)
        first = int(np.searchsorted(pooled, 0.0005))                  # fine bin b spans thresholds[b-1 .. b]
        last = int(np.searchsorted(pooled, 0.9995))
        at = int(np.searchsorted(thresholds, self.threshold))
        low = max(0, min(first - 1, at - 1))
        high = min(len(thresholds) - 1, max(last, at + 1))
        group = max(1, int(np.ceil((high - low) / bins)))
        cuts = np.arange(low, high + 1, group)
        if cuts[-1] != high:
            cuts = np.append(cuts, high)
        edges = thresholds[cuts]

        def merged(counts):
            inner = np.add.reduceat(counts, cuts + 1)[:len(cuts) - 1]
            if pile:
                inner[0] += counts[:cuts[0] + 1].sum()
                inner[-1] += counts[cuts[-1] + 1:].sum()
            return inner

        return {"edges": edges, "counts_in": merged(counts_in), "counts_out": merged(counts_out)}

    def to_json(self) -> dict:
        """The CLI's JSON record (counts as a histogram and the ROC, not every grid count)."""
        out = {name: getattr(self, name) for name in (
            "mechanism", "epsilon_claimed", "epsilon_lower", "confidence", "trials", "tpr", "fpr", "threshold",
            "wall_seconds", "cpu_seconds", "epsilon_point", "tpr_lower", "fpr_upper", "epsilon_canary",
            "evaluation_trials", "delta", "accountant", "noise_scale", "control", "mu_lower", "mu_point",
            "epsilon_gdp", "mu_claimed", "statistic_used", "statistic", "statistics", "neighbours", "tests")}
        out["method"] = METHOD
        out["violation"] = self.violation
        out["fdp_violation"] = self.fdp_violation
        out["verdict"] = self.verdict
        out["curve"] = [{"trials": int(n), "epsilon_lower": float(e)} for n, e in self.curve]
        out["histogram"] = self.histogram()
        out["roc"] = {"fpr": self.roc_fpr, "tpr": self.roc_tpr}
        out["config"] = dataclasses.asdict(self.config)
        return out

    def exceedances(self, statistic: str | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(thresholds, scores at or above each in D, in D') of a statistic (the chosen one by default)."""
        name = statistic or self.statistic_used
        counts_in, counts_out = self.counts[name]
        return self.grids[name].thresholds, exceedances(counts_in), exceedances(counts_out)
