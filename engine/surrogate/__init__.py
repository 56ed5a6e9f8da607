"""Surrogates of federated BO, kept apart on purpose.

- What crosses the wire: random Fourier features shared by all agents of a run
  (:mod:`~engine.surrogate.rff`) and the Bayesian linear regression posterior
  on them (:mod:`~engine.surrogate.blr`), whose samples omega an agent sends.
- What stays with the agent: its own exact GP posterior with fitted
  hyperparameters (:mod:`~engine.surrogate.gp`) and its Thompson samples
  (:mod:`~engine.surrogate.thompson`), evaluated on the candidate set
  (:mod:`~engine.surrogate.candidates`).

Everything is batched over K models (runs x agents).
"""

from engine.surrogate.blr import BatchedBlr
from engine.surrogate.candidates import CandidateSet, GridCandidates, PointCandidates, candidate_set
from engine.surrogate.gp import SeHyperparameters, fit_hyperparameters
from engine.surrogate.rff import RandomFeatures, sample_features
from engine.surrogate.thompson import OWN_SAMPLERS, OwnGp

__all__ = ["BatchedBlr", "CandidateSet", "GridCandidates", "OWN_SAMPLERS", "OwnGp", "PointCandidates",
           "RandomFeatures", "SeHyperparameters", "candidate_set", "fit_hyperparameters", "sample_features"]
