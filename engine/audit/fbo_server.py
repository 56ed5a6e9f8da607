"""The fbo-server game: T rounds of the DP-FTS-DE server with a canary agent in or out.

What runs
    The engine's own :func:`engine.fbo.server.aggregate_batch` (called through
    the module, so a patched or broken mechanism is the one audited), once per
    release t = 1..T with the weights :func:`engine.fbo.weights.region_weights`
    gives iteration t, exactly as :class:`engine.fbo.Simulation` calls both;
    the agents explore sub-regions round-robin (``Subregions.assign``). The
    negative controls keep the claim and break the mechanism: ``noise_scale``
    multiplies z, i.e. the noise actually added, and ``control`` is one of
    :data:`engine.audit.controls.CONTROLS` (no subsampling, noise reused across
    releases, noise from the public seed).

Neighbouring inputs (as the accountant assumes, :func:`engine.privacy.make_accountant`)
    Poisson sampling, add/remove-one: in D the canary agent sends its vector c
    every round, in D' it is absent. The weights phi and the normaliser 1/q
    are public constants in the paper's analysis (Sec. 3.2, line 10-11 of
    Algorithm 1) and in the accountant, so an absent agent and an agent
    sending the zero vector give the same output law (clip(0) = 0 adds nothing,
    selected or not): D' keeps the canary's row at zero and the mechanism runs
    unchanged. Fixed-size sampling, replace-one: the canary sends c in D and
    -c in D' (the largest change one replaced agent can make).

Canary and the other agents
    c points along the first feature axis with norm ``canary_norm`` times the
    clip bound S / sqrt(P) (1: at the bound, the worst case the clip allows;
    a huge norm checks that clipping happens). The other agents' vectors are
    known to the auditor, orthogonal to c, with norms from 0.5 to 2 times the
    clip bound (so some are clipped): the real code subsamples and clips
    them, yet they carry nothing along c. The canary is the agent whose
    weights give the largest total shift over the T rounds.

The statistic (the exact likelihood ratio)
    The noise is isotropic and independent of everything else, and nothing
    but the canary moves the broadcast along c, so the P projections of a
    release on c are sufficient; within release t the canary moves them along
    a_t = phi_c,t * |c_clipped| / q (its weight in each sub-region), so

        w_t = <a_t, y_t> / (|a_t| sigma_t)  ~  N(b_t m_t, 1),   m_t = |a_t| / sigma_t,

    with sigma_t the noise std the mechanism reports and b_t the canary's
    selection: Bernoulli(p) in D (p = q, or round(N q) / N for fixed-size
    sampling) and 0 in D' (-b_t with replace-one). Releases are independent
    given the inputs (fresh selection, fresh noise), so the log-likelihood
    ratio of D against D' given everything an observer of the releases sees is

        Lambda = sum_t log(1 - p + p exp(m_t w_t - m_t^2 / 2)) - log(1 - p + p exp(m'_t w_t - m'_t^2 / 2)),

    m'_t = 0 (add/remove) or -m_t (replace-one). By Neyman-Pearson, a
    threshold on Lambda is the most powerful test at every false-positive
    rate: no attacker who sees the broadcasts does better in this game. The
    linear projection sum_t m_t w_t is the same test only without
    subsampling (q = 1, Lambda affine in it); with q < 1 it spends its power
    on rounds where the canary was not selected, while Lambda lets a few
    rounds with a large w_t speak and caps every other round's contribution
    near log(1 - p).

    With T >= 2 a second statistic looks for what an honest server never does:
    ``reuse`` is the largest change of the broadcast along the canary between
    two consecutive releases, in units of the two releases' noise,
    max_t max_i |y_t,i - y_t-1,i| / sqrt(sigma_t^2 + sigma_t-1^2). With fresh
    noise it is a maximum of unit Gaussians; with noise reused across releases
    it is exactly 0 unless the canary's selection changed, which gives the
    canary away. Both statistics share the audit's confidence
    (:mod:`engine.audit.bands`).

How tight the claim is for this canary
    The accountant charges every release a shift of phi_max S / q in every
    sub-region (the paper's bound |omega_joint| <= N phi_max S). The canary moves
    sub-region i by phi_c^(i) S / (sqrt(P) q), so m_t = |phi_c,t| / (sqrt(P)
    phi_max,t z) <= 1 / z: equal when the weights are uniform (P = 1, or the
    late rounds of the adaptive schedule), about 1 / (sqrt(P) z) while adaptive
    weights concentrate on the own sub-region. ``epsilon_canary`` is the
    accountant's epsilon for the actual m_t, the most any audit of this game
    can show.
"""

