"""A participant's attack on a federation's randomness: what one agent can learn from what it is sent.

A participant of an exported app knows its run config (``pyproject.toml``: every setting, the seed included),
the app's code, its own replies and every broadcast. It does not know the server's environment (a test-only
secret there, :mod:`engine.flower.randomness`) nor the other nodes'. The attack tries to regenerate the noise
that protects the other agents by running the app's own code on that knowledge, and checks its own success
without any ground truth:

DP-FTS-DE (:func:`attack_fbo`)
    A shadow server is built from the public run config exactly as the ServerApp builds it (``factory``, in a
    process that holds no server secret) and replays every release on zero replies: what it adds is the noise
    and the subsample its generator gives. Subtracting that noise (and the participant's own clipped, weighted
    reply, when the shadow selected it) from each broadcast leaves the residual; if the generator was the
    server's, the residual is the other selected agents' clipped, weighted, 1/q-scaled vectors, so in every
    sub-region i its norm is at most sum over them of phi_n^(i) / q * S / sqrt(P). A wrong guess leaves noise
    of std z phi_max S / q in it, which the ball of a release with nobody selected, radius 0, never holds, but
    a larger ball can hold by chance (more often the fewer the features M): ``chance`` is the probability that
    a wrong guess passes every release's check, given the broadcasts (:func:`_wrong_guess_chance`). The attack
    *regenerated* the noise when every release's residual lies in its ball and that chance is at most
    :data:`CONCLUSIVE`; every release passing with a larger chance is inconclusive. Where the shadow selected
    exactly one other agent, the residual divided by its weight is that agent's clipped vector.
DP-HYPE (:func:`attack_hype`)
    Every client's share of the noise is regenerated with the client app's own generator function
    (``generator(seed, index)``) and subtracted from the noisy vote sum; if it was the clients' noise, what is
    left is the clean vote count: integers in 0..n that add up to n k (the self-check), which a wrong guess's
    continuous noise meets within the rounding tolerance with a chance far below :data:`CONCLUSIVE`.

:mod:`engine.flower.participant_targets` runs both on an app played in one process (with the ground truth, to
report the error of what was recovered) for the fixed app and for a copy of the app as it was before, whose
generators came from the public seed.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from scipy.stats import chi2, ncx2

from engine.fbo.weights import subregion_weights
from engine.flower.randomness import NODE_SECRET_ENV, SERVER_SECRET_ENV
from engine.flower.run_config import run_settings
from engine.validation import ConfigError

BALL_SLACK = 1e-9          # relative slack of the reachable ball (floating point)
CONCLUSIVE = 1e-6          # the verdict "regenerated" needs a wrong guess's chance of passing every check below this


@contextlib.contextmanager
def participant_process():
    """This process as a participant's: without the server's or the nodes' test-only secrets."""
    saved = {name: os.environ.pop(name) for name in (SERVER_SECRET_ENV, NODE_SECRET_ENV) if name in os.environ}
    try:
        yield
    finally:
        os.environ.update(saved)


@dataclass
class ParticipantAttack:
    """What the attack found. ``regenerated``: every release passed the self-check."""

    app: str
    releases: int
    explained: int                           # releases whose residual passed the self-check
    estimates: list = field(default_factory=list)      # per release: the attacker's noiseless aggregate / count
    recovered: dict = field(default_factory=dict)      # (release, agent) -> that agent's clipped vector
    ratios: list = field(default_factory=list)         # per release: residual norm / reachable radius (fbo)
    chance: float = 0.0      # the chance a wrong guess passes every release's check (DP-HYPE: a bound on it)

    @property
    def passed(self) -> bool:
        """Every release passed the self-check."""
        return self.releases > 0 and self.explained == self.releases

    @property
    def regenerated(self) -> bool:
        """Every release passed and a wrong guess would have done so with probability at most CONCLUSIVE."""
        return self.passed and self.chance <= CONCLUSIVE


def _clip(vector: np.ndarray, bound: float) -> np.ndarray:
    norm = float(np.linalg.norm(vector))
    return vector / max(1.0, norm / bound)


def _wrong_guess_chance(known: np.ndarray, radius: np.ndarray, std: float, features: int) -> float:
    """The probability that a wrong guess's residual lies in every sub-region's ball of one release.

    ``known``: the broadcast less the participant's own term, per sub-region (P x M). Against a wrong guess the
    shadow's noise is N(0, std^2 I_M) per sub-region, independent of the broadcast and across sub-regions, so
    sub-region i's residual ``known[i] - noise`` lies in its ball with probability P(chi2'_M(lambda_i) <=
    (radius_i / std)^2), lambda_i = |known[i]|^2 / std^2 (noncentral chi-square), and the release's is the
    product. Where that is not finite, Anderson's inequality bounds it by the central chi-square's.
    """
    if std <= 0:
        return 1.0
    limit = (np.asarray(radius, dtype=float) / std) ** 2
    shift = np.sum(np.asarray(known, dtype=float) ** 2, axis=1) / std ** 2
    central = chi2.cdf(limit, features)
    with np.errstate(all="ignore"):
        exact = ncx2.cdf(limit, features, shift)
    exact = np.where(np.isfinite(exact), np.clip(exact, 0.0, 1.0), central)
    return float(np.prod(np.minimum(exact, central)))


