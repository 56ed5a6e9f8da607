"""Where agents look for their next query: a finite table or the continuous box.

Both kinds expose the same operations, so the simulation never asks which it
has: a candidate set (the acquisition is maximised over it) with its
sub-regions, its shape for the agents' own GP samples
(:mod:`engine.surrogate.candidates`) and, only when something is scored with
the shared random features, those features; the initial points of every
agent; and the coordinates, shared features and noiseless values of chosen
points.

A table objective uses its own candidates, whose shared features are computed
once, on first use. A continuous objective (FunctionObjective) is maximised over a
fresh set of ``CONTINUOUS_CANDIDATES`` uniform points per iteration, shared by
all agents and runs (the paper's own implementation also starts from 1000
random points, App. B.2.6; we skip its L-BFGS-B refinement).
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from engine.fbo.subregions import Subregions
from engine.objectives.base import Objective
from engine.surrogate import RandomFeatures
from engine.surrogate.candidates import CandidateSet, PointCandidates, candidate_set

CONTINUOUS_CANDIDATES = 1000


class Candidates:
    """One iteration's candidate points: coordinates X (C, D), sub-region (C,), the set the own GPs
    are sampled on, and (lazily) the shared features phi (R, C, M)."""

    def __init__(self, X: np.ndarray, region: np.ndarray, points: CandidateSet, features: RandomFeatures):
        self.X = X
        self.region = region
        self.points = points
        self._features = features

    @cached_property
    def phi(self) -> np.ndarray:
        return self._features(self.X)


class Domain:
    """Candidates, initial points and queries for R runs x N agents."""

    def __init__(self, objective: Objective, features: RandomFeatures, subregions: Subregions,
                 agents: np.ndarray | None = None):
        self.objective = objective
        self.features = features
        self.subregions = subregions
        self.n_runs = features.n_sets
        # The objective's agents this domain serves (all by default; the FTS paper's setting keeps its
        # target agents and the other agents in two domains of one objective).
        self.agent_ids = np.arange(objective.n_agents) if agents is None else np.asarray(agents, dtype=int)
        self.n_agents = len(self.agent_ids)
        self._agents = np.broadcast_to(self.agent_ids, (self.n_runs, self.n_agents))

    def candidates(self, rng: np.random.Generator) -> Candidates:
        """The candidates to maximise over in this iteration."""
        raise NotImplementedError

    def initial_choice(self, regions: np.ndarray | None, n: int, rng: np.random.Generator):
        """``n`` initial points per agent, from its sub-region (``regions`` (N,)) or
        from the whole domain (``regions`` None)."""
        raise NotImplementedError

    def to_choice(self, candidates: Candidates, index: np.ndarray):
        """Turn indices into the candidate set into the domain's point representation."""
        raise NotImplementedError

    def coordinates(self, choice) -> np.ndarray:
        """Coordinates in [0, 1]^D of chosen points, (R, N, ..., D)."""
        raise NotImplementedError

    def features_at(self, choice) -> np.ndarray:
        """Shared features of chosen points, (R, N, ..., M)."""
        raise NotImplementedError

    def evaluate(self, choice) -> np.ndarray:
        """Noiseless values of chosen points, (R, N, ...)."""
        raise NotImplementedError

    def _agents_for(self, lead: tuple) -> np.ndarray:
        """The agent index of every chosen point, for points of leading shape (R, N, ...)."""
        return np.broadcast_to(self._agents.reshape(self._agents.shape + (1,) * (len(lead) - 2)), lead)


class TableDomain(Domain):
    """Points are indices into the objective's candidate table."""

    def __init__(self, objective, features, subregions, agents=None):
        super().__init__(objective, features, subregions, agents)
        self.X = np.asarray(objective.candidates, dtype=float)
        self.region = subregions.index(self.X)             # (C,)
        self._candidates = Candidates(self.X, self.region, candidate_set(self.X), features)

    @property
    def phi(self) -> np.ndarray:
        """Shared features of every candidate, (R, C, M), computed once on first use."""
        return self._candidates.phi

    def candidates(self, rng):
        return self._candidates

    def initial_choice(self, regions, n, rng):
        if regions is None:
            regions = np.zeros(self.n_agents, dtype=int)
            region_of_candidates = np.zeros(len(self.X), dtype=int)
        else:
            region_of_candidates = self.region
        regions = np.broadcast_to(regions, (self.n_runs, self.n_agents))
        return self.subregions.sample_candidates(region_of_candidates, regions, n, rng)  # (R, N, n)

    def to_choice(self, candidates, index):
        return index

    def coordinates(self, choice):
        return self.X[np.asarray(choice)]

    def features_at(self, choice):
        choice = np.asarray(choice)
        runs = np.arange(self.n_runs).reshape((-1,) + (1,) * (choice.ndim - 1))
        return self.phi[runs, choice]

    def evaluate(self, choice):
        choice = np.asarray(choice)
        return self.objective.value(self._agents_for(choice.shape).ravel(), choice.ravel()).reshape(choice.shape)


class ContinuousDomain(Domain):
    """Points are coordinates in [0, 1]^D; candidates are redrawn every iteration."""

    def __init__(self, objective, features, subregions, agents=None, n_candidates: int = CONTINUOUS_CANDIDATES):
        super().__init__(objective, features, subregions, agents)
        self.n_candidates = n_candidates

    def candidates(self, rng):
        X = rng.random((self.n_candidates, self.objective.dim))
        return Candidates(X, self.subregions.index(X), PointCandidates(X), self.features)

    def initial_choice(self, regions, n, rng):
        if regions is None:
            return rng.random((self.n_runs, self.n_agents, n, self.objective.dim))
        regions = np.broadcast_to(regions, (self.n_runs, self.n_agents))
        return self.subregions.sample_points(regions, n, rng)  # (R, N, n, D)

    def to_choice(self, candidates, index):
        return candidates.X[index]

    def coordinates(self, choice):
        return np.asarray(choice, dtype=float)

    def features_at(self, choice):
        return self.features(np.asarray(choice, dtype=float))

    def evaluate(self, choice):
        choice = np.asarray(choice, dtype=float)
        lead = choice.shape[:-1]
        values = self.objective.value(self._agents_for(lead).ravel(), choice.reshape(-1, choice.shape[-1]))
        return values.reshape(lead)


def make_domain(objective: Objective, features: RandomFeatures, subregions: Subregions,
                agents: np.ndarray | None = None) -> Domain:
    cls = TableDomain if objective.is_discrete else ContinuousDomain
    return cls(objective, features, subregions, agents)
