"""Where agents look for their next query: a finite table or the continuous box.

Both kinds expose the same three operations, so the simulation never asks which
it has: a candidate set with its features and sub-regions (the acquisition is
maximised over it), the initial points of every agent, and the features and
noiseless values of chosen points.

A table objective uses its own candidates, whose features are computed once.
A continuous objective (FunctionObjective) is maximised over a fresh set of
``CONTINUOUS_CANDIDATES`` uniform points per iteration, shared by all agents and
runs (the paper's own implementation also starts from 1000 random points,
App. B.2.6; we skip its L-BFGS-B refinement).
"""

from __future__ import annotations

import numpy as np

from engine.fbo.subregions import Subregions
from engine.objectives.base import Objective
from engine.surrogate import RandomFeatures

CONTINUOUS_CANDIDATES = 1000


class Domain:
    """Candidates, initial points and queries for R runs x N agents."""

    def __init__(self, objective: Objective, features: RandomFeatures, subregions: Subregions):
        self.objective = objective
        self.features = features
        self.subregions = subregions
        self.n_runs = features.n_sets
        self.n_agents = objective.n_agents
        self._agents = np.broadcast_to(np.arange(self.n_agents), (self.n_runs, self.n_agents))

    def candidates(self, rng: np.random.Generator):
        """(X (C, D), phi (R, C, M), sub-region (C,)) to maximise over in this iteration."""
        raise NotImplementedError

    def initial_choice(self, regions: np.ndarray | None, n: int, rng: np.random.Generator):
        """``n`` initial points per agent, from its sub-region (``regions`` (N,)) or
        from the whole domain (``regions`` None)."""
        raise NotImplementedError

    def to_choice(self, X: np.ndarray, index: np.ndarray):
        """Turn indices into the current candidate set into the domain's point representation."""
        raise NotImplementedError

    def evaluate(self, choice) -> tuple[np.ndarray, np.ndarray]:
        """Features (R, N, ..., M) and noiseless values (R, N, ...) of chosen points."""
        raise NotImplementedError


class TableDomain(Domain):
    """Points are indices into the objective's candidate table."""

    def __init__(self, objective, features, subregions):
        super().__init__(objective, features, subregions)
        self.X = np.asarray(objective.candidates, dtype=float)
        self.phi = features(self.X)                        # (R, C, M), computed once
        self.region = subregions.index(self.X)             # (C,)

    def candidates(self, rng):
        return self.X, self.phi, self.region

    def initial_choice(self, regions, n, rng):
        if regions is None:
            regions = np.zeros(self.n_agents, dtype=int)
            region_of_candidates = np.zeros(len(self.X), dtype=int)
        else:
            region_of_candidates = self.region
        regions = np.broadcast_to(regions, (self.n_runs, self.n_agents))
        return self.subregions.sample_candidates(region_of_candidates, regions, n, rng)  # (R, N, n)

    def to_choice(self, X, index):
        return index

    def evaluate(self, choice):
        choice = np.asarray(choice)
        runs = np.arange(self.n_runs).reshape((-1,) + (1,) * (choice.ndim - 1))
        phi = self.phi[runs, choice]
        agents = np.broadcast_to(self._agents.reshape(self._agents.shape + (1,) * (choice.ndim - 2)), choice.shape)
        values = self.objective.value(agents.ravel(), choice.ravel()).reshape(choice.shape)
        return phi, values


class ContinuousDomain(Domain):
    """Points are coordinates in [0, 1]^D; candidates are redrawn every iteration."""

    def __init__(self, objective, features, subregions, n_candidates: int = CONTINUOUS_CANDIDATES):
        super().__init__(objective, features, subregions)
        self.n_candidates = n_candidates

    def candidates(self, rng):
        X = rng.random((self.n_candidates, self.objective.dim))
        return X, self.features(X), self.subregions.index(X)

    def initial_choice(self, regions, n, rng):
        if regions is None:
            return rng.random((self.n_runs, self.n_agents, n, self.objective.dim))
        regions = np.broadcast_to(regions, (self.n_runs, self.n_agents))
        return self.subregions.sample_points(regions, n, rng)  # (R, N, n, D)

    def to_choice(self, X, index):
        return X[index]

    def evaluate(self, choice):
        choice = np.asarray(choice, dtype=float)
        phi = self.features(choice)
        lead = choice.shape[:-1]
        agents = np.broadcast_to(self._agents.reshape(self._agents.shape + (1,) * (len(lead) - 2)), lead)
        values = self.objective.value(agents.ravel(), choice.reshape(-1, choice.shape[-1])).reshape(lead)
        return phi, values


def make_domain(objective: Objective, features: RandomFeatures, subregions: Subregions) -> Domain:
    cls = TableDomain if objective.is_discrete else ContinuousDomain
    return cls(objective, features, subregions)
