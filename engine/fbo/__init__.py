"""Federated Bayesian optimisation: TS, FTS, FTS-DE, DP-FTS and DP-FTS-DE (vectorised over runs and agents).

The names below load on first use (PEP 562), so a process that needs one light
module of the package (a Flower client process: ``engine.fbo.schedules``,
``engine.fbo.subregions``) does not import the simulation and the accountants.
"""

import importlib

_EXPORTS = {"ALGORITHMS": "engine.fbo.config", "FboConfig": "engine.fbo.config", "FboResult": "engine.fbo.records",
            "IterationRecord": "engine.fbo.records", "ServerStep": "engine.fbo.records",
            "Simulation": "engine.fbo.simulation", "run_fbo": "engine.fbo.simulation"}

__all__ = ["ALGORITHMS", "FboConfig", "FboResult", "IterationRecord", "ServerStep", "Simulation", "run_fbo"]


def __getattr__(name):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'engine.fbo' has no attribute {name!r}")
