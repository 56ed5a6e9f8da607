"""The federated BO simulation: TS, FTS, FTS-DE, DP-FTS and DP-FTS-DE, all runs at once.

``Simulation(config)`` prepares everything (objective, privacy curve, random
features, sub-regions); iterating over it yields one :class:`IterationRecord` per
iteration, computed lazily, so a page can draw after each record and a caller can
stop early. ``run_fbo(config)`` runs to the end.

Algorithms (``config.algorithm``):

``ts``
    Every agent alone: Thompson sampling from its own GP posterior.
``fts``
    Original FTS (FTS paper, Algorithm 1). ``target`` variant, the paper's setting
    (:mod:`engine.fbo.target`): the other agents first complete t_n iterations of TS
    and send one sampled omega each; the target agents then use, with probability
    1 - p_t (p_1 = p_2), the omega of an agent drawn from P_N, which is removed from
    P_N. ``concurrent`` variant (App. D.2.1's general setting): all agents run
    together and borrow the current omega of a uniformly drawn other agent.
``rgpe``, ``taf``
    The meta-learning rivals adapted through the RFF approximation (Sec. 3.2,
    :mod:`engine.fbo.meta`), in the target setting.
``fts-de``, ``dp-fts``, ``dp-fts-de``
    DP-FTS-DE (Algorithms 1 and 2): every iteration the server aggregates the
    agents' omegas per sub-region (:mod:`engine.fbo.server`) and broadcasts them;
    with probability 1 - p_t an agent maximises phi(x)^T omega^(i[x]) instead of
    its own sample. ``fts-de`` uses every agent without clipping or noise (P = 1
    is the paper's "modified FTS"); ``dp-fts`` is P = 1 with DP.

Privacy: the release after iteration t - 1 is used in iteration t, so T
iterations make T releases and the record of iteration t reports epsilon after t
releases. With a budget the server stops once the next release would exceed it;
agents then continue with their own TS and spend no more privacy (paper
footnote 13).

Agents (:mod:`engine.fbo.agents`): an agent's own Thompson sample comes from its
own GP posterior (``config.own_sampler``); the vector it sends comes from the
Bayesian linear regression on the shared random features, drawn after each
iteration (bayesian_optimization_dp_fts_de.py:234). A query the agent has
already made on a table is replaced by a random candidate, as the authors'
agents do.
"""

from __future__ import annotations

import time

import numpy as np

from engine.blas import single_threaded_blas
from engine.cancel import checkpoint
from engine.fbo.agents import AgentPool
from engine.heap import retain_freed_memory
from engine.fbo.config import FboConfig
from engine.fbo.domain import make_domain
from engine.fbo.plan import make_plan
from engine.fbo.records import FboResult, IterationRecord
from engine.fbo.schedules import one_minus_pt
from engine.fbo.server import aggregate_batch
from engine.fbo.subregions import Subregions
from engine.fbo.target import TargetSetting
from engine.fbo.weights import region_weights
from engine.objectives import build_objective
from engine.objectives import fts_synthetic
from engine.objectives.base import Objective
from engine.objectives.own import OwnObjective
from engine.surrogate import sample_features


INITIAL_STREAM = 21   # the target agents' initial inputs in the FTS paper's setting


