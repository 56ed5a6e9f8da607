"""Federated Bayesian optimisation: TS, FTS, FTS-DE, DP-FTS and DP-FTS-DE (vectorised over runs and agents)."""

from engine.fbo.config import ALGORITHMS, FboConfig
from engine.fbo.records import FboResult, IterationRecord, ServerStep
from engine.fbo.simulation import Simulation, run_fbo

__all__ = ["ALGORITHMS", "FboConfig", "FboResult", "IterationRecord", "ServerStep", "Simulation", "run_fbo"]
