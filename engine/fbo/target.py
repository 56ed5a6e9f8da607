"""The FTS paper's setting: target agents and the N other agents that finished before them (Sec. 3.1).

Before a target agent starts, every other agent has completed a BO task of
t_n iterations (``config.other_observations``, default T) and sends one
message: a sample omega_n of its RFF posterior (FTS, M numbers), or nu_n and
Sigma_n^-1 (RGPE, M + M^2) and also its incumbent (TAF, M + M^2 + 1).
As in the authors' code, every other agent's history is one run of standard
TS from random initial points (run_landmine_standard_bo.py:29-31 runs one TS
task per field, generate_agent_info.py:29-59 turns it into the messages), and
the same messages serve every target.

Which agents are targets and which are the others:

* With a dissimilarity d_n (synthetic, :mod:`engine.objectives.fts_synthetic`):
  agent 0 is the one target, agents 1..N the others.
* Otherwise the first ``config.targets`` agents (all by default) are targets,
  batched, and every agent of the task is one of the others, except that a
  target never uses its own message: the landmine experiment (target field l,
  the other 28 fields as the others, run_landmine_federated_bo.py:54-58).

FTS (Algorithm 1): with probability 1 - p_t, p_1 = p_2 (Sec. 5.1 and 5.2;
run_landmine_federated_bo.py:39-40), the target draws an agent from P_N
(uniform), maximises phi(x)^T omega_n, and removes that agent from P_N, which
is renormalised (Sec. 3.1; federated_bayesian_optimization.py:642-650); once
P_N is empty the target only uses its own GP. RGPE and TAF: :mod:`engine.fbo.meta`.

Random numbers: everything about the other agents, the coin of line 3 of
Algorithm 1 and the order in which P_N is used come from a second stream, so
the target's own draws are the same as standard TS's (with p_t = 1 FTS is TS
draw for draw).
"""

from __future__ import annotations

import numpy as np

from engine.cancel import checkpoint
from engine.fbo.agents import AgentPool
from engine.fbo.domain import make_domain
from engine.fbo.meta import (RGPE_SAMPLES, gp_posterior, loo_samples, pair_disagreements, quadratic_forms,
                             rgpe_acquisition, rgpe_weights, rff_predict, taf_acquisition, taf_weights)
from engine.fbo.schedules import one_minus_pt

OTHERS_STREAM = 20   # second random stream: np.random.default_rng([seed, OTHERS_STREAM])


def target_ids(config, n_agents: int) -> tuple[np.ndarray, np.ndarray]:
    """(target agents, other agents) as indices into the objective's agents."""
    if config.dissimilarity is not None:
        return np.array([0]), np.arange(1, n_agents)
    n_targets = n_agents if config.targets is None else min(config.targets, n_agents)
    return np.arange(n_targets), np.arange(n_agents)