class Simulation:
    """A lazily computed federated BO experiment (all ``config.runs`` runs as one batch).

    ``server_options`` (class attribute, empty: the paper's server) is set only by the reproduction's ablations
    (engine.reproduce.ablation_runs): switches of :func:`engine.fbo.server.aggregate_batch`.

    Parameters
    ----------
    config : FboConfig
    objective : Objective, optional
        Built from the config (``engine.objectives.build_objective``) when omitted.

    Attributes
    ----------
    plan : RunPlan
        What the run does before its first iteration (:mod:`engine.fbo.plan`);
        the attributes below repeat its parts for the simulation's own use.
    n_agents, delta, z, objective, metric_label, releases_allowed, epsilon_curve
        ``z`` is the noise multiplier used (calibrated when ``config.calibrate_z``);
        ``releases_allowed`` is how many server releases the run makes (T without a
        budget, 0 for algorithms without a server); ``epsilon_curve`` is epsilon
        after 1..T releases (None without DP).
    P, lengthscale, noise_var
        Sub-regions used (1 unless the algorithm uses DE) and the shared features' settings.
    refit_every
        Re-fit period of the agents' own GPs (0: the task's fixed hyperparameters).
    target_setting : engine.fbo.target.TargetSetting or None
        The FTS paper's setting (other agents' messages, P_N), for TS with d_n or targets, FTS
        (target variant), RGPE and TAF; None otherwise.
    domain, subregions, assignment, pool
        Exist once the first record is computed: the candidate set and its
        features (``domain.X``, ``domain.phi`` (R, C, M) for tables), the
        sub-regions, each agent's sub-region, and the agents' posteriors.
    """

    server_options: dict = {}

    def __init__(self, config: FboConfig, objective: Objective | None = None):
        start = time.perf_counter()
        self.config = config
        if objective is None and config.dissimilarity is not None:
            objective = fts_synthetic.build(config.agents, config.dissimilarity, config.objective_seed)
        if objective is None:
            objective = build_objective(config.dataset, n_agents=config.agents, alpha=config.alpha,
                                        seed=config.objective_seed, domain=config.domain,
                                        split=config.split)
        self.objective = objective
        # What the run will do and release (agents, delta, z, epsilon curve, budget) is its plan.
        self.plan = plan = make_plan(config, objective)
        self.n_agents = plan.n_agents
        self.P = plan.n_subregions
        self.metric_label = objective.metric_label
        self.lengthscale = float(config.lengthscale or objective.lengthscale)
        self.noise_var = float(config.noise_var or objective.noise_var)
        self.refit_every = int(objective.own_refit_every if config.refit_every is None else config.refit_every)
        self.delta, self.z = plan.delta, plan.z
        self.epsilon_curve = plan.epsilon_curve
        self.releases_allowed = plan.releases
        self.budget_reached_at = plan.budget_reached_at

        self._rng = np.random.default_rng(config.seed)
        self._records: list[IterationRecord] = []
        self._t: int | None = None          # last iteration computed
        self._seconds = time.perf_counter() - start

    # ------------------------------------------------------------------ iteration protocol
    def __iter__(self):
        """Yield the records so far, then compute and yield the rest one at a time."""
        i = 0
        while True:
            if i < len(self._records):
                yield self._records[i]
                i += 1
            elif self.done:
                return
            else:
                self.step()

    @property
    def done(self) -> bool:
        return self._t is not None and self._t >= self.config.iterations

    def step(self) -> IterationRecord:
        """Compute the next iteration and return its record."""
        if self.done:
            raise RuntimeError("The simulation has already produced all its iterations.")
        checkpoint()
        start = time.perf_counter()
        retain_freed_memory()
        with single_threaded_blas():
            record = self._initialise() if self._t is None else self._iterate(self._t + 1)
        self._records.append(record)
        self._seconds += time.perf_counter() - start
        return record

    def result(self, upto: int | None = None, stopped: str | None = None) -> FboResult:
        """The :class:`FboResult` of the records produced so far (or of iterations 0..``upto``), with every
        agent's queries up to there; ``stopped`` says why a run ended early (``FboResult.stopped``)."""
        records = self._records if upto is None else self._records[:int(upto) + 1]
        own = self.objective if isinstance(self.objective, OwnObjective) else None
        X, values, y = self._history(records[-1].iteration if records else None)
        if own is not None:          # the function's own box and units (the engine maximises sign * f on [0, 1]^D)
            sign = -1.0 if own.minimise else 1.0
            X, values, y = own.to_box(X), sign * values, sign * y
        return FboResult(config=self.config, records=list(records), n_agents=self.n_agents, delta=self.delta,
                         z=self.z, budget_reached_at=self.budget_reached_at, wall_seconds=self._seconds,
                         metric_label=self.metric_label, objective=own.name if own is not None else None,
                         X=X, y=y, values=values, minimise=bool(own is not None and own.minimise), stopped=stopped)

    def _history(self, iteration: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The queries up to the end of ``iteration`` (None: none yet) of every run and agent."""
        pool = getattr(self, "pool", None)
        if iteration is None or pool is None:
            R, N, D = self.config.runs, self.n_agents if pool is None else pool.n_agents, self.objective.dim
            return np.zeros((R, N, 0, D)), np.zeros((R, N, 0)), np.zeros((R, N, 0))
        return pool.history(self.config.n_init + int(iteration))

    @property
    def records(self) -> list[IterationRecord]:
        return list(self._records)

    # ------------------------------------------------------------------ the algorithm
    def _initialise(self) -> IterationRecord:
        cfg, rng, N = self.config, self._rng, self.n_agents
        R = cfg.runs
        features = sample_features(R, self.objective.dim, cfg.features, self.lengthscale, rng)
        self.subregions = Subregions(self.P, self.objective.dim)
        self.assignment = self.subregions.assign(N)
        checkpoint()
        self.domain = make_domain(self.objective, features, self.subregions)
        checkpoint()
        self._variant = cfg.fts_variant if cfg.algorithm == "fts" else None
        self.target_setting = None
        if cfg.in_target_setting:
            # The FTS paper's setting: the other agents finish first and send their messages
            # (engine.fbo.target); the pool below holds the target agents only.
            self.target_setting = TargetSetting(cfg, self.objective, features, self.subregions,
                                         lambda domain, capacity, sends: self._agent_pool(sends, domain, capacity))
            self.domain = self.target_setting.target_domain
            self.assignment = self.subregions.assign(self.domain.n_agents)

        self.pool = self._agent_pool(sends=cfg.uses_server or self._variant == "concurrent")
        checkpoint()
        local = cfg.uses_de and cfg.local_exploration and self.P > 1
        # In the FTS paper's setting the targets' initial inputs come from their own stream, so lines that
        # differ in M (whose random features are drawn first) still start from the same inputs: paired runs.
        # App. D.2.1's general setting (concurrent FTS) draws them the same way, to pair it with the simple one.
        own_stream = self.target_setting is not None or self._variant == "concurrent"
        init_rng = np.random.default_rng([cfg.seed, INITIAL_STREAM]) if own_stream else rng
        self.pool.initialise(self.assignment if local else None, cfg.n_init, init_rng)
        checkpoint()
        self._t = 0
        self._draw_vectors(0)
        return IterationRecord(algorithm=cfg.algorithm, iteration=0, metric=self.pool.metric,
                               epsilon=0.0 if cfg.is_private else None)

    def _agent_pool(self, sends: bool, domain=None, capacity: int | None = None) -> AgentPool:
        cfg = self.config
        capacity = cfg.n_init + cfg.iterations if capacity is None else capacity
        return AgentPool(domain or self.domain, capacity, shared_noise_var=self.noise_var, sends=sends,
                         own_sampler=cfg.own_sampler, own_features=cfg.own_features,
                         own_prior=tuple(self.objective.own_gp_prior), refit_every=self.refit_every)

    def _needs_sent_vectors(self, t: int) -> bool:
        """Whether the agents' omega after iteration t is used by someone else in iteration t + 1."""
        if self._variant == "concurrent":
            return True
        return self.config.uses_server and t + 1 <= self.releases_allowed

    def _draw_vectors(self, t: int) -> None:
        """After iteration t: the omega each agent sends (sampled from its shared-feature posterior)."""
        self._sent = None
        if t < self.config.iterations and self._needs_sent_vectors(t):
            self._sent = self.pool.sample_shared(self._rng, 1)[:, :, 0]

    def _iterate(self, t: int) -> IterationRecord:
        cfg, rng = self.config, self._rng
        R, N = cfg.runs, self.pool.n_agents
        p_other = one_minus_pt(cfg.pt_schedule, t, constant=cfg.pt_constant)
        use_other = np.zeros((R, N), dtype=bool)
        borrowed = step = weights = None

        if cfg.uses_server and t <= self.releases_allowed:
            weights = region_weights(self.assignment, self.P, t, a=cfg.weight_a, schedule=cfg.weight_schedule,
                                        mode=cfg.weights)
            step = aggregate_batch(self._sent, weights, q=cfg.q, z=self.z, S=cfg.S, rng=rng,
                                   private=cfg.is_private, sampling=cfg.sampling, **self.server_options)
            use_other = rng.random((R, N)) < p_other
        elif self._variant == "concurrent":
            # App. D.2.1's general setting: every agent is a target and borrows the current omega of a
            # uniformly drawn other agent; p_1 = p_2 as in Sec. 5.
            use_other = rng.random((R, N)) < one_minus_pt(cfg.pt_schedule, max(t, 2), constant=cfg.pt_constant)
            partner = (np.arange(N) + rng.integers(1, N, size=(R, N))) % N          # uniform over the others
            borrowed = np.take_along_axis(self._sent, partner[:, :, None], axis=1)
        # A checkpoint between the stages of an iteration: with many agents each takes a good part of a second.
        checkpoint()
        candidates = self.domain.candidates(rng)
        if self.target_setting is not None:
            index = self.target_setting.choose(t, self.pool, candidates, rng)
        else:
            index = self.pool.own_choice(candidates, rng, ~use_other)                # (R, N)
        checkpoint()
        if borrowed is not None:
            index = np.where(use_other, AgentPool.acquire(candidates.phi, borrowed), index)
        if step is not None:
            # argmax_x phi(x)^T omega^(i[x]): score every candidate with its own sub-region's vector.
            # Only each candidate's own sub-region is scored: R C M work, never the (R, P, C) table; one run
            # at a time, so the gathered (C, M) vectors stay in the cache (3x faster, the same numbers).
            shared = np.empty(R, dtype=np.intp)
            for r in range(R):
                own_vector = step.broadcast[r:r + 1, candidates.region, :]                # (1, C, M)
                shared[r] = np.argmax(np.einsum("rcm,rcm->rc", own_vector, candidates.phi[r:r + 1])[0])
            index = np.where(use_other, shared[:, None], index)
        index = self.pool.avoid_repeats(index, rng)
        checkpoint()
        self.pool.query(self._choice(candidates, index, use_other, step, t), rng)
        checkpoint()
        self._t = t
        self._draw_vectors(t)
        return self._record(t, step, weights, use_other)

    def _choice(self, candidates, index: np.ndarray, use_other: np.ndarray, step, t: int):
        """The points the agents query in iteration t: the chosen candidates (engine.fbo.refine refines them)."""
        return self.domain.to_choice(candidates, index)

    def _record(self, t: int, step, weights, use_other: np.ndarray | None = None) -> IterationRecord:
        cfg = self.config
        record = IterationRecord(algorithm=cfg.algorithm, iteration=t, metric=self.pool.metric,
                                 released=step is not None, weights=weights)
        if cfg.is_private:
            spent = min(t, self.releases_allowed)
            record.epsilon = float(self.epsilon_curve[spent - 1]) if spent else 0.0
        if step is not None:
            record.n_selected = step.n_selected
            if cfg.is_private:
                n_selected = int(step.selected.sum())
                record.clipped_fraction = float(step.clipped.sum() / n_selected) if n_selected else None
            record.server_step = step.run(0)
            record.broadcast_norm = np.linalg.norm(step.broadcast.reshape(len(step.broadcast), -1), axis=1)
            if use_other is not None:
                record.used_broadcast = use_other.sum(axis=1)
        return record


def run_fbo(config: FboConfig, objective: Objective | None = None) -> FboResult:
    """Run a federated BO experiment to the end and return its result."""
    sim = Simulation(config, objective)
    for _ in sim:
        pass
    return sim.result()