from __future__ import annotations

import math

import dp_accounting as dpa
import numpy as np

from engine.audit.config import ServerAudit
from engine.audit.controls import CONTROL_LABELS, Round
from engine.limits.audit import chunk_trials
from engine.fbo.subregions import Subregions
from engine.fbo.weights import region_weights
from engine.privacy import epsilon, epsilon_of_event, fixed_sample_size

STATISTIC = "exact log-likelihood ratio of the canary's selection mixture, summed over releases"
DESCRIPTIONS = {"llr": STATISTIC,
                "reuse": "largest change of the broadcast along the canary between consecutive releases (noise units)"}
OTHER_NORMS = (0.5, 2.0)   # the other agents' norms, in clip bounds


def _log_mixture(w: np.ndarray, shift: float, log_p: float, log_not_p: float) -> np.ndarray:
    """log((1 - p) + p exp(shift w - shift^2 / 2)), the log density ratio of the mixture to N(0, 1)."""
    if shift == 0:
        return np.zeros_like(w)
    return np.logaddexp(log_not_p, log_p + shift * w - 0.5 * shift * shift)


class ServerGame:
    """The canary game on :func:`engine.fbo.server.aggregate_batch` (see the module docstring)."""

    def __init__(self, config: ServerAudit):
        self.config = cfg = config
        N, P, M, T = cfg.agents, cfg.P, cfg.features, cfg.steps
        assignment = Subregions(P, 1).assign(N)
        # Compact weights (two values per sub-region): T rounds cost O(T (P + N)), never T x P x N.
        self.weights = [region_weights(assignment, P, t, a=cfg.weight_a, schedule=cfg.weight_schedule,
                                       mode=cfg.weights) for t in range(1, T + 1)]
        phi_max = np.array([w.max() for w in self.weights])
        reach = (np.stack([w.agent_norms() for w in self.weights]) / phi_max[:, None]) ** 2          # (T, N)
        self.canary = int(np.argmax(reach.sum(axis=0)))
        phi_c = np.stack([w.column(self.canary) for w in self.weights])                               # (T, P)
        self.directions = phi_c / np.linalg.norm(phi_c, axis=1, keepdims=True)

        clip = cfg.S / math.sqrt(P)
        # The attacker assumes the documented clip; a mechanism that forgets it is caught by the scores.
        self.shift_norms = np.linalg.norm(phi_c, axis=1) * min(cfg.canary_norm, 1.0) * clip / cfg.q  # |a_t|
        self.nominal_shifts = (np.linalg.norm(phi_c, axis=1) * min(cfg.canary_norm, 1.0)
                               / (math.sqrt(P) * phi_max * cfg.z))

        rng = np.random.default_rng((cfg.seed, 3))
        others = rng.standard_normal((N, M))
        others[:, 0] = 0.0
        others *= rng.uniform(*OTHER_NORMS, size=(N, 1)) * clip / np.linalg.norm(others, axis=1, keepdims=True)
        canary = np.zeros(M)
        canary[0] = cfg.canary_norm * clip
        self.vectors = {"in": others.copy(), "out": others.copy()}
        self.vectors["in"][self.canary] = canary
        self.replace_one = cfg.sampling == "fixed"
        self.vectors["out"][self.canary] = -canary if self.replace_one else 0.0

        self.p_selected = fixed_sample_size(cfg.q, N) / N if self.replace_one else cfg.q
        self.log_p = math.log(self.p_selected)
        self.log_not_p = math.log1p(-self.p_selected) if self.p_selected < 1 else -math.inf
        self.chunk_trials = chunk_trials((N + P) * M, T)   # as engine.limits.audit prices it
        self.neighbours = ("replace-one: the canary agent's vector c or -c (fixed-size sampling)" if self.replace_one
                           else "add/remove-one: the canary agent present or absent (Poisson sampling)")
        self.statistic = STATISTIC
        self.statistics = ("llr", "reuse") if T >= 2 else ("llr",)
        self.descriptions = {name: DESCRIPTIONS[name] for name in self.statistics}
        self.control_label = CONTROL_LABELS[cfg.control]

    def scores(self, world: str, size: int, rng: np.random.Generator) -> dict:
        cfg = self.config
        vectors = np.broadcast_to(self.vectors[world], (size, *self.vectors[world].shape))
        mechanism = Round(cfg.control, rng, public_seed=cfg.seed, rows_are_runs=True)
        total = np.zeros(size)
        reuse, previous = np.zeros(size), None
        for t in range(cfg.steps):
            step = mechanism.release(vectors, self.weights[t], q=cfg.q, z=cfg.z * cfg.noise_scale, S=cfg.S,
                                     sampling=cfg.sampling)
            along = step.broadcast[:, :, 0]
            if step.noise_std > 0:
                shift = float(self.shift_norms[t] / step.noise_std)
                w = along @ self.directions[t] / step.noise_std
            else:  # no noise at all: any positive scale separates the worlds as well
                shift, w = 1.0, along @ self.directions[t] / self.shift_norms[t]
            total += _log_mixture(w, shift, self.log_p, self.log_not_p)
            total -= _log_mixture(w, -shift if self.replace_one else 0.0, self.log_p, self.log_not_p)
            if previous is not None:
                spread = math.hypot(step.noise_std, previous[1]) or 1.0
                np.maximum(reuse, np.abs(along - previous[0]).max(axis=1) / spread, out=reuse)
            previous = (along, step.noise_std)
        return {"llr": total, "reuse": reuse} if cfg.steps >= 2 else {"llr": total}

    # ------------------------------------------------------------------ accounting
    def epsilon_claimed(self) -> float:
        cfg = self.config
        return epsilon(cfg.q, cfg.z, cfg.steps, cfg.delta, cfg.accountant, sampling=cfg.sampling,
                       n_agents=cfg.agents)

    def epsilon_canary(self) -> float:
        """The accountant's epsilon for the canary's actual shift per release (see the module docstring)."""
        cfg = self.config
        shifts, counts = np.unique(np.round(self.nominal_shifts, 12), return_counts=True)
        events = []
        for shift, count in zip(shifts, counts):
            if self.replace_one:
                # The c / -c game moves the sum by twice the canary's shift (replace-one sensitivity).
                one = dpa.SampledWithoutReplacementDpEvent(cfg.agents, fixed_sample_size(cfg.q, cfg.agents),
                                                           dpa.GaussianDpEvent(1.0 / (2.0 * shift)))
            else:
                one = dpa.PoissonSampledDpEvent(cfg.q, dpa.GaussianDpEvent(1.0 / shift))
            events.append(dpa.SelfComposedDpEvent(one, int(count)))
        return epsilon_of_event(dpa.ComposedDpEvent(events), cfg.delta, cfg.accountant, cfg.sampling)

    def mu_claimed(self) -> float | None:
        """mu of the claim when it is exactly Gaussian DP: no subsampling, T releases of multiplier z."""
        cfg = self.config
        if cfg.q < 1 or self.replace_one:
            return None
        return math.sqrt(cfg.steps) / cfg.z