def attack_fbo(run_config: dict, broadcasts: list, factory: Callable, own: tuple[int, list] | None = None
               ) -> ParticipantAttack:
    """The attack on a DP-FTS-DE app's releases.

    ``run_config``: the app's run config; ``broadcasts``: release r's broadcast (P x M) at position r - 1;
    ``factory(config)``: the app's server class (the participant has its code); ``own``: (the participant's
    agent index, its reply vector of round r at position r - 1), or None.
    """
    from engine.flower.settings import fbo_config

    config = fbo_config(run_settings(run_config, "fbo"))
    if not config.is_private:
        raise ConfigError("Without differential privacy the server adds no noise: nothing to regenerate.",
                          "algorithm")
    with participant_process():
        shadow = factory(config)
    N, P, M, q = shadow.n_agents, shadow.P, config.features, config.q
    bound = config.S / np.sqrt(P)
    attack = ParticipantAttack(app="fbo", releases=len(broadcasts), explained=0, chance=1.0)
    for r, broadcast in enumerate(broadcasts, start=1):
        broadcast = np.asarray(broadcast, dtype=float).reshape(P, M)
        step = shadow.release(r, np.zeros((N, M)))
        weights = np.asarray(subregion_weights(shadow.assignment, P, r, a=config.weight_a,
                                               schedule=config.weight_schedule, mode=config.weights), dtype=float)
        estimate = broadcast - step.noise          # the noiseless aggregate, if the noise was the server's
        known, others = broadcast, [int(n) for n in np.flatnonzero(step.selected)]
        if own is not None and own[0] in others:
            known = broadcast - np.outer(weights[:, own[0]] / q, _clip(np.asarray(own[1][r - 1], float), bound))
            others.remove(own[0])
        residual = known - step.noise
        radius = weights[:, others].sum(axis=1) / q * bound
        norms = np.linalg.norm(residual, axis=1)
        slack = BALL_SLACK * (radius + step.noise_std * np.sqrt(M))
        inside = bool(np.all(norms <= radius + slack))
        attack.chance *= _wrong_guess_chance(known, radius + slack, step.noise_std, M)
        attack.explained += inside
        attack.ratios.append(float(np.max(norms / np.maximum(radius, slack))))
        attack.estimates.append(estimate)
        if inside and len(others) == 1:          # one other agent: its clipped vector, from its largest weight
            agent = others[0]
            region = int(np.argmax(weights[:, agent]))
            attack.recovered[(r, agent)] = residual[region] / (weights[region, agent] / q)
    return attack


def attack_hype(run_config: dict, noisy_sum, reporters: list[int], generator: Callable,
                own: tuple[int, np.ndarray] | None = None, tolerance: float = 1e-6) -> ParticipantAttack:
    """The attack on a DP-HYPE vote's noisy sum.

    ``reporters``: the clients whose votes are in the sum; ``generator(seed, index)``: the client app's own
    generator function (the participant has its code); ``own``: (the participant's index, its clean 0/1 vote),
    or None; ``tolerance``: how far from integers a clean count may be (SecAgg+'s rounding).
    """
    from engine.flower.settings import hype_config
    from engine.hype.voting import per_client_std

    settings = run_settings(run_config, "hype")
    config = hype_config(settings)
    std = per_client_std(config.sigma, config.clients, config.xi)
    noisy_sum = np.asarray(noisy_sum, dtype=float)
    with participant_process():
        noise = sum((std * generator(config.seed, int(i)).standard_normal(noisy_sum.shape) for i in reporters),
                    np.zeros_like(noisy_sum))
    clean = noisy_sum - noise
    n = len(reporters)
    rounded = np.rint(clean)
    integral = (np.all(np.abs(clean - rounded) <= tolerance) and np.all((rounded >= 0) & (rounded <= n))
                and int(rounded.sum()) == n * int(config.k))
    # A wrong guess leaves the shadow's own noise, std * sqrt(n) per candidate and independent across them, whose
    # density is at most 1 / (sqrt(2 pi) std sqrt(n)): each candidate lands within tolerance of one of the n + 1
    # counts with probability at most (n + 1) 2 tolerance times that.
    spread = std * np.sqrt(max(n, 1))
    per_candidate = 1.0 if spread <= 0 else min(1.0, (n + 1) * 2 * tolerance / (np.sqrt(2 * np.pi) * spread))
    attack = ParticipantAttack(app="hype", releases=1, explained=int(integral), estimates=[clean],
                               chance=float(per_candidate ** noisy_sum.size))
    if integral and own is not None and n == 2:         # two voters: the other's vote is the count minus one's own
        other = next(i for i in reporters if i != own[0])
        attack.recovered[(1, other)] = rounded - np.asarray(own[1], dtype=float)
    return attack
