"""Success probability (and, on data, accuracy) over grids of k and epsilon, sharing the work.

One block of repetitions draws its losses and its standard-normal noise once;
every (k, epsilon) pair reuses them (the clean votes of all k come from one
ordering of each client's losses, the noise is ``std(k, epsilon) * z``). So a
whole grid costs little more than its largest k, and all its points are
compared on common random numbers: the same seed gives the same losses and
noise draws, and a curve over epsilon is smooth rather than jittery.

This is the paper's Fig. 2a (success against sigma_loss for several k and
epsilon) and the page's curves against epsilon with Theorem V.1's bound.
Only the exact summed-noise path is used here (equal in law to the
client-by-client secure summation, see :mod:`engine.hype.voting`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from engine.cancel import checkpoint
from engine.hype.calibration import calibrate_sigma, effective_noise, epsilon_for_sigma
from engine.hype.config import HypeConfig
from engine.hype.setup import block_votes, make_setup
from engine.hype.simulation import block_length, block_rng, blocks
from engine.hype.utility import mean_interval, success_bound, wilson_interval
from engine.hype.voting import noisy_argmax
from engine.validation import ConfigError, check_int, check_positive, check_range

# The paper's Fig. 2a settings (Sec. V-B): p = 100, |H_good| = 5, n = 250, delta = 1e-5,
# epsilon in {0.25, 1}; the k values and the sigma_loss axis are read off the figure's setup.
FIG2A_KS = (1, 3, 5, 10, 25, 100)
FIG2A_EPSILONS = (0.25, 1.0)
FIG2A_SIGMA_LOSSES = (0.1, 0.2, 0.3, 0.5, 0.75, 1.0)
# Fig. 2b: |H_good| = 2^i with sigma_loss = 0.2.
FIG2B_GOODS = (1, 2, 4, 8, 16, 32, 64)
# The success curve against epsilon or k around one setting (the page's), and its repetitions per point
# (the points share losses and noise, so they are cheap).
CURVE_EPSILONS = (0.1, 0.25, 0.5, 1.0, 3.0)
CURVE_KS = (1, 2, 3, 5, 10, 20, 50, 100)
CURVE_REPETITIONS = 1000


def curve_axis(config: HypeConfig, against: str, epsilon: float) -> tuple[tuple, tuple]:
    """``(ks, epsilons)`` of the success curve of ``config`` against ``"epsilon"`` or ``"k"``.

    Against epsilon: the standard epsilons plus the setting's own (``epsilon``,
    when finite) at the setting's k. Against k: every standard k up to p plus
    the setting's own, at ``epsilon``.
    """
    if against == "epsilon":
        own = {float(epsilon)} if math.isfinite(epsilon) else set()
        return (config.k,), tuple(sorted(set(CURVE_EPSILONS) | own))
    return tuple(sorted({k for k in CURVE_KS if k <= config.p} | {config.k})), (float(epsilon),)


@dataclass
class GridResult:
    """Outcome of every (sigma_loss, k, noise) triple: arrays of shape (S, K, E).

    S indexes ``sigma_losses`` (one entry in data mode or when not varied),
    K the values of k and E the noise levels.
    """

    sigma_losses: tuple
    ks: tuple
    epsilons: np.ndarray       # (K, E): the epsilon of each noise level (inf without noise)
    sigmas: np.ndarray         # (K, E): std of the noise on the sum before dropouts
    successes: np.ndarray      # (S, K, E)
    bound_sum: np.ndarray      # (S, K, E)
    repetitions: int
    accuracy: np.ndarray | None = None        # data mode: (K, E, runs) mean chosen accuracy per run
    opt: np.ndarray | None = None             # data mode: per run
    randguess: np.ndarray | None = None       # data mode: per run

    @property
    def success_rate(self) -> np.ndarray:
        return self.successes / self.repetitions

    @property
    def bound(self) -> np.ndarray:
        return self.bound_sum / self.repetitions

    def success_ci(self) -> np.ndarray:
        """(S, K, E, 2) Wilson 95 % intervals."""
        flat = [wilson_interval(int(s), self.repetitions) for s in self.successes.ravel()]
        return np.array(flat).reshape(self.successes.shape + (2,))

    def accuracy_interval(self) -> np.ndarray | None:
        """(K, E, 3): mean, low, high of DP-HYPE's accuracy over runs (a point with one run)."""
        if self.accuracy is None:
            return None
        return np.array([[mean_interval(cell) for cell in row] for row in self.accuracy])

    def to_json(self) -> dict:
        out = {"sigma_losses": list(self.sigma_losses), "ks": list(self.ks), "epsilons": self.epsilons,
               "sigmas": self.sigmas, "success_rate": self.success_rate, "success_ci": self.success_ci(),
               "bound": self.bound, "repetitions": self.repetitions}
        if self.accuracy is not None:
            out.update(accuracy_dp_hype=self.accuracy_interval(), accuracy_opt=mean_interval(self.opt),
                       accuracy_randguess=mean_interval(self.randguess))
        return out


