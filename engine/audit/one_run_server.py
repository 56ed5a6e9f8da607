"""The fbo-server in one run: m canary agents, each in the federation with probability 1/2, all T releases once.

The federation
    N = m agents, all canaries (the other agents of a real run are orthogonal to every canary, so they add
    nothing along a canary's direction and are left out, as in :mod:`engine.audit.fbo_server`); canary j points
    along its own axis j with norm ``canary_norm`` clip bounds S / sqrt(P) when it is in, and sends the zero
    vector (the output law of an absent agent, the public weights unchanged) when it is out. They explore
    sub-regions round-robin and get the weights :func:`engine.fbo.weights.region_weights` gives release t.

What runs, sparsely
    Release t broadcasts, in sub-region i, sum over the selected agents of phi_n^(i) / q times their clipped
    vectors, plus Gaussian noise of std z phi_max S / q on every coordinate; along canary j's axis that is
    phi_j^(i) / q times canary j's clipped vector if it is selected, plus that coordinate's noise. So only the m
    coordinates along the canaries matter, and they are drawn by the engine's own
    :func:`engine.fbo.server.aggregate_batch`, one batch row per canary: a row holds the canary's coordinate
    and a second agent holding the column of the largest weight (so the round's phi_max, hence its noise, is
    the federation's), one call per release and sub-region group. Each canary's selection and its coordinate's
    noise are independent draws in both, so the rows have the law of the one release: O(m T) work, not
    O(m^2 T) (10^4 canaries x 40 releases take well under a second).

The auditor's scores (one per canary and statistic, from the broadcasts and the public configuration only)
    ``llr``: the log-likelihood ratio of the canary's selection mixture summed over releases (as the many-trial
    game's); ``reuse`` (T >= 2): the largest change between consecutive releases along the canary, in noise units
    (0 when noise is reused and the canary's selection did not change); ``shadow``: the auditor rebuilds the
    server from the public configuration (its seed included), replays every release on zero vectors and scores
    the residual broadcast - replay as ``llr`` with the noise of the difference of two draws: a server whose
    noise comes from the public seed leaves exactly the canaries' signal, any other leaves noise.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import dp_accounting as dpa
import numpy as np

from engine.audit.config import OneRunAudit
from engine.audit.controls import CONTROL_LABELS, Round
from engine.audit.fbo_server import _log_mixture
from engine.audit.one_run import OneRunBound, one_run_bound
from engine.audit.stats import CONFIDENCE
from engine.cancel import checkpoint
from engine.fbo.subregions import Subregions
from engine.fbo.weights import region_weights
from engine.privacy import epsilon, epsilon_of_event

STATISTICS = {
    "llr": "log-likelihood ratio of the canary's selection mixture, summed over releases",
    "reuse": "largest change along the canary between consecutive releases (noise units)",
    "shadow": "llr of the broadcast minus the server replayed from the public configuration on zero vectors",
}


@dataclass
class OneRunResult:
    """One run of the canary federation and what its guesses prove (``to_json`` is the CLI's record)."""

    config: object
    mechanism: str
    epsilon_claimed: float
    epsilon_canary: float
    bound: OneRunBound
    scores: dict
    included: np.ndarray
    accountant: str
    delta: float
    statistics: dict
    neighbours: str
    control: str
    noise_scale: float
    wall_seconds: float
    cpu_seconds: float
    notes: dict

    @property
    def epsilon_lower(self) -> float:
        return self.bound.epsilon_lower

    @property
    def violation(self) -> bool:
        return self.bound.epsilon_lower > self.epsilon_claimed

    @property
    def verdict(self) -> str:
        claim = f"claimed epsilon {self.epsilon_claimed:.3g}"
        bound = (f"one-run lower bound {self.epsilon_lower:.3g} from {self.bound.canaries:,} canaries "
                 f"({self.bound.confidence:.0%} confidence)")
        control = ""
        if self.noise_scale != 1 or self.control != "none":
            what = CONTROL_LABELS.get(self.control) if self.control != "none" else f"noise x{self.noise_scale:g}"
            control = f" (negative control: {what}, caught as it should be)"
        if self.violation:
            return f"VIOLATION: {bound} exceeds the {claim}; the mechanism is not as private as it says{control}."
        return f"Consistent: {bound} is at most the {claim}."

    def histogram(self, bins: int = 40) -> dict:
        """The chosen statistic's scores of the canaries that were in and of those that were out."""
        name = self.bound.best.statistic if self.bound.best else next(iter(self.scores))
        values = np.asarray(self.scores[name], dtype=float)
        low, high = np.quantile(values, [0.001, 0.999]) if values.size else (0.0, 1.0)
        edges = np.linspace(low, high if high > low else low + 1.0, bins + 1)
        clipped = np.clip(values, edges[0], edges[-1])
        return {"statistic": name, "edges": edges,
                "counts_in": np.histogram(clipped[self.included], bins=edges)[0],
                "counts_out": np.histogram(clipped[~self.included], bins=edges)[0]}

    def to_json(self) -> dict:
        bound = self.bound

        def guess(g):
            return None if g is None else {"statistic": g.statistic, "guess_in": g.k_in, "guess_out": g.k_out,
                                           "correct": g.correct}

        return {"mechanism": self.mechanism, "audit": "one-run", "epsilon_claimed": self.epsilon_claimed,
                "epsilon_lower": bound.epsilon_lower, "epsilon_fdp": bound.epsilon_fdp,
                "epsilon_canary": self.epsilon_canary, "confidence": bound.confidence, "delta": self.delta,
                "accountant": self.accountant, "canaries": bound.canaries, "included": bound.included,
                "guesses": guess(bound.best), "guesses_fdp": guess(bound.best_fdp), "candidates": bound.candidates,
                "by_canaries": [{"canaries": n, "epsilon_lower": e} for n, e in bound.nested],
                "violation": self.violation, "verdict": self.verdict, "control": self.control,
                "noise_scale": self.noise_scale, "statistics": self.statistics, "neighbours": self.neighbours,
                "histogram": self.histogram(), "wall_seconds": self.wall_seconds, "cpu_seconds": self.cpu_seconds,
                "notes": self.notes, "config": dict(self.config.__dict__) if hasattr(self.config, "__dict__")
                else {}}


class OneRunServer:
    """The canary federation of :class:`OneRunAudit` on :func:`engine.fbo.server.aggregate_batch`."""

    def __init__(self, config: OneRunAudit):
        self.config = cfg = config
        m, P = cfg.canaries, cfg.P
        self.assignment = Subregions(P, 1).assign(m)
        self.groups = [np.flatnonzero(self.assignment == g) for g in range(P)]
        self.groups = [g for g in self.groups if len(g)]
        self.weights = [region_weights(self.assignment, P, t, a=cfg.weight_a, schedule=cfg.weight_schedule,
                                       mode=cfg.weights) for t in range(1, cfg.steps + 1)]
        self.clip = cfg.S / math.sqrt(P)
        self.included = np.random.default_rng((cfg.seed, 41)).random(m) < 0.5

    def columns(self, t: int, group: np.ndarray) -> np.ndarray:
        """(P, 2): the group's weight column and the column holding the round's largest weight."""
        weights = self.weights[t]
        columns = [weights.column(int(g[0])) for g in self.groups]
        strongest = columns[int(np.argmax([c.max() for c in columns]))]
        return np.stack([weights.column(int(group[0])), strongest], axis=1)

    def run(self, cancel=None) -> dict:
        """One run: every canary's scores (name -> (m,) array)."""
        cfg = self.config
        m, T = cfg.canaries, cfg.steps
        rng = np.random.default_rng((cfg.seed, 43))
        mechanism = Round(cfg.control, rng, public_seed=cfg.seed, rows_are_runs=False)
        shadow = Round("public-seed", None, public_seed=cfg.seed, rows_are_runs=False)
        scores = {"llr": np.zeros(m), "shadow": np.zeros(m)}
        if T >= 2:
            scores["reuse"] = np.zeros(m)
        previous = {}
        for t in range(T):
            checkpoint()
            if cancel is not None and cancel():
                from engine.audit.game import AuditCancelled

                raise AuditCancelled("The audit was cancelled.")
            for slot, group in enumerate(self.groups):
                columns = self.columns(t, group)
                vectors = np.zeros((len(group), 2, 1))
                vectors[:, 0, 0] = cfg.canary_norm * self.clip * self.included[group]
                step = mechanism.release(vectors, columns, q=cfg.q, z=cfg.z * cfg.noise_scale, S=cfg.S,
                                         sampling="poisson", slot=slot)
                replay = shadow.release(np.zeros_like(vectors), columns, q=cfg.q, z=cfg.z, S=cfg.S,
                                        sampling="poisson", slot=slot)
                along, sigma = step.broadcast[:, :, 0], step.noise_std or 1.0       # (R, P), the std reported
                phi = columns[:, 0]
                direction = phi / np.linalg.norm(phi)
                reach = np.linalg.norm(phi) * min(cfg.canary_norm, 1.0) * self.clip / cfg.q   # the canary's shift
                log_p, log_not_p = math.log(cfg.q), (math.log1p(-cfg.q) if cfg.q < 1 else -math.inf)
                scores["llr"][group] += _log_mixture(along @ direction / sigma, reach / sigma, log_p, log_not_p)
                both = math.hypot(sigma, replay.noise_std)
                residual = (along - replay.broadcast[:, :, 0]) @ direction / both
                scores["shadow"][group] += _log_mixture(residual, reach / both, log_p, log_not_p)
                if slot in previous:
                    before, before_sigma = previous[slot]
                    spread = math.hypot(sigma, before_sigma)
                    scores["reuse"][group] = np.maximum(scores["reuse"][group],
                                                        np.abs(along - before).max(axis=1) / spread)
                previous[slot] = (along, sigma)
        return scores

    # ------------------------------------------------------------------ accounting
    def epsilon_claimed(self) -> float:
        cfg = self.config
        return epsilon(cfg.q, cfg.z, cfg.steps, cfg.delta, cfg.accountant, n_agents=cfg.canaries)

    def epsilon_canary(self) -> float:
        """The accountant's epsilon for a canary of sub-region 0's actual shift per release (the most provable)."""
        cfg = self.config
        shifts = []
        for t in range(cfg.steps):
            columns = self.columns(t, self.groups[0])
            shifts.append(np.linalg.norm(columns[:, 0]) * min(cfg.canary_norm, 1.0)
                          / (math.sqrt(cfg.P) * columns[:, 1].max() * cfg.z))
        values, counts = np.unique(np.round(shifts, 12), return_counts=True)
        events = [dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(cfg.q, dpa.GaussianDpEvent(1.0 / s)), int(c))
                  for s, c in zip(values, counts)]
        return epsilon_of_event(dpa.ComposedDpEvent(events), cfg.delta, cfg.accountant, "poisson")


NEIGHBOURS = "add/remove-one for each canary: in the run with probability 1/2, independently of the others"


def run_one_run(config: OneRunAudit, *, confidence: float = CONFIDENCE, cancel=None) -> OneRunResult:
    """Run the canary federation once and bound epsilon from the guesses (Steinke et al.; f-DP beside it)."""
    wall, cpu = time.perf_counter(), time.process_time()
    game = OneRunServer(config)
    scores = game.run(cancel)
    bound = one_run_bound(scores, game.included, config.delta, confidence)
    return OneRunResult(config=config, mechanism="fbo-server", epsilon_claimed=float(game.epsilon_claimed()),
                        epsilon_canary=float(game.epsilon_canary()), bound=bound, scores=scores,
                        included=game.included, accountant=config.accountant, delta=config.delta,
                        statistics={name: STATISTICS[name] for name in scores}, neighbours=NEIGHBOURS,
                        control=config.control, noise_scale=config.noise_scale,
                        wall_seconds=time.perf_counter() - wall, cpu_seconds=time.process_time() - cpu,
                        notes={"m_canaries_cost": "O(m T) rows of engine.fbo.server.aggregate_batch"})