class TargetSetting:
    """The other agents' messages and the target agents' choice of query in every iteration.

    Parameters
    ----------
    config : FboConfig
    objective, features, subregions
        As in the simulation.
    make_pool : callable(domain, capacity, sends) -> AgentPool
    """

    def __init__(self, config, objective, features, subregions, make_pool):
        self.config = cfg = config
        self.rng = np.random.default_rng([cfg.seed, OTHERS_STREAM])
        targets, others = target_ids(cfg, objective.n_agents)
        self.target_domain = make_domain(objective, features, subregions, targets)
        self.allowed = targets[:, None] != others[None, :]                        # (Nt, No)
        self.n_allowed = self.allowed.sum(axis=1)
        self.history: list[dict] = []       # FTS: per iteration, which targets used which message
        self.algorithm = cfg.algorithm
        if self.algorithm == "ts":
            return
        t_n = cfg.iterations if cfg.other_observations is None else cfg.other_observations
        domain = make_domain(objective, features, subregions, others)
        pool = make_pool(domain, cfg.n_init + t_n, True)
        pool.initialise(None, cfg.n_init, self.rng)
        for _ in range(t_n):
            checkpoint()
            candidates = domain.candidates(self.rng)
            index = pool.avoid_repeats(pool.own_choice(candidates, self.rng), self.rng)
            pool.query(domain.to_choice(candidates, index), self.rng)
        R, No = pool.n_runs, pool.n_agents
        self.noise_var = pool.shared.noise_var
        if self.algorithm == "fts":
            self.messages = pool.sample_shared(self.rng, 1)[:, :, 0]                  # omega_n, (R, No, M)
            # P_N uniform, each agent used once: a random order per (run, target), its own message last.
            keys = self.rng.random((R, len(targets), No))
            keys[:, ~self.allowed] = np.inf
            self.order = np.argsort(keys, axis=2)
            self.used = np.zeros((R, len(targets)), dtype=int)
        else:
            M = pool.n_features
            self.nu = pool.shared.mean.reshape(R, No, M)
            self.cov = pool.shared.covariance.reshape(R, No, M, M)                    # Sigma_n^-1
            n = pool.shared.count
            self.incumbents = pool.shared.y[:, :n].max(axis=1).reshape(R, No)           # observed best
            self._features = features
            self._at_candidates = None
            self._at_obs = None

    # ------------------------------------------------------------------ choosing
    def choose(self, t: int, pool: AgentPool, candidates, rng: np.random.Generator) -> np.ndarray:
        """Every target's candidate index in iteration t, (R, Nt)."""
        if self.algorithm == "fts":
            return self._fts(t, pool, candidates, rng)
        if self.algorithm in ("rgpe", "taf"):
            return self._meta(pool, candidates, rng)
        return pool.own_choice(candidates, rng)

    def _fts(self, t, pool, candidates, rng):
        cfg = self.config
        # p_1 = p_2 (Sec. 5.1, 5.2): the schedule starts at t = 2.
        p_other = one_minus_pt(cfg.pt_schedule, max(t, 2), constant=cfg.pt_constant)
        use_other = (self.rng.random(self.used.shape) < p_other) & (self.used < self.n_allowed[None, :])
        index = pool.own_choice(candidates, rng, ~use_other)
        slot = np.minimum(self.used, self.order.shape[2] - 1)
        partner = np.take_along_axis(self.order, slot[:, :, None], axis=2)[:, :, 0]   # (R, Nt)
        borrowed = np.take_along_axis(self.messages, partner[:, :, None], axis=1)     # (R, Nt, M)
        index = np.where(use_other, AgentPool.acquire(candidates.phi, borrowed), index)
        self.used += use_other
        self.history.append(dict(used=use_other.copy(), partner=partner, index=index.copy()))
        return index

    def _meta(self, pool, candidates, rng):
        own = pool.own
        R, Nt = pool.n_runs, pool.n_agents
        if own is None:
            # The "shared features only" ablation: the target's own model is its BLR on the shared features.
            shared = pool.shared
            n = shared.count
            M = shared.n_features
            y, theta = shared.y[:, :n], None
            phi_obs = shared.phi[:, :n].reshape(R, Nt, n, M)
            tm, tv = rff_predict(candidates.phi, shared.mean.reshape(R, Nt, M),
                                 shared.covariance.reshape(R, Nt, M, M), shared.noise_var)
        else:
            own.refit_if_due()
            n = own.count
            X, y, theta = own.X[:, :n], own.y[:, :n], own.theta
            phi_obs = self._features(X.reshape(R, Nt, n, -1))
            tm, tv, _ = gp_posterior(X, y, theta, candidates.X)
            tm, tv = tm.reshape(R, Nt, -1), tv.reshape(R, Nt, -1)
        best = y.max(axis=1).reshape(R, Nt)
        if self._at_candidates is None or self._at_candidates[0] is not candidates:
            self._at_candidates = (candidates,) + rff_predict(candidates.phi, self.nu, self.cov, self.noise_var)
        _, om, ov = self._at_candidates
        obs_mean, obs_var = self._others_at_observations(phi_obs)
        y_rt = y.reshape(R, Nt, n)
        if n < 2:
            # Ranking needs two observations: the target's own model alone (the authors learn weights only
            # with more than one initial point, federated_bayesian_optimization.py:196).
            w = np.zeros((R, Nt, obs_mean.shape[2] + 1))
            w[..., -1] = 1.0
            acq = (rgpe_acquisition(w, tm, tv, om[:, None], ov[:, None], best) if self.algorithm == "rgpe"
                   else taf_acquisition(w, tm, tv, best, om[:, None], self.incumbents[:, None, :]))
        elif self.algorithm == "taf":
            w = taf_weights(y_rt, obs_mean, self.allowed[None])
            acq = taf_acquisition(w, tm, tv, best, om[:, None], self.incumbents[:, None, :])
        else:
            S = RGPE_SAMPLES
            losses = np.empty((R, Nt, obs_mean.shape[2] + 1, S))
            for o in range(obs_mean.shape[2]):
                draws = obs_mean[:, :, o, :, None] + np.sqrt(obs_var[:, :, o, :, None]) * rng.standard_normal(
                    (R, Nt, n, S))
                losses[:, :, o] = pair_disagreements(y_rt, draws)
            if theta is None:   # ablation: one joint-free draw per point, the same for every held-out i
                draws = rng.standard_normal((R * Nt, 1, n, S)) + y[:, None, :, None]
                loo = np.broadcast_to(draws, (R * Nt, n, n, S)).reshape(R, Nt, n, n, S)
            else:
                loo = loo_samples(X, y, theta, S, rng).reshape(R, Nt, n, n, S)
            own_at_i = np.einsum("rtiis->rtis", loo)
            pred = own_at_i[:, :, :, None, :] < loo                                   # (R, Nt, i, j, S)
            truth = y_rt[:, :, :, None] < y_rt[:, :, None, :]
            losses[:, :, -1] = np.sum(truth[..., None] ^ pred, axis=(2, 3))
            w = rgpe_weights(losses, self.allowed[None])
            acq = rgpe_acquisition(w, tm, tv, om[:, None], ov[:, None], best)
        self.last_weights = w
        return np.argmax(acq, axis=2)

    def _others_at_observations(self, phi_obs):
        """The other agents' RFF mean and variance at every target's observations (features phi_obs
        (R, Nt, n, M)), (R, Nt, No, n) each, computed once per new observation."""
        R, Nt, n, _ = phi_obs.shape
        No = self.nu.shape[1]
        if self._at_obs is None:
            self._at_obs = (np.zeros((R, Nt, No, 0)), np.zeros((R, Nt, No, 0)))
        mean, var = self._at_obs
        done = mean.shape[3]
        if done < n:
            phi = phi_obs[:, :, done:]                                                 # (R, Nt, k, M)
            new_mean = np.einsum("rtkm,rom->rtok", phi, self.nu)
            new_var = np.moveaxis(quadratic_forms(phi, self.cov, self.noise_var), 1, 2)   # (R, Nt, No, k)
            mean = np.concatenate([mean, new_mean], axis=3)
            var = np.concatenate([var, new_var], axis=3)
            self._at_obs = (mean, var)
        return mean, var