def noise_grid(config: HypeConfig, ks, epsilons=None, sigmas=None) -> tuple[np.ndarray, np.ndarray]:
    """(sigma, epsilon) arrays of shape (K, E) for noise given as epsilons or as sigmas."""
    if (epsilons is None) == (sigmas is None):
        raise ConfigError("Give either a list of epsilon values or of sigma values.", "epsilon")
    if epsilons is not None:
        epsilons = [check_positive("epsilon", e) for e in epsilons]
        sigma = np.array([[calibrate_sigma(e, config.delta, k) for e in epsilons] for k in ks])
        return sigma, np.broadcast_to(np.asarray(epsilons, dtype=float), sigma.shape).copy()
    sigma = np.array([[check_range("sigma", s, 0) for s in sigmas] for _ in ks], dtype=float)
    return sigma, np.array([[epsilon_for_sigma(s, config.delta, k) for s in row] for row, k in zip(sigma, ks)])


def evaluate_grid(config: HypeConfig, ks=None, epsilons=None, sigmas=None, sigma_losses=None,
                  load_table=None) -> GridResult:
    """Success rate and mean Theorem V.1 bound for every sigma_loss, k and noise level.

    Give the noise as ``epsilons`` (calibrated per k with ``config.delta``) or as
    ``sigmas`` (std on the sum, the same for every k). ``sigma_losses``
    (simulation only) defaults to the config's. ``config`` supplies everything
    else (its own k and epsilon/sigma are not used); ``load_table`` as for
    :func:`engine.hype.run.iter_hype`.
    """
    ks = tuple(int(k) for k in (ks if ks is not None else (config.k,)))
    for k in ks:
        check_int("k", k, 1)
        if k > config.p:
            raise ConfigError(f"k must be at most the number of candidates p ({config.p}), got {k}.", "k")
    if sigma_losses is not None and config.mode != "simulation":
        raise ConfigError("Varying sigma_loss needs simulation mode.", "mode")
    if config.mode == "simulation":
        sigma_losses = tuple(check_positive("sigma_loss", s) for s in (sigma_losses or (config.sigma_loss,)))
    else:
        sigma_losses = (None,)
    sigma, eps = noise_grid(config, ks, epsilons, sigmas)
    noise = np.vectorize(lambda s: effective_noise(s, config.clients, config.xi, config.dropped))(sigma)
    setup = make_setup(config, load_table)
    shape = (len(sigma_losses),) + sigma.shape
    successes = np.zeros(shape, dtype=np.int64)
    bound_sum = np.zeros(shape)
    data = config.mode == "data"
    accuracy = np.stack([t.test_accuracy for t in setup.tables]) if data else None
    chosen_sum = np.zeros(sigma.shape + (config.runs,)) if data else None
    chosen_count = np.zeros(config.runs) if data else None
    start = 0
    for index, size in blocks(config.repetitions, block_length(config.clients, config.p)):
        checkpoint()
        rng = block_rng(config.seed, index)
        votes, _, runs, _ = block_votes(setup, rng, start, size, ks,
                                        sigma_losses=sigma_losses if not data else None)
        z = rng.standard_normal((size, setup.p))
        ties = rng.random((size, setup.p))
        good = np.broadcast_to(setup.good_of(runs), (size, setup.p))
        if data:
            chosen_count += np.bincount(runs, minlength=config.runs)
        for si, ki, ei in np.ndindex(*shape):
            std = noise[ki, ei]
            clean = votes[si, ki]
            winners = noisy_argmax(clean + std * z, std, ties)
            successes[si, ki, ei] += int(good[np.arange(size), winners].sum())
            if runs is None:
                bound_sum[si, ki, ei] += float(success_bound(clean, setup.good, std).sum())
            else:
                for run in np.unique(runs):
                    rows = runs == run
                    bound_sum[si, ki, ei] += float(success_bound(clean[rows], setup.tables[run].good, std).sum())
                chosen_sum[ki, ei] += np.bincount(runs, weights=accuracy[runs, winners], minlength=config.runs)
        start += size
    result = GridResult(sigma_losses, ks, eps, sigma, successes, bound_sum, config.repetitions)
    if data:
        used = chosen_count > 0
        result.accuracy = chosen_sum[..., used] / chosen_count[used]
        result.opt, result.randguess = accuracy[used].max(axis=1), accuracy[used].mean(axis=1)
    return result


def success_grid(config: HypeConfig, sigma_losses=FIG2A_SIGMA_LOSSES, ks=FIG2A_KS,
                 epsilons=FIG2A_EPSILONS) -> GridResult:
    """The paper's Fig. 2a: success rate and bound per (sigma_loss, k, epsilon), simulation mode.

    Values of k above the number of candidates are left out.
    """
    if config.mode != "simulation":
        raise ConfigError("The sigma_loss grid needs simulation mode.", "mode")
    return evaluate_grid(config, [k for k in ks if k <= config.p], epsilons=epsilons, sigma_losses=sigma_losses)


def good_count_grid(config: HypeConfig, goods=FIG2B_GOODS, ks=FIG2A_KS, epsilons=FIG2A_EPSILONS) -> dict:
    """The paper's Fig. 2b: success rate per (|H_good|, k, epsilon), simulation mode."""
    if config.mode != "simulation":
        raise ConfigError("The |H_good| grid needs simulation mode.", "mode")
    goods = [g for g in goods if g <= config.candidates]
    rates, bounds = [], []
    for good in goods:
        grid = evaluate_grid(config.replace(good=int(good)), ks, epsilons=epsilons)
        rates.append(grid.success_rate[0])
        bounds.append(grid.bound[0])
    return {"goods": goods, "ks": list(ks), "epsilons": list(epsilons), "success_rate": np.array(rates),
            "bound": np.array(bounds), "repetitions": config.repetitions}
