"""GP surrogate with random Fourier features: features shared by all agents and
a Bayesian linear regression posterior kept for many agents at once."""

from engine.surrogate.blr import BatchedBlr
from engine.surrogate.rff import RandomFeatures, sample_features

__all__ = ["BatchedBlr", "RandomFeatures", "sample_features"]
