"""A DP-HYPE client's side of Algorithm 1 (lines 1-9), with the numbers SecAgg+ needs.

The client's local data enters through one hook, ``local_losses(p) -> (p,)``
losses (lower is better). :func:`simulated_losses` is the default: the paper's
Sec. V-B clients (good candidates N(0, sigma_loss^2), bad ones
N(1, sigma_loss^2)), drawn from the run's seed and the client's index, with
the good candidates at :func:`engine.hype.simulation.good_positions`, the
same places as in the explorer. :func:`client_vote` is the client's message:
the engine's top-k vote (:func:`engine.hype.voting.top_k_mask`) plus its
share of the noise (:func:`engine.hype.voting.client_step`).

SecAgg+ sums integers: every client clips its message to [-c, c] and rounds
it stochastically onto 2^22 levels (Flower's defaults). :func:`secagg_plan`
chooses c so that clipping happens with negligible probability and says how
large the rounding is next to the DP noise (:func:`quantisation_report`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

from engine.hype.calibration import epsilon_for_sigma
from engine.hype.simulation import good_positions
from engine.hype.voting import client_step, per_client_std, sensitivity, top_k_mask

QUANTIZATION_RANGE = 1 << 22      # Flower's default quantisation levels
MODULUS_RANGE = 1 << 32           # Flower's default modulus
CLIP_SIGMAS = 12.0                # clip range: 1 + 12 per-client standard deviations


def simulated_losses(index: int, candidates: int, good: int, sigma_loss: float, seed: int) -> np.ndarray:
    """Client ``index``'s local losses in the paper's Sec. V-B setting, (p,)."""
    mask = good_positions(candidates, good, seed)
    z = np.random.default_rng((int(seed), 21, int(index))).standard_normal(candidates)
    return sigma_loss * z + (~mask).astype(float)


def client_vote(losses: np.ndarray, k: int, std: float, rng: np.random.Generator) -> np.ndarray:
    """The client's noisy vote vector: 1 for its k smallest losses, plus N(0, std^2) per entry."""
    return client_step(top_k_mask(np.asarray(losses), k).astype(float), std, rng)


@dataclass(frozen=True)
class QuantisationReport:
    """What SecAgg+'s clipping and rounding do to the noisy vote sum of n clients and p candidates."""

    clipping_range: float
    step: float                   # one quantisation level, 2 c / 2^22
    rounding_std_sum: float       # std of the summed rounding errors (unbiased), at most sqrt(n) step / 2
    rounding_max_sum: float       # largest summed rounding error per entry, n step
    noise_std: float              # the DP noise on the sum
    clip_probability: float       # probability that any entry of any client's message is clipped
    epsilon: float                # the vote's epsilon at sensitivity sqrt(2k)
    epsilon_rounding: float       # epsilon when the sensitivity also absorbs 2 sqrt(p) n step (worst case)


def secagg_plan(sigma: float, clients: int, candidates: int, k: int, delta: float, xi: float = 0.0,
                quantization_range: int = QUANTIZATION_RANGE) -> QuantisationReport:
    """The clipping range for SecAgg+ and the size of its quantisation next to the DP noise."""
    std = per_client_std(sigma, clients, xi) if sigma > 0 else 0.0
    clip = 1.0 + CLIP_SIGMAS * std
    step = 2.0 * clip / quantization_range
    # An entry 0 or 1 plus N(0, std^2) leaves [-clip, clip] when |noise| > clip - 1 = 12 std (or clip).
    one = 2.0 * norm.sf(CLIP_SIGMAS) if std > 0 else 0.0
    clip_probability = float(-math.expm1(clients * candidates * math.log1p(-one))) if one else 0.0
    epsilon = epsilon_for_sigma(sigma, delta, k) if sigma > 0 else math.inf
    widened = sensitivity(k) + 2.0 * math.sqrt(candidates) * clients * step
    epsilon_rounding = (epsilon_for_sigma(sigma * sensitivity(k) / widened, delta, k) if sigma > 0
                        else math.inf)
    return QuantisationReport(clipping_range=clip, step=step, rounding_std_sum=math.sqrt(clients) * step / 2,
                              rounding_max_sum=clients * step, noise_std=float(sigma),
                              clip_probability=clip_probability, epsilon=epsilon,
                              epsilon_rounding=epsilon_rounding)


def quantisation_report(report: QuantisationReport) -> str:
    """One paragraph for the README and the log."""
    return (f"SecAgg+ clips each message to +-{report.clipping_range:.4g} (clipping probability over all entries "
            f"{report.clip_probability:.1e}) and rounds onto steps of {report.step:.2e}; the summed rounding error "
            f"has std at most {report.rounding_std_sum:.2e} (at most {report.rounding_max_sum:.2e} per entry) "
            f"against DP noise of std {report.noise_std:.4g} on the sum. Charging the worst-case rounding to the "
            f"sensitivity moves epsilon from {report.epsilon:.6f} to {report.epsilon_rounding:.6f}.")
